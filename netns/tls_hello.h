/* The TLS ClientHello a client sends first through a CONNECT tunnel, read
 * (never answered) so the gateway can hold its SNI against the CONNECT host
 * before a byte goes upstream. Pure code over untrusted bytes: every length
 * field is checked against the one that contains it, anything ambiguous (two
 * SNI extensions, two names, a NUL in a name, trailing bytes) is refused.
 *
 * Feeding: the gateway peeks or reads what has arrived and calls
 * tls_hello_parse() on all of it; -EAGAIN means "wait for more". The hello
 * may span several TLS records (bounded by TLS_HELLO_MAX). The result is
 * copied into out, so it does not point into buf. */
#ifndef UMW_TLS_HELLO_H
#define UMW_TLS_HELLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TLS_HELLO_MAX     16384 /* the handshake message, its 4-byte header included */
#define TLS_SNI_MAX       255   /* a host_name, bytes */
#define TLS_ALPN_MAX      8     /* ALPN protocol names kept (more are counted, not kept) */
#define TLS_ALPN_NAME_MAX 255

struct tls_alpn {
        size_t len;
        unsigned char name[TLS_ALPN_NAME_MAX]; /* not NUL-terminated: any bytes */
};

struct tls_hello {
        /* Bytes of buf the records carrying the ClientHello took: the whole
         * of every such record. Anything after it (a ChangeCipherSpec, early
         * data) is the client's next record. */
        size_t records_len;
        uint16_t legacy_version; /* ClientHello.legacy_version, e.g. 0x0303 */

        bool has_sni;
        char sni[TLS_SNI_MAX + 1]; /* the host_name as sent (printable ASCII), NUL-terminated */
        size_t sni_len;

        size_t n_alpn;      /* protocol names offered, 0 without ALPN */
        size_t n_alpn_kept; /* min(n_alpn, TLS_ALPN_MAX) */
        struct tls_alpn alpn[TLS_ALPN_MAX];

        /* On failure, why: a static string for the log ("SNI: two names",
         * "record: not a handshake", ...). NULL on success and -EAGAIN. */
        const char *why;
};

/* Parses the ClientHello at the start of buf[0..len).
 * Returns:
 *   0        complete and well-formed; out filled. has_sni false means the
 *            client sent no server_name extension (the policy decides)
 *   -EAGAIN  a well-formed prefix so far: read more
 *   -EPROTO  not a TLS handshake at all (first byte is not 22, e.g. plain
 *            HTTP or an SSLv2 hello)
 *   -EINVAL  malformed or refused (out->why says what)
 *   -EMSGSIZE  the ClientHello is larger than TLS_HELLO_MAX */
int tls_hello_parse(const unsigned char *buf, size_t len, struct tls_hello *out);

#endif
