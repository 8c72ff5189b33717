#include "netns/tls_ca.h"
#include "netns/tls_io.h"
#include "netns/tls_leaf.h"
#include "netns/tls_trust.h"
#include "netns/tls_upstream.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/pem.h>
#include <openssl/x509v3.h>

static char tmp[] = "/tmp/test-tls-ca-XXXXXX";

static void make_tmp(void)
{
        cr_assert_not_null(mkdtemp(tmp));
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        return remove(path);
}

static void remove_tmp(void)
{
        nftw(tmp, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(tls, .init = make_tmp, .fini = remove_tmp);

static char *tmp_path(const char *rel)
{
        char *p = NULL;
        cr_assert_geq(asprintf(&p, "%s/%s", tmp, rel), 0);
        return p;
}

static struct tls_ca *open_ca(const char *dir, bool create)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct tls_ca *ca = NULL;
        cr_assert_eq(tls_ca_open(dir, create, &ca, &err), 0, "%s", err ? err->msg : "?");
        return ca;
}

/* The message of a refused tls_ca_open(). */
static char *refused(const char *dir, bool create)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct tls_ca *ca = NULL;
        cr_assert_lt(tls_ca_open(dir, create, &ca, &err), 0);
        cr_assert_null(ca);
        cr_assert_not_null(err);
        return strdup(err->msg);
}

static mode_t mode_of(const char *path)
{
        struct stat st;
        cr_assert_eq(lstat(path, &st), 0, "%s", path);
        return st.st_mode & 07777;
}

static struct egress_host host_of(const char *text)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct egress_host h;
        cr_assert_eq(egress_host_canon(text, strlen(text), &h, &err), 0, "%s", text);
        return h;
}

Test(tls, ca_made_on_first_use_private_and_reloaded)
{
        _cleanup_free_ char *dir = tmp_path("state/umwelt/ca");
        _cleanup_free_ char *key = tmp_path("state/umwelt/ca/ca.key");
        _cleanup_free_ char *crt = tmp_path("state/umwelt/ca/ca.crt");
        struct tls_ca *made = open_ca(dir, true);
        cr_assert_eq(mode_of(dir), 0700);
        cr_assert_eq(mode_of(key), 0600);
        cr_assert_eq(mode_of(crt), 0644);

        struct tls_ca *again = open_ca(dir, false);
        cr_assert_eq(X509_cmp(tls_ca_cert(made), tls_ca_cert(again)), 0);
        cr_assert_eq(EVP_PKEY_eq(tls_ca_key(made), tls_ca_key(again)), 1);
        cr_assert(EVP_PKEY_is_a(tls_ca_key(made), "EC"));
        char group[32] = "";
        cr_assert_eq(
            EVP_PKEY_get_utf8_string_param(tls_ca_key(made), "group", group, sizeof(group), NULL),
            1);
        cr_assert_str_eq(group, "prime256v1");
        tls_ca_free(made);
        tls_ca_free(again);
}

Test(tls, ca_never_overwritten)
{
        _cleanup_free_ char *dir = tmp_path("ca");
        _cleanup_free_ char *key = tmp_path("ca/ca.key");
        tls_ca_free(open_ca(dir, true));
        _cleanup_free_ char *before = NULL, *after = NULL;
        size_t n1 = 0, n2 = 0;
        cr_assert_eq(umw_read_file_at(AT_FDCWD, key, 65536, &before, &n1, NULL), 0);
        struct stat st1, st2;
        cr_assert_eq(stat(key, &st1), 0);
        tls_ca_free(open_ca(dir, true));
        cr_assert_eq(umw_read_file_at(AT_FDCWD, key, 65536, &after, &n2, NULL), 0);
        cr_assert_eq(stat(key, &st2), 0);
        cr_assert_eq(n1, n2);
        cr_assert_eq(memcmp(before, after, n1), 0);
        cr_assert_eq(st1.st_ino, st2.st_ino);
}

