#include "netns/tls_signer.h"
#include "netns/gateway_confine.h"
#include "netns/tls_ca.h"
#include "netns/tls_io.h"
#include "netns/tls_leaf.h"
#include "netns/tls_signer_msg.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#define SIGNER_FD        3
#define SIGNER_TIMEOUT_S 5 /* a signature takes a millisecond; more is a wedged signer */

struct tls_signer {
        int fd;
        pid_t pid;
        bool hello_read;
        X509 *ca_cert; /* after the hello, when the signer has a CA */
        char *error;   /* after the hello, when it has none */
};

/* ---- the signer's side ---- */

static void send_resp(int sock, enum tls_signer_status st, const void *body, size_t len)
{
        unsigned char buf[TLS_SIGNER_RESP_MAX];
        int n = tls_signer_resp_encode(st, body, len, buf, sizeof(buf));
        if (n < 0)
                n = tls_signer_resp_encode(TLS_SIGNER_REFUSED, "signer: answer too long", 23, buf,
                                           sizeof(buf));
        if (send(sock, buf, (size_t)n, MSG_NOSIGNAL) < 0) {
                /* the engine is gone: the next recv says so */
        }
}

static void send_refusal(int sock, const struct umw_error *err)
{
        send_resp(sock, TLS_SIGNER_REFUSED, err->msg, strlen(err->msg));
}

static void send_cert(int sock, X509 *x)
{
        unsigned char *der = NULL;
        int n = i2d_X509(x, &der);
        if (n <= 0)
                send_resp(sock, TLS_SIGNER_REFUSED, "signer: DER encoding", 20);
        else
                send_resp(sock, TLS_SIGNER_OK, der, (size_t)n);
        OPENSSL_free(der);
}

/* The public key must be all of the record's key bytes, and EC. */
static int read_key(const struct tls_signer_req *q, EVP_PKEY **out, struct umw_error **err)
{
        const unsigned char *p = q->key;
        EVP_PKEY *key = d2i_PUBKEY(NULL, &p, (long)q->key_len);
        if (!key || p != q->key + q->key_len || !EVP_PKEY_is_a(key, "EC")) {
                EVP_PKEY_free(key);
                return tls_fail(err, "signer request: expected an EC public key");
        }
        *out = key;
        return 0;
}

static int make_leaf(const struct tls_ca *ca, const void *buf, size_t len, X509 **out,
                     struct umw_error **err)
{
        struct tls_signer_req q;
        EVP_PKEY *key = NULL;
        int r = tls_signer_req_decode(buf, len, &q, err);
        if (r < 0 || (r = read_key(&q, &key, err)) < 0)
                return r;
        r = tls_leaf_make(tls_ca_cert(ca), tls_ca_key(ca), key, &q.host, time(NULL), out, err);
        EVP_PKEY_free(key);
        return r;
}

static void answer(int sock, const struct tls_ca *ca, const void *buf, size_t len)
{
        _cleanup_error_ struct umw_error *err = NULL;
        X509 *leaf = NULL;
        if (make_leaf(ca, buf, len, &leaf, &err) < 0) {
                send_refusal(sock, err);
                return;
        }
        send_cert(sock, leaf);
        X509_free(leaf);
}

static void serve(int sock, const struct tls_ca *ca)
{
        unsigned char buf[TLS_SIGNER_REQ_MAX];
        for (;;) {
                ssize_t n = recv(sock, buf, sizeof(buf), MSG_TRUNC);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return; /* the engine has closed its end */
                /* A record longer than the buffer was cut: its length says so
                 * and the decoder refuses it without reading past buf. */
                answer(sock, ca, buf, (size_t)n);
        }
}

/* Nothing of the parent's but the socket and the standard fds. */
static int keep_only(int sock, struct umw_error **err)
{
        if (sock != SIGNER_FD && dup3(sock, SIGNER_FD, O_CLOEXEC) < 0)
                return umw_fail_errno(err, "signer: dup3");
        if (close_range(SIGNER_FD + 1, ~0U, 0) < 0)
                return umw_fail_errno(err, "signer: close_range");
        return 0;
}

static int become_signer(pid_t parent, int sock, struct umw_error **err)
{
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                return umw_fail_errno(err, "signer: PR_SET_PDEATHSIG");
        if (getppid() != parent)
                _exit(0); /* the parent ended before the line above */
        if (prctl(PR_SET_NAME, "umwelt-signer") < 0)
                return umw_fail_errno(err, "signer: PR_SET_NAME");
        return keep_only(sock, err);
}

/* The CA, or a refusal sent as the hello. */
static int open_ca(pid_t parent, int sock, const char *dir, bool create, struct tls_ca **ca)
{
        _cleanup_error_ struct umw_error *err = NULL;
        int r;
        if ((r = become_signer(parent, sock, &err)) < 0 ||
            (r = tls_ca_open(dir, create, ca, &err)) < 0)
                send_refusal(SIGNER_FD, err);
        return r;
}

/* The signer ends with _exit: it is a fork of a process with threads (the
 * resolver's), whose exit handlers, and under ASan LeakSanitizer's scan of
 * threads that exist only in the parent, are not its own. */
