/* The signer's wire format (tls_signer.h): what the gateway engine may ask
 * the process that holds the umwelt CA's key, and what it gets back. One
 * message is one SOCK_SEQPACKET record, so a record is never split or
 * joined; every field is bounded and a record must be exactly as long as
 * its fields say. Free of OpenSSL and of system calls: the signer's side
 * (tls_signer_req_decode) parses bytes from the less trusted process and
 * is fuzzed (tests/fuzz/fuzz-signer-req.c).
 *
 * Request, engine -> signer: "a leaf for this host and this public key"
 *   u8 version (1), u8 type (1: leaf), u16 host length, u16 key length
 *   (big-endian), the host's canonical text (egress_host_canon() of it must
 *   give the same text back: one spelling, no NUL), the leaf's public key
 *   as a DER SubjectPublicKeyInfo.
 * Response, signer -> engine (also the signer's first record, its hello):
 *   u8 version (1), u8 status (0: ok, 1: refused), u16 body length, then
 *   the body: a DER certificate (a leaf; in the hello, the CA's own), or
 *   with status 1 a one-line message saying why. */
#ifndef UMW_NETNS_TLS_SIGNER_MSG_H
#define UMW_NETNS_TLS_SIGNER_MSG_H

#include <stddef.h>

#include "policy/egress_host.h"

struct umw_error;

#define TLS_SIGNER_VERSION  1
#define TLS_SIGNER_LEAF     1
#define TLS_SIGNER_HEAD     6
#define TLS_SIGNER_KEY_MAX  512  /* a P-256 SubjectPublicKeyInfo is 91 bytes */
#define TLS_SIGNER_BODY_MAX 8192 /* a certificate (a leaf is ~600 bytes) or a message */
#define TLS_SIGNER_TEXT_MAX 1024
#define TLS_SIGNER_REQ_MAX  (TLS_SIGNER_HEAD + EGRESS_NAME_MAX + TLS_SIGNER_KEY_MAX)
#define TLS_SIGNER_RESP_MAX (4 + TLS_SIGNER_BODY_MAX)

enum tls_signer_status {
        TLS_SIGNER_OK = 0,
        TLS_SIGNER_REFUSED = 1,
};

/* A decoded request: host canonical, key pointing into the record. */
struct tls_signer_req {
        struct egress_host host;
        const unsigned char *key;
        size_t key_len;
};

/* Writes a request into buf (at least TLS_SIGNER_REQ_MAX bytes); returns its
 * length, or -EINVAL for a host or key out of bounds. */
int tls_signer_req_encode(const struct egress_host *host, const void *key, size_t key_len,
                          unsigned char *buf, size_t size);

/* Checks and decodes a request: 0, or -EINVAL with a one-line *err that
 * does not echo the bytes. */
int tls_signer_req_decode(const void *buf, size_t len, struct tls_signer_req *out,
                          struct umw_error **err);

/* Writes a response (a message body is cut to TLS_SIGNER_TEXT_MAX); returns
 * its length, or -EINVAL for a body out of bounds. */
int tls_signer_resp_encode(enum tls_signer_status status, const void *body, size_t body_len,
                           unsigned char *buf, size_t size);

/* Checks and decodes a response; body points into buf. A refusal's text is
 * copied into *err (with its status, the return is -EACCES); a malformed
 * record is -EPROTO. */
int tls_signer_resp_decode(const void *buf, size_t len, const unsigned char **body,
                           size_t *body_len, struct umw_error **err);

#endif