Test(tls, ca_certificate_made_from_a_key_left_alone)
{
        _cleanup_free_ char *dir = tmp_path("ca");
        _cleanup_free_ char *crt = tmp_path("ca/ca.crt");
        struct tls_ca *first = open_ca(dir, true);
        cr_assert_eq(unlink(crt), 0);
        struct tls_ca *second = open_ca(dir, true);
        cr_assert_eq(EVP_PKEY_eq(tls_ca_key(first), tls_ca_key(second)), 1);
        cr_assert_neq(X509_cmp(tls_ca_cert(first), tls_ca_cert(second)), 0);
        tls_ca_free(first);
        tls_ca_free(second);
}

Test(tls, ca_missing_without_create_names_the_directory)
{
        _cleanup_free_ char *dir = tmp_path("nothing/ca");
        _cleanup_free_ char *msg = refused(dir, false);
        cr_assert(strstr(msg, dir), "%s", msg);
        cr_assert(strstr(msg, "does not exist"), "%s", msg);
        cr_assert_neq(access(dir, F_OK), 0);
}

Test(tls, ca_refuses_a_key_others_can_read)
{
        _cleanup_free_ char *dir = tmp_path("ca");
        _cleanup_free_ char *key = tmp_path("ca/ca.key");
        tls_ca_free(open_ca(dir, true));
        cr_assert_eq(chmod(key, 0640), 0);
        _cleanup_free_ char *msg = refused(dir, false);
        cr_assert(strstr(msg, "ca.key: mode 0640"), "%s", msg);
        cr_assert(strstr(msg, "expected 0600"), "%s", msg);
        _cleanup_free_ char *again = refused(dir, true);
        cr_assert_eq(mode_of(key), 0640, "a refused key is left as found");
}

Test(tls, ca_refuses_a_directory_others_can_enter)
{
        _cleanup_free_ char *dir = tmp_path("ca");
        tls_ca_free(open_ca(dir, true));
        cr_assert_eq(chmod(dir, 0755), 0);
        _cleanup_free_ char *msg = refused(dir, true);
        cr_assert(strstr(msg, "mode 0755"), "%s", msg);
}

Test(tls, ca_refuses_a_symlinked_key)
{
        _cleanup_free_ char *dir = tmp_path("ca");
        _cleanup_free_ char *key = tmp_path("ca/ca.key");
        _cleanup_free_ char *moved = tmp_path("elsewhere.key");
        tls_ca_free(open_ca(dir, true));
        cr_assert_eq(rename(key, moved), 0);
        cr_assert_eq(symlink(moved, key), 0);
        _cleanup_free_ char *msg = refused(dir, true);
        cr_assert(strstr(msg, "ca.key"), "%s", msg);
}

Test(tls, ca_refuses_a_key_of_another_owner)
{
        if (geteuid() != 0)
                cr_skip_test("needs root to give the key away");
        _cleanup_free_ char *dir = tmp_path("ca");
        _cleanup_free_ char *key = tmp_path("ca/ca.key");
        tls_ca_free(open_ca(dir, true));
        cr_assert_eq(chown(key, 65534, 65534), 0);
        _cleanup_free_ char *msg = refused(dir, false);
        cr_assert(strstr(msg, "owned by uid 65534"), "%s", msg);
}

Test(tls, ca_refuses_a_certificate_of_another_key)
{
        _cleanup_free_ char *a = tmp_path("a"), *b = tmp_path("b");
        _cleanup_free_ char *a_crt = tmp_path("a/ca.crt"), *b_crt = tmp_path("b/ca.crt");
        tls_ca_free(open_ca(a, true));
        tls_ca_free(open_ca(b, true));
        cr_assert_eq(rename(b_crt, a_crt), 0);
        _cleanup_free_ char *msg = refused(a, false);
        cr_assert(strstr(msg, "does not belong to the key"), "%s", msg);
}

