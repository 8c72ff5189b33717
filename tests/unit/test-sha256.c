/* SHA-256 (common/sha256.h) against FIPS 180-4's examples, and the same
 * digest whatever the input's cut into updates. */
#include "common/sha256.h"

#include <criterion/criterion.h>
#include <string.h>

static void hex_of(const void *data, size_t len, char out[65])
{
        struct umw_sha256 c;
        umw_sha256_init(&c);
        umw_sha256_update(&c, data, len);
        umw_sha256_hex(&c, out);
}

Test(sha256, fips_examples)
{
        static const struct {
                const char *in, *want;
        } v[] = {
            {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
            {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
            {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
            {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklm"
             "nopqrlmnopqrsmnopqrstnopqrstu",
             "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
        };
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                char got[65];
                hex_of(v[i].in, strlen(v[i].in), got);
                cr_assert_str_eq(got, v[i].want, "input %zu", i);
        }
}

Test(sha256, a_million_a_in_uneven_updates)
{
        static char a[1000];
        memset(a, 'a', sizeof(a));
        struct umw_sha256 c;
        umw_sha256_init(&c);
        size_t done = 0, step = 1;
        while (done < 1000000) {
                size_t n = step < 1000000 - done ? step : 1000000 - done;
                n = n > sizeof(a) ? sizeof(a) : n;
                umw_sha256_update(&c, a, n);
                done += n;
                step = step * 7 % 997 + 1;
        }
        char got[65];
        umw_sha256_hex(&c, got);
        cr_assert_str_eq(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

Test(sha256, lengths_around_a_block)
{
        /* 55, 56, 63, 64 and 65 bytes: the padding's two cases and the
         * block boundary, against the digest of the same bytes fed one at
         * a time. */
        static const size_t lens[] = {55, 56, 63, 64, 65, 119, 120};
        char buf[128];
        memset(buf, 'x', sizeof(buf));
        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
                char whole[65], bytewise[65];
                hex_of(buf, lens[i], whole);
                struct umw_sha256 c;
                umw_sha256_init(&c);
                for (size_t j = 0; j < lens[i]; j++)
                        umw_sha256_update(&c, buf + j, 1);
                umw_sha256_hex(&c, bytewise);
                cr_assert_str_eq(whole, bytewise, "length %zu", lens[i]);
        }
        char got[65];
        hex_of(buf, 64, got); /* printf 'x%.0s' $(seq 64) | sha256sum */
        cr_assert_str_eq(got, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c");
}
