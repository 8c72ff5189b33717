/* TLS termination in the gateway. The user's umwelt CA is opened when the
 * gateway starts, and with --trust-dir made on first use along with the
 * sandbox's trust files; without it a rule that needs a request's method
 * or path refuses the start. A CONNECT such a rule decides is answered by
 * the gateway: after its ClientHello was judged, the client's handshake is
 * taken with a leaf for the CONNECT host, and every request inside the
 * tunnel is decided on its own and sent over TLS of its own to the upstream
 * server, verified against the host's trust store for the very host the
 * request named. */
#include "netns/gateway_conn.h"
#include "netns/gateway_policy.h"
#include "netns/tls_ca.h"
#include "netns/tls_io.h"
#include "netns/tls_paths.h"
#include "netns/tls_leaf.h"
#include "netns/tls_signer.h"
#include "netns/tls_trust.h"
#include "netns/tls_upstream.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/paths.h"
#include "common/fdio.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* The signer is forked before anything in this process reads the CA, and
 * always: a reload may bring a rule that needs it, and nothing is forked
 * once the engine is confined. It opens (with trust_dir, makes) the CA
 * while this process goes on. */
static int start_signer(struct gateway_tls *t, const char *trust_dir, struct umw_error **err)
{
        _cleanup_free_ char *dir = NULL;
        int r = umw_state_dir("ca", &dir, err);
        if (r < 0)
                return r;
        return tls_signer_start(dir, trust_dir != NULL, &t->signer, err);
}

/* Termination with the signer's leaves. With trust_dir (at the start only:
 * the confined engine writes no file) the sandbox's trust files are
 * written before the gateway says ready, so the sandbox never starts
 * without them (and umwelt-run never loads OpenSSL). */
static int open_term(struct gateway_tls *t, const char *trust_dir, struct umw_error **err)
{
        X509 *ca = NULL;
        int r;
        if (!t->signer)
                return umw_fail(err, UMW_EXIT_CONFIG, ENOENT, "%s",
                                t->error ? t->error : "no signer");
        if ((r = tls_signer_ca(t->signer, &ca, err)) < 0 ||
            (trust_dir && (r = tls_trust_write_cert(ca, NULL, trust_dir, err)) < 0) ||
            (r = tls_term_new_signer(t->signer, 0, &t->term, err)) < 0)
                return r;
        free(t->error);
        t->error = NULL;
        return 0;
}

static void keep_error(struct gateway_tls *t, struct umw_error *err)
{
        free(t->error);
        t->error = strdup(err->msg);
        umw_error_free(err);
}

/* The upstream end's trust: a file given for tests, which must hold PEM
 * certificates, loaded now; or the host's store, opened now (the engine
 * opens nothing later) and read by the first request that needs it. */
static int open_upstream(struct gateway_tls *t, const char *ca_file, struct umw_error **err)
{
        if (!ca_file) {
                const char *env = getenv(X509_get_default_cert_file_env());
                const char *roots = env && *env ? env : X509_get_default_cert_file();
                t->roots_fd = open(roots, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (t->roots_fd < 0)
                        umw_debug("the host's trust store %s: %s", roots, strerror(errno));
                return 0;
        }
        if (access(ca_file, R_OK) < 0)
                return umw_fail(err, UMW_EXIT_CONFIG, errno, "--upstream-ca %s: %s", ca_file,
                                strerror(errno));
        int r = tls_upstream_new(ca_file, &t->upstream, err);
        if (r < 0)
                (*err)->kind = UMW_EXIT_CONFIG;
        return r;
}

int gateway_tls_setup(struct gateway *gw, const char *upstream_ca, const char *trust_dir,
                      struct umw_error **err)
{
        /* Loads OpenSSL's configuration while files can still be read. */
        if (OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, NULL) != 1)
                return tls_fail(err, "OpenSSL");
        int r = open_upstream(&gw->tls, upstream_ca, err);
        if (r < 0)
                return r;
        struct umw_error *ca_err = NULL;
        const char *rule = gateway_policy_inspecting_rule(&gw->rules->rules);
        r = start_signer(&gw->tls, trust_dir, &ca_err);
        /* Rules that need no termination need no CA now (a reload that
         * brings one asks the signer), only trust files that are up to date. */
        if (r == 0 && !rule && (!trust_dir || tls_trust_current(trust_dir)))
                return 0;
        if (r == 0 && open_term(&gw->tls, trust_dir, &ca_err) == 0)
                return 0;
        if (rule) {
                /* Fail closed: never start weaker than the rules say. */
                *err = ca_err;
                return umw_error_prefix(err, "the egress rule \"%s\" needs TLS termination", rule);
        }
        umw_warn("no TLS termination: %s", ca_err->msg);
        keep_error(&gw->tls, ca_err);
        /* Still the host's roots where the variables point. */
        return trust_dir ? tls_trust_write(NULL, NULL, trust_dir, err) : 0;
}

void gateway_tls_reload(struct gateway *gw)
{
        const char *rule = gateway_policy_inspecting_rule(&gw->rules->rules);
        struct umw_error *err = NULL;
        if (gw->tls.term || !rule || open_term(&gw->tls, NULL, &err) == 0)
                return;
        umw_error_prefix(&err,
                         "reload: the egress rule \"%s\" needs TLS termination; its tunnels "
                         "are refused",
                         rule);
        umw_log_error(err);
        keep_error(&gw->tls, err);
}