Test(tls, ca_certificate_is_a_pathlen_0_ca_for_ten_years)
{
        _cleanup_free_ char *dir = tmp_path("ca");
        struct tls_ca *ca = open_ca(dir, true);
        X509 *c = tls_ca_cert(ca);
        cr_assert_eq(X509_check_ca(c), 1);
        cr_assert_eq(X509_get_pathlen(c), 0);
        int crit = -1;
        BASIC_CONSTRAINTS *bc = X509_get_ext_d2i(c, NID_basic_constraints, &crit, NULL);
        cr_assert_not_null(bc);
        cr_assert(bc->ca);
        cr_assert_eq(crit, 1);
        BASIC_CONSTRAINTS_free(bc);
        cr_assert_eq(X509_get_key_usage(c), KU_KEY_CERT_SIGN | KU_CRL_SIGN);
        cr_assert(X509_get_extension_flags(c) & EXFLAG_SS);
        cr_assert_eq(X509_verify(c, tls_ca_key(ca)), 1);
        cr_assert_eq(X509_get_ext_by_NID(c, NID_name_constraints, -1), -1);
        int days = 0, secs = 0;
        cr_assert_eq(ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(c), X509_get0_notAfter(c)),
                     1);
        cr_assert(days >= TLS_CA_DAYS && days <= TLS_CA_DAYS + 1, "%d days", days);
        tls_ca_free(ca);
}

/* X509_verify_cert() as a strict client does it (Python 3.13 sets
 * X509_STRICT): the chain to the CA alone, for a TLS server. */
static int verify_leaf(X509 *ca, X509 *leaf, long *why)
{
        X509_STORE *store = X509_STORE_new();
        X509_STORE_CTX *ctx = X509_STORE_CTX_new();
        cr_assert_eq(X509_STORE_add_cert(store, ca), 1);
        cr_assert_eq(X509_STORE_CTX_init(ctx, store, leaf, NULL), 1);
        X509_STORE_CTX_set_flags(ctx, X509_V_FLAG_X509_STRICT);
        cr_assert_eq(X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER), 1);
        int ok = X509_verify_cert(ctx);
        *why = X509_STORE_CTX_get_error(ctx);
        X509_STORE_CTX_free(ctx);
        X509_STORE_free(store);
        return ok;
}

/* A CA in the test's directory and a leaf key. */
struct signer {
        char *dir;
        struct tls_ca *ca;
        EVP_PKEY *key;
};

static void signer_open(struct signer *s, const char *name)
{
        s->dir = tmp_path(name);
        s->ca = open_ca(s->dir, true);
        s->key = EVP_EC_gen("P-256");
        cr_assert_not_null(s->key);
}

static void signer_close(struct signer *s)
{
        EVP_PKEY_free(s->key);
        tls_ca_free(s->ca);
        free(s->dir);
}

static X509 *make_leaf(const struct signer *s, const char *host)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct egress_host h = host_of(host);
        X509 *leaf = NULL;
        cr_assert_eq(tls_leaf_make(tls_ca_cert(s->ca), tls_ca_key(s->ca), s->key, &h, time(NULL),
                                   &leaf, &err),
                     0, "%s", err ? err->msg : "?");
        return leaf;
}

static void assert_verifies(const struct signer *s, X509 *leaf)
{
        long why = 0;
        cr_assert_eq(verify_leaf(tls_ca_cert(s->ca), leaf, &why), 1, "%s",
                     X509_verify_cert_error_string(why));
}

Test(tls, leaf_verifies_against_the_ca_for_its_host_only)
{
        struct signer s, other;
        signer_open(&s, "ca");
        X509 *leaf = make_leaf(&s, "API.Example.com.");
        assert_verifies(&s, leaf);
        cr_assert_eq(X509_check_host(leaf, "api.example.com", 0, 0, NULL), 1);
        cr_assert_neq(X509_check_host(leaf, "example.com", 0, 0, NULL), 1);
        cr_assert_neq(X509_check_host(leaf, "evil.api.example.com", 0, 0, NULL), 1);
        cr_assert_eq(X509_check_ca(leaf), 0);
        cr_assert_eq(X509_get_extended_key_usage(leaf), XKU_SSL_SERVER);
        cr_assert_eq(X509_get_key_usage(leaf), KU_DIGITAL_SIGNATURE);

        GENERAL_NAMES *san = X509_get_ext_d2i(leaf, NID_subject_alt_name, NULL, NULL);
        cr_assert_eq(sk_GENERAL_NAME_num(san), 1);
        int type = 0;
        ASN1_IA5STRING *dns = GENERAL_NAME_get0_value(sk_GENERAL_NAME_value(san, 0), &type);
        cr_assert_eq(type, GEN_DNS);
        cr_assert_eq(ASN1_STRING_length(dns), (int)strlen("api.example.com"));
        cr_assert_eq(memcmp(ASN1_STRING_get0_data(dns), "api.example.com", 15), 0);
        GENERAL_NAMES_free(san);

        /* Another CA's leaf does not verify against this one. */
        signer_open(&other, "other");
        X509 *stranger = make_leaf(&other, "api.example.com");
        long why = 0;
        cr_assert_neq(verify_leaf(tls_ca_cert(s.ca), stranger, &why), 1);
        X509_free(stranger);
        X509_free(leaf);
        signer_close(&other);
        signer_close(&s);
}

