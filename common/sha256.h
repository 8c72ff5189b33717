/* SHA-256 (FIPS 180-4), for what binds a decision to the exact bytes a
 * human was shown (the relay's request hashes). Not for TLS: that is
 * OpenSSL's. Its own here because the relay would otherwise load
 * libcrypto for one digest: 1.4 MiB resident at its start and 2 MiB more
 * once OpenSSL 3 loads its provider at the first digest, in a daemon that
 * runs beside every sandbox. */
#ifndef UMW_SHA256_H
#define UMW_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define UMW_SHA256_LEN 32

struct umw_sha256 {
        uint32_t h[8];
        uint64_t bytes;
        unsigned char block[64];
        size_t fill;
};

void umw_sha256_init(struct umw_sha256 *c);
void umw_sha256_update(struct umw_sha256 *c, const void *data, size_t len);
void umw_sha256_final(struct umw_sha256 *c, unsigned char out[static UMW_SHA256_LEN]);
/* The digest of c's input as 64 lowercase hex digits and a NUL. */
void umw_sha256_hex(struct umw_sha256 *c, char out[static 2 * UMW_SHA256_LEN + 1]);

#endif