void gateway_tls_free(struct gateway *gw)
{
        tls_term_free(gw->tls.term);
        tls_signer_free(gw->tls.signer);
        tls_upstream_free(gw->tls.upstream);
        free(gw->tls.error);
        if (gw->tls.roots_fd >= 0)
                close(gw->tls.roots_fd);
        gw->tls = (struct gateway_tls){.roots_fd = -1};
}

ssize_t endpoint_tls_recv(struct endpoint *ep, void *buf, size_t len)
{
        uint32_t ev = 0;
        ssize_t n = tls_read(ep->ssl, buf, len, &ev);
        if (n == -EAGAIN)
                ep->tls_read_wait = ev;
        return n;
}

ssize_t endpoint_tls_send(struct endpoint *ep, const void *buf, size_t len)
{
        uint32_t ev = 0;
        ssize_t n = tls_write(ep->ssl, buf, len, &ev);
        ep->tls_write_blocked = n == -EAGAIN;
        if (n == -EAGAIN)
                ep->tls_write_wait = ev;
        return n;
}

void endpoint_tls_close_notify(struct endpoint *ep)
{
        uint32_t ev = 0;
        /* Best effort: the socket's FIN follows whether it went or not. */
        if (ep->ssl && !ep->tls_write_blocked && tls_shutdown(ep->ssl, &ev) < 0)
                umw_debug("gateway: close_notify not sent");
}

static void tls_ready(struct endpoint *ep, struct ssl_st *ssl)
{
        ep->ssl = ssl;
        ep->tls_read_wait = EPOLLIN;
        ep->tls_write_wait = EPOLLOUT;
        ep->tls_write_blocked = false;
}

int conn_tls_accept(struct conn *c)
{
        if (flow_pending(&c->down))
                return 0; /* the 200 goes out in the clear first */
        _cleanup_error_ struct umw_error *err = NULL;
        SSL *ssl = NULL;
        const char *hello = c->up.buf + c->up.start;
        if (tls_term_accept(c->gw->tls.term, c->client.fd, &c->req.host, hello,
                            c->up.end - c->up.start, &ssl, &err) < 0) {
                conn_close_because(c, NULL, err->msg);
                return 0;
        }
        tls_ready(&c->client, ssl);
        flow_discard(&c->up); /* the TLS layer holds those bytes now */
        conn_set_state(c, CONN_TLS_ACCEPT);
        return 1;
}

/* One step of ep's handshake: 1 done (reading waits for input again), 0
 * waiting, or -errno with *err. */
static int handshake(struct endpoint *ep, struct umw_error **err)
{
        int r = tls_handshake(ep->ssl, &ep->tls_read_wait, err);
        if (r > 0)
                ep->tls_read_wait = EPOLLIN;
        return r;
}

int step_tls_accept(struct conn *c)
{
        _cleanup_error_ struct umw_error *err = NULL;
        int r = handshake(&c->client, &err);
        if (r == 0)
                return 0;
        if (r < 0) {
                char why[512];
                snprintf(why, sizeof(why), "client: %s", err->msg);
                conn_close_because(c, "deny", why);
                return 0;
        }
        /* The CONNECT's own line; each request inside is one more. */
        c->terminated = true;
        c->tls_host = c->req.host;
        c->tls_port = c->req.port;
        request_end(c);
        conn_next_request(c);
        return 0;
}

static void upstream_refused(struct conn *c, const struct umw_error *err)
{
        char host[EGRESS_HOST_TEXT_SIZE + 2], why[512];
        if (egress_host_format(&c->req.host, host, sizeof(host)) < 0)
                snprintf(host, sizeof(host), "(host)");
        snprintf(why, sizeof(why), "upstream %s", err->msg);
        conn_answerf(c, 502, NULL, why,
                     "umwelt-gateway: TLS to %s:%u (%s) failed, the request was not sent: %s.\n",
                     host, c->req.port, c->req.address, err->msg);
}

/* The upstream end's SSL on the connected socket (the host's store read
 * at the first use). */
static int tls_connect(struct conn *c, struct umw_error **err)
{
        SSL *ssl = NULL;
        struct gateway_tls *t = &c->gw->tls;
        int r;
        if (!t->upstream && (r = tls_upstream_new_fd(t->roots_fd, &t->upstream, err)) < 0)
                return r;
        if ((r = tls_upstream_connect(t->upstream, c->upstream.fd, &c->req.host, &ssl, err)) < 0)
                return r;
        tls_ready(&c->upstream, ssl);
        c->upstream.tls_read_wait = EPOLLOUT; /* the ClientHello goes first */
        conn_set_state(c, CONN_TLS_CONNECT);
        return 0;
}

void conn_tls_connect(struct conn *c)
{
        _cleanup_error_ struct umw_error *err = NULL;
        if (tls_connect(c, &err) < 0)
                upstream_refused(c, err);
        else
                conn_stream(c);
}

int step_tls_connect(struct conn *c)
{
        _cleanup_error_ struct umw_error *err = NULL;
        int r = handshake(&c->upstream, &err);
        if (r <= 0) {
                if (r < 0)
                        upstream_refused(c, err);
                return 0;
        }
        conn_set_state(c, CONN_FORWARD);
        return 1;
}