Test(tls, leaf_short_validity_and_random_serial)
{
        struct signer s;
        signer_open(&s, "ca");
        X509 *a = make_leaf(&s, "example.com"), *b = make_leaf(&s, "example.com");
        cr_assert_neq(ASN1_INTEGER_cmp(X509_get0_serialNumber(a), X509_get0_serialNumber(b)), 0);
        cr_assert_eq(ASN1_STRING_length(X509_get0_serialNumber(a)), 16);
        int days = 0, secs = 0;
        cr_assert_eq(ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(a), X509_get0_notAfter(a)),
                     1);
        cr_assert_eq(days * 86400 + secs, TLS_LEAF_HOURS * 3600 + 60);
        cr_assert_lt(X509_cmp_current_time(X509_get0_notBefore(a)), 0);
        cr_assert_gt(X509_cmp_current_time(X509_get0_notAfter(a)), 0);
        X509_free(a);
        X509_free(b);
        signer_close(&s);
}

Test(tls, leaf_for_an_address_has_an_ip_san)
{
        struct signer s;
        signer_open(&s, "ca");
        const char *const hosts[][2] = {{"0xc0000207", "192.0.2.7"},
                                        {"[2001:db8::7]", "2001:db8::7"}};
        for (size_t i = 0; i < 2; i++) {
                X509 *leaf = make_leaf(&s, hosts[i][0]);
                assert_verifies(&s, leaf);
                cr_assert_eq(X509_check_ip_asc(leaf, hosts[i][1], 0), 1, "%s", hosts[i][1]);
                cr_assert_neq(X509_check_host(leaf, hosts[i][1], 0, 0, NULL), 1);
                X509_free(leaf);
        }
        signer_close(&s);
}

Test(tls, leaf_for_a_long_name_has_no_common_name)
{
        struct signer s;
        signer_open(&s, "ca");
        const char *name =
            "a-rather-long-label-for-a-host-name.that-goes-past-sixty-four.example.com";
        X509 *leaf = make_leaf(&s, name);
        assert_verifies(&s, leaf);
        cr_assert_eq(X509_check_host(leaf, name, 0, 0, NULL), 1);
        cr_assert_eq(X509_NAME_get_index_by_NID(X509_get_subject_name(leaf), NID_commonName, -1),
                     -1);
        X509_free(leaf);
        signer_close(&s);
}

static ASN1_INTEGER *leaf_serial(struct tls_term *t, const char *host)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct egress_host h = host_of(host);
        X509 *leaf = NULL;
        cr_assert_eq(tls_term_leaf(t, &h, &leaf, &err), 0, "%s", err ? err->msg : "?");
        return ASN1_INTEGER_dup(X509_get0_serialNumber(leaf));
}

static bool same_serial(ASN1_INTEGER *a, ASN1_INTEGER *b)
{
        bool same = ASN1_INTEGER_cmp(a, b) == 0;
        ASN1_INTEGER_free(b);
        return same;
}