static _Noreturn void signer_main(pid_t parent, int sock, const char *dir, bool create)
{
        struct umw_error *err = NULL;
        struct tls_ca *ca = NULL;
        if (open_ca(parent, sock, dir, create, &ca) < 0)
                _exit(0);
        send_cert(SIGNER_FD, tls_ca_cert(ca));
        if (gateway_confine_signer(SIGNER_FD, &err) < 0) {
                umw_log_error(err);
                umw_error_free(err);
                _exit(1); /* the engine's next request finds the socket closed */
        }
        serve(SIGNER_FD, ca);
        tls_ca_free(ca);
        _exit(0);
}

/* ---- the engine's side ---- */

int tls_signer_start(const char *ca_dir, bool create, struct tls_signer **out,
                     struct umw_error **err)
{
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return umw_fail_errno(err, "signer: socketpair");
        struct timeval tv = {.tv_sec = SIGNER_TIMEOUT_S};
        if (setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
                int e = errno;
                close(sv[0]);
                close(sv[1]);
                return umw_fail_sys(err, e, "signer: SO_RCVTIMEO");
        }
        struct tls_signer *s = calloc(1, sizeof(*s));
        pid_t parent = getpid();
        fflush(NULL); /* nothing buffered is written twice */
        pid_t pid = s ? fork() : -1;
        if (pid == 0) {
                close(sv[0]);
                signer_main(parent, sv[1], ca_dir, create);
        }
        int e = errno;
        close(sv[1]);
        if (pid < 0) {
                close(sv[0]);
                free(s);
                return umw_fail_sys(err, s ? e : ENOMEM, "signer: fork");
        }
        *s = (struct tls_signer){.fd = sv[0], .pid = pid};
        *out = s;
        return 0;
}

/* One record from the signer, decoded. */
static int recv_resp(struct tls_signer *s, unsigned char *buf, const unsigned char **body,
                     size_t *len, struct umw_error **err)
{
        ssize_t n;
        do
                n = recv(s->fd, buf, TLS_SIGNER_RESP_MAX, MSG_TRUNC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return umw_fail_errno(err, "signer");
        if (n == 0)
                return umw_fail(err, UMW_EXIT_FAILURE, EPIPE, "signer: gone");
        return tls_signer_resp_decode(buf, (size_t)n, body, len, err);
}

static int read_hello(struct tls_signer *s, struct umw_error **err)
{
        unsigned char buf[TLS_SIGNER_RESP_MAX];
        const unsigned char *der = NULL;
        size_t len = 0;
        struct umw_error *why = NULL;
        s->hello_read = true;
        int r = recv_resp(s, buf, &der, &len, &why);
        if (r == 0 && !(s->ca_cert = d2i_X509(NULL, &der, (long)len)))
                r = tls_fail(&why, "signer: the CA certificate");
        if (r < 0) {
                s->error = strdup(why->msg);
                umw_error_free(why);
                return s->error ? 0 : umw_fail_sys(err, ENOMEM, "signer");
        }
        return 0;
}

int tls_signer_ca(struct tls_signer *s, X509 **out, struct umw_error **err)
{
        int r = s->hello_read ? 0 : read_hello(s, err);
        if (r < 0)
                return r;
        if (!s->ca_cert)
                return umw_fail(err, UMW_EXIT_CONFIG, EACCES, "%s", s->error);
        *out = s->ca_cert;
        return 0;
}

static int send_req(struct tls_signer *s, EVP_PKEY *key, const struct egress_host *host,
                    struct umw_error **err)
{
        unsigned char buf[TLS_SIGNER_REQ_MAX], *der = NULL;
        int n = i2d_PUBKEY(key, &der);
        int len = n > 0 ? tls_signer_req_encode(host, der, (size_t)n, buf, sizeof(buf)) : -EINVAL;
        OPENSSL_free(der);
        if (len < 0)
                return umw_fail_sys(err, EINVAL, "signer: request for %s", host->text);
        if (send(s->fd, buf, (size_t)len, MSG_NOSIGNAL) < 0)
                return umw_fail_errno(err, "signer");
        return 0;
}

int tls_signer_leaf(struct tls_signer *s, EVP_PKEY *key, const struct egress_host *host, X509 **out,
                    struct umw_error **err)
{
        X509 *ca = NULL;
        unsigned char buf[TLS_SIGNER_RESP_MAX];
        const unsigned char *der = NULL;
        size_t len = 0;
        int r;
        if ((r = tls_signer_ca(s, &ca, err)) < 0 || (r = send_req(s, key, host, err)) < 0 ||
            (r = recv_resp(s, buf, &der, &len, err)) < 0)
                return umw_error_prefix(err, "leaf for %s", host->text);
        if (!(*out = d2i_X509(NULL, &der, (long)len)))
                return tls_fail(err, "signer: the leaf for %s", host->text);
        return 0;
}

pid_t tls_signer_pid(const struct tls_signer *s)
{
        return s->pid;
}

void tls_signer_free(struct tls_signer *s)
{
        if (!s)
                return;
        if (s->fd >= 0)
                close(s->fd);
        X509_free(s->ca_cert);
        free(s->error);
        free(s);
}
