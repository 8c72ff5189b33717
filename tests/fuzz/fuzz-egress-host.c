/* libFuzzer harness for host canonicalisation: any bytes are either refused
 * with a one-line error or give a host whose canonical text canonicalises
 * to itself, and whose class and authority form are defined. The same bytes
 * are also read as an authority "host:port", a request path (whose
 * canonical form is a fixed point too) and an egress rule. */
#include "policy/egress_host.h"
#include "policy/egress_rules.h"
#include "common/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_refusal(int r, struct umw_error *err)
{
        if (r >= 0 || !err || strchr(err->msg, '\n') || strchr(err->msg, '\r'))
                abort();
}

/* The canonical form is a fixed point: canonicalising its text (and its
 * URL form) gives the same host and the same text again. */
static void check_fixed_point(const struct egress_host *h)
{
        struct egress_host again, formatted;
        struct umw_error *err = NULL;
        char url[EGRESS_HOST_TEXT_SIZE + 2];
        size_t n = strlen(h->text);
        if (n == 0 || n > EGRESS_NAME_MAX)
                abort();
        if (egress_host_canon(h->text, n, &again, &err) < 0 || !egress_host_equal(h, &again) ||
            strcmp(h->text, again.text) != 0)
                abort();
        int len = egress_host_format(h, url, sizeof(url));
        if (len < 0 || egress_host_canon(url, (size_t)len, &formatted, &err) < 0 ||
            !egress_host_equal(h, &formatted))
                abort();
        if (h->kind == EGRESS_HOST_NAME && (h->family != 0 || strpbrk(h->text, "@%*:[] ")))
                abort();
        if (egress_class_name(egress_addr_class(h->family, h->addr)) == NULL)
                abort();
}

static void check_path_and_rule(const char *s, size_t size)
{
        struct umw_error *err = NULL;
        char *path = NULL, *again = NULL;
        int r = egress_path_canon(s, size, &path, &err);
        if (r == 0) {
                if (egress_path_canon(path, strlen(path), &again, &err) < 0 ||
                    strcmp(path, again) != 0)
                        abort();
        } else {
                check_refusal(r, err);
        }
        free(path);
        free(again);
        umw_error_free(err);
        err = NULL;
        char *text = strndup(s, size);
        struct egress_rule rule;
        if (!text)
                return;
        r = egress_rule_parse(text, &rule, &err);
        if (r == 0)
                egress_rule_free(&rule);
        else
                check_refusal(r, err);
        umw_error_free(err);
        free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct egress_host h;
        struct umw_error *err = NULL;
        uint16_t port = 0;
        int r = egress_host_canon((const char *)data, size, &h, &err);
        if (r == 0)
                check_fixed_point(&h);
        else
                check_refusal(r, err);
        umw_error_free(err);
        err = NULL;
        r = egress_authority_parse((const char *)data, size, 0, &h, &port, &err);
        if (r == 0) {
                if (port == 0 || memchr(data, '@', size))
                        abort();
                check_fixed_point(&h);
        } else {
                check_refusal(r, err);
        }
        umw_error_free(err);
        check_path_and_rule((const char *)data, size);
        return 0;
}