Test(tls, leaf_cache_bounded_least_recently_used_out)
{
        _cleanup_free_ char *dir = tmp_path("ca");
        struct tls_ca *ca = open_ca(dir, true);
        _cleanup_error_ struct umw_error *err = NULL;
        struct tls_term *t = NULL;
        cr_assert_eq(tls_term_new(ca, 2, &t, &err), 0);
        tls_ca_free(ca); /* the term holds its own references */
        ASN1_INTEGER *a = leaf_serial(t, "a.example"), *b = leaf_serial(t, "b.example");
        cr_assert(same_serial(a, leaf_serial(t, "A.example.")));
        ASN1_INTEGER *c = leaf_serial(t, "c.example"); /* b was used least recently */
        cr_assert(same_serial(a, leaf_serial(t, "a.example")));
        cr_assert(same_serial(c, leaf_serial(t, "c.example")));
        cr_assert_not(same_serial(b, leaf_serial(t, "b.example")));
        ASN1_INTEGER_free(a);
        ASN1_INTEGER_free(b);
        ASN1_INTEGER_free(c);
        tls_term_free(t);
}

static char *slurp(const char *path, size_t *len)
{
        char *buf = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(umw_read_file_at(AT_FDCWD, path, 1 << 24, &buf, len, &err), 0, "%s",
                     err ? err->msg : "?");
        return buf;
}

static char *ca_pem(struct tls_ca *ca)
{
        BIO *bio = BIO_new(BIO_s_mem());
        cr_assert_eq(PEM_write_bio_X509(bio, tls_ca_cert(ca)), 1);
        char *p = NULL;
        long n = BIO_get_mem_data(bio, &p);
        char *copy = strndup(p, (size_t)n);
        BIO_free(bio);
        return copy;
}

static void write_text(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");
        cr_assert_not_null(f);
        cr_assert_geq(fputs(text, f), 0);
        fclose(f);
}

Test(tls, trust_bundle_is_the_roots_then_the_ca)
{
        _cleanup_free_ char *dir = tmp_path("ca"), *other_dir = tmp_path("roots-ca");
        _cleanup_free_ char *roots = tmp_path("roots.pem"), *trust = tmp_path("state/trust");
        _cleanup_free_ char *bundle = tmp_path("state/trust/ca-bundle.crt");
        _cleanup_free_ char *own = tmp_path("state/trust/umwelt-ca.crt");
        struct tls_ca *ca = open_ca(dir, true), *root = open_ca(other_dir, true);
        _cleanup_free_ char *root_pem = ca_pem(root), *ca_text = ca_pem(ca);
        /* No newline at the end of the roots: the bundle adds one. */
        root_pem[strlen(root_pem) - 1] = '\0';
        write_text(roots, root_pem);

        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(tls_trust_write(ca, roots, trust, &err), 0, "%s", err ? err->msg : "?");
        size_t n = 0;
        _cleanup_free_ char *got = slurp(bundle, &n), *got_own = slurp(own, &n);
        _cleanup_free_ char *want = NULL;
        cr_assert_geq(asprintf(&want, "%s\n%s", root_pem, ca_text), 0);
        cr_assert_str_eq(got, want);
        cr_assert_str_eq(got_own, ca_text);
        cr_assert_eq(mode_of(trust), 0755);
        cr_assert_eq(mode_of(bundle), 0644);

        /* Unchanged content is not written again. */
        struct stat st1, st2;
        cr_assert_eq(stat(bundle, &st1), 0);
        cr_assert_eq(tls_trust_write(ca, roots, trust, &err), 0);
        cr_assert_eq(stat(bundle, &st2), 0);
        cr_assert_eq(st1.st_ino, st2.st_ino);
        tls_ca_free(ca);
        tls_ca_free(root);
}

Test(tls, trust_bundle_refuses_roots_without_certificates)
{
        _cleanup_free_ char *dir = tmp_path("ca"), *roots = tmp_path("roots.pem");
        _cleanup_free_ char *trust = tmp_path("trust");
        struct tls_ca *ca = open_ca(dir, true);
        write_text(roots, "not a certificate\n");
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(tls_trust_write(ca, roots, trust, &err), 0);
        cr_assert(strstr(err->msg, "roots.pem: expected PEM certificates"), "%s", err->msg);
        cr_assert_neq(access(trust, F_OK), 0, "nothing written");
        tls_ca_free(ca);
}

Test(tls, trust_env_points_each_stack_at_its_file)
{
        char **env = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(tls_trust_env(NULL, &env, &err), 0);
        const char *want[] = {
            "SSL_CERT_FILE=/run/umwelt/tls/ca-bundle.crt",
            "CURL_CA_BUNDLE=/run/umwelt/tls/ca-bundle.crt",
            "REQUESTS_CA_BUNDLE=/run/umwelt/tls/ca-bundle.crt",
            "GIT_SSL_CAINFO=/run/umwelt/tls/ca-bundle.crt",
            "NODE_EXTRA_CA_CERTS=/run/umwelt/tls/umwelt-ca.crt",
        };
        for (size_t i = 0; i < 5; i++)
                cr_assert_str_eq(env[i], want[i]);
        cr_assert_null(env[5]);
        tls_trust_env_free(env);
}

/* Both ends of a terminated connection in one process over a socketpair:
 * the gateway's leaf on one side, its upstream client (trusting the CA file)
 * on the other, both non-blocking. */
struct pair {
        int fds[2];
        struct tls_term *term;
        struct tls_upstream *up;
        SSL *server, *client;
};

static void pair_open(struct pair *p, const char *ca_dir)
{
        _cleanup_error_ struct umw_error *err = NULL;
        _cleanup_free_ char *crt = NULL;
        cr_assert_geq(asprintf(&crt, "%s/ca.crt", ca_dir), 0);
        struct tls_ca *ca = open_ca(ca_dir, true);
        cr_assert_eq(tls_term_new(ca, 0, &p->term, &err), 0, "%s", err ? err->msg : "?");
        tls_ca_free(ca);
        cr_assert_eq(tls_upstream_new(crt, &p->up, &err), 0, "%s", err ? err->msg : "?");
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, p->fds), 0);
}

static void pair_close(struct pair *p)
{
        SSL_free(p->server);
        SSL_free(p->client);
        tls_term_free(p->term);
        tls_upstream_free(p->up);
        close(p->fds[0]);
        close(p->fds[1]);
}

/* The client's name for the server, the server's for itself: the
 * ClientHello is read off the socket first, as the gateway does, and handed
 * over as the prefix. Returns 1 when both ends finished the handshake, or
 * the first failure with its message in *why. */
static int handshake(struct pair *p, const char *client_host, const char *server_host, char **why)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct egress_host ch = host_of(client_host), sh = host_of(server_host);
        cr_assert_eq(tls_upstream_connect(p->up, p->fds[1], &ch, &p->client, &err), 0);
        uint32_t ev = 0;
        cr_assert_eq(tls_handshake(p->client, &ev, &err), 0, "the client waits for the server");
        char hello[16384];
        ssize_t n = recv(p->fds[0], hello, sizeof(hello), 0);
        cr_assert_gt(n, 5);
        cr_assert_eq(hello[0], 22, "a TLS handshake record");
        cr_assert_eq(tls_term_accept(p->term, p->fds[0], &sh, hello, (size_t)n, &p->server, &err),
                     0, "%s", err ? err->msg : "?");
        int done_s = 0, done_c = 0;
        for (int round = 0; round < 100 && !(done_s && done_c); round++) {
                int r = done_s ? 1 : tls_handshake(p->server, &ev, &err);
                if (r >= 0) {
                        done_s = r;
                        r = done_c ? 1 : tls_handshake(p->client, &ev, &err);
                        done_c = r > 0;
                }
                if (r < 0) {
                        *why = strdup(err->msg);
                        return r;
                }
        }
        return done_s && done_c;
}

static void transfer(SSL *from, SSL *to, const char *text)
{
        uint32_t ev = 0;
        cr_assert_eq(tls_write(from, text, strlen(text), &ev), (ssize_t)strlen(text));
        char buf[256] = "";
        cr_assert_eq(tls_read(to, buf, sizeof(buf) - 1, &ev), (ssize_t)strlen(text));
        cr_assert_str_eq(buf, text);
        cr_assert_eq(tls_read(to, buf, sizeof(buf), &ev), -EAGAIN);
        cr_assert_eq(ev, EPOLLIN);
}

Test(tls, terminated_handshake_with_the_hello_read_first)
{
        _cleanup_free_ char *dir = tmp_path("ca");
        struct pair p = {0};
        pair_open(&p, dir);
        _cleanup_free_ char *why = NULL;
        cr_assert_eq(handshake(&p, "API.example.com", "api.example.com", &why), 1, "%s",
                     why ? why : "no progress");
        const unsigned char *alpn = NULL;
        unsigned alpn_len = 0;
        SSL_get0_alpn_selected(p.client, &alpn, &alpn_len);
        cr_assert_eq(alpn_len, 8);
        cr_assert_eq(memcmp(alpn, "http/1.1", 8), 0);
        cr_assert_geq(SSL_version(p.client), TLS1_2_VERSION);
        transfer(p.client, p.server, "GET /repos/me/x HTTP/1.1\r\nHost: api.example.com\r\n\r\n");
        transfer(p.server, p.client, "HTTP/1.1 204 No Content\r\n\r\n");
        uint32_t ev = 0;
        cr_assert_eq(tls_shutdown(p.client, &ev), 1);
        char buf[16];
        cr_assert_eq(tls_read(p.server, buf, sizeof(buf), &ev), 0, "close_notify is an end");
        pair_close(&p);
}

Test(tls, terminated_handshake_refuses_another_sni)
{
        _cleanup_free_ char *dir = tmp_path("ca");
        struct pair p = {0};
        pair_open(&p, dir);
        _cleanup_free_ char *why = NULL;
        cr_assert_lt(handshake(&p, "evil.example", "api.example.com", &why), 0);
        cr_assert(strstr(why, "TLS handshake: callback failed"), "%s", why);
        pair_close(&p);
}

Test(tls, upstream_refuses_a_certificate_for_another_host)
{
        /* The server's leaf names api.example.com; the client dialled for
         * www.example.com: the SNI check is on the server's side, so the
         * server is told it is www.example.com and the client still checks
         * the name the certificate carries. */
        _cleanup_free_ char *dir = tmp_path("ca");
        struct pair p = {0};
        pair_open(&p, dir);
        struct egress_host api = host_of("api.example.com");
        X509 *leaf = NULL;
        cr_assert_eq(tls_term_leaf(p.term, &api, &leaf, NULL), 0);
        X509_up_ref(leaf);
        _cleanup_free_ char *why = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        struct egress_host www = host_of("www.example.com");
        cr_assert_eq(tls_upstream_connect(p.up, p.fds[1], &www, &p.client, &err), 0);
        cr_assert_eq(tls_term_accept(p.term, p.fds[0], &www, NULL, 0, &p.server, &err), 0);
        cr_assert_eq(SSL_use_certificate(p.server, leaf), 1);
        X509_free(leaf);
        uint32_t ev = 0;
        int rc = 0, rs = 0;
        for (int round = 0; round < 100 && rc == 0; round++) {
                rc = tls_handshake(p.client, &ev, &err);
                if (rs == 0)
                        rs = tls_handshake(p.server, &ev, NULL);
        }
        cr_assert_lt(rc, 0);
        cr_assert(strstr(err->msg, "hostname mismatch"), "%s", err->msg);
        pair_close(&p);
}

Test(tls, upstream_refuses_a_server_its_ca_file_does_not_vouch_for)
{
        _cleanup_free_ char *dir = tmp_path("ca"), *other = tmp_path("other");
        _cleanup_free_ char *other_crt = tmp_path("other/ca.crt");
        struct pair p = {0};
        pair_open(&p, dir);
        tls_ca_free(open_ca(other, true));
        tls_upstream_free(p.up);
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(tls_upstream_new(other_crt, &p.up, &err), 0);
        _cleanup_free_ char *why = NULL;
        cr_assert_lt(handshake(&p, "api.example.com", "api.example.com", &why), 0);
        cr_assert(strstr(why, "unable to get local issuer certificate"), "%s", why);
        pair_close(&p);
}
