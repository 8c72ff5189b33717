#include "face/relay_msg.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/json.h"
#include "common/utf8.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The three messages are read by one driver from tables: each message's
 * members by name (v first, the member naming its variant second), its
 * variants (kinds, statuses, ops) with the members each allows and needs,
 * and its string members with the check each must pass. */

#define BIT(i)      (1u << (i))
#define MEMBERS_MAX 12
#define NAME_SHOWN  64 /* bytes of an unknown member's name an error shows */

struct variant {
        const char *name;           /* NULL: not on the wire */
        const char *what;           /* "a grant request", for errors */
        unsigned allowed, required; /* bits of members besides v and the variant */
};

struct schema {
        const char *file; /* the messages' prefix: "request" */
        const char *const *names;
        size_t n_names;
        const struct variant *variants;
        size_t n_variants;
        const char *variant_names; /* "grant, revoke, ..." for errors */
        bool open;                 /* members it does not know are allowed */
        size_t line_max;           /* bytes a line may take, newline included */
};

/* A string member: where it goes in its struct (an array of max + 1 bytes)
 * and what it must be. */
typedef int check_fn(const char *s, size_t max, const struct umw_jloc *at, struct umw_error **err);
struct string_member {
        unsigned member;
        size_t offset, max;
        check_fn *check;
};

/* A message being read: its tree and, by member, each value and location. */
struct message {
        yajl_val tree;
        struct umw_jloc root;
        struct umw_jloc at[MEMBERS_MAX];
        yajl_val value[MEMBERS_MAX];
        size_t variant; /* its index in the schema's variants: the enum's value */
};

static void message_done(struct message *m)
{
        yajl_tree_free(m->tree);
}
#define _cleanup_message_ __attribute__((cleanup(message_done)))

static int refuse(const struct umw_jloc *at, struct umw_error **err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(const struct umw_jloc *at, struct umw_error **err, const char *fmt, ...)
{
        char path[UMW_JLOC_PATH_MAX], what[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        umw_jloc_path(at, path);
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: %s: %s", at->file, path[0] ? path : ".",
                        what);
}

/* ------------------------------------------------------------ values */

/* Well-formed UTF-8 and, where controls is false, no C0 control (tab
 * included), DEL or C1 control: text that cannot steer a terminal. */
static bool utf8_ok(const char *s, size_t len, bool controls)
{
        for (size_t i = 0; i < len;) {
                uint32_t cp = 0;
                size_t n = umw_utf8_decode((const unsigned char *)s + i, len - i, &cp);
                if (!n || (!controls && (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))))
                        return false;
                i += n;
        }
        return true;
}

static int check_text(const char *s, size_t max, const struct umw_jloc *at, struct umw_error **err)
{
        size_t len = strlen(s);
        if (len == 0 || len > max)
                return refuse(at, err, "expected text of 1 to %zu bytes", max);
        if (!utf8_ok(s, len, false))
                return umw_json_expected(at, "text in UTF-8 without control characters", err);
        return 0;
}

/* One spelling for each path: no "." or ".." component, no empty one
 * ("//", a trailing "/"). The relay resolves symlinks itself. */
static bool path_clean(const char *s, size_t len)
{
        if (len == 1)
                return true;
        for (const char *p = s + 1, *end = s + len;;) {
                const char *slash = memchr(p, '/', (size_t)(end - p));
                size_t n = (size_t)((slash ? slash : end) - p);
                if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                if (!slash)
                        return true;
                p = slash + 1;
        }
}

static int check_path(const char *s, size_t max, const struct umw_jloc *at, struct umw_error **err)
{
        size_t len = strlen(s);
        if (len == 0 || len > max || s[0] != '/')
                return refuse(at, err, "expected an absolute path of at most %zu bytes", max);
        if (!utf8_ok(s, len, false))
                return umw_json_expected(at, "a path in UTF-8 without control characters", err);
        if (!path_clean(s, len))
                return umw_json_expected(at,
                                         "a clean absolute path (no \".\" or \"..\" component, "
                                         "no \"//\", no trailing \"/\")",
                                         err);
        return 0;
}

static bool all_of(const char *s, size_t len, const char *set)
{
        return strspn(s, set) == len;
}

static int check_rule(const char *s, size_t max, const struct umw_jloc *at, struct umw_error **err)
{
        size_t len = strlen(s), i = 0;
        while (i < len && s[i] > 0x20 && s[i] < 0x7f)
                i++;
        if (len == 0 || len > max || i != len)
                return refuse(at, err,
                              "expected an egress rule of 1 to %zu printable ASCII characters, "
                              "no space",
                              max);
        return 0;
}

static int check_id(const char *s, size_t max, const struct umw_jloc *at, struct umw_error **err)
{
        size_t len = strlen(s);
        if (len == 0 || len > max || !all_of(s, len, "0123456789"))
                return refuse(at, err, "expected a request id of 1 to %zu decimal digits", max);
        return 0;
}

static int check_hash(const char *s, size_t max, const struct umw_jloc *at, struct umw_error **err)
{
        size_t len = strlen(s);
        if (len != max || !all_of(s, len, "0123456789abcdef"))
                return refuse(at, err, "expected %zu lowercase hexadecimal digits", max);
        return 0;
}

/* A host action's name, as the table spells them (policy/host_actions.h). */
static int check_action(const char *s, size_t max, const struct umw_jloc *at,
                        struct umw_error **err)
{
        size_t len = strlen(s);
        if (len == 0 || len > max || !strchr("abcdefghijklmnopqrstuvwxyz0123456789", s[0]) ||
            !all_of(s, len, "abcdefghijklmnopqrstuvwxyz0123456789._-"))
                return refuse(at, err, "expected an action name of 1 to %zu of [a-z0-9._-]", max);
        return 0;
}

static int check_param_name(const char *s, size_t max, const struct umw_jloc *at,
                            struct umw_error **err)
{
        size_t len = strlen(s);
        if (len == 0 || len > max || !all_of(s, len, "abcdefghijklmnopqrstuvwxyz0123456789_"))
                return refuse(at, err, "expected a parameter name of 1 to %zu of [a-z0-9_]", max);
        return 0;
}

/* An answer's reason is shown by the client, which escapes it itself. */
static int check_reason(const char *s, size_t max, const struct umw_jloc *at,
                        struct umw_error **err)
{
        size_t len = strlen(s);
        if (len > max || !utf8_ok(s, len, true))
                return refuse(at, err, "expected text in UTF-8 of at most %zu bytes", max);
        return 0;
}

/* ------------------------------------------------------------ the driver */

/* The code unit of a \u escape at s[i] ('u' and four hex digits), or -1. */
static long escape_at(const char *s, size_t len, size_t i)
{
        char hex[5] = "";
        if (len - i < 5 || s[i] != 'u')
                return -1;
        memcpy(hex, s + i + 1, 4);
        return strspn(hex, "0123456789abcdefABCDEF") == 4 ? strtol(hex, NULL, 16) : -1;
}

static bool low_surrogate_at(const char *s, size_t len, size_t i)
{
        long cp = i < len && s[i] == '\\' ? escape_at(s, len, i + 1) : -1;
        return cp >= 0xdc00 && cp <= 0xdfff;
}

/* yajl cuts a string short at \u0000 and turns a surrogate escape that is
 * not half of a pair into '?' or some other character: what it read would
 * not be what was sent. Outside strings a backslash is a JSON error anyway. */
static int check_escapes(const char *file, const char *line, size_t len, struct umw_error **err)
{
        for (size_t i = 0; i < len; i++) {
                if (line[i] != '\\')
                        continue;
                long cp = escape_at(line, len, i + 1);
                if (cp == 0)
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: a \\u0000 escape", file);
                if (cp >= 0xd800 && cp <= 0xdbff && low_surrogate_at(line, len, i + 6))
                        i += 6; /* a pair: on to its second half */
                else if (cp >= 0xd800 && cp <= 0xdfff)
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "%s: a \\u escape of half a surrogate pair", file);
                i++; /* the escaped character, which may be a backslash */
        }
        return 0;
}

/* The line as a tree. A NUL would end the text yajl reads. */
static int line_tree(const char *file, const char *line, size_t len, size_t max, yajl_val *tree,
                     struct umw_error **err)
{
        if (len > max - 1)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: longer than %zu bytes", file,
                                max);
        if (memchr(line, '\0', len))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: a NUL byte", file);
        int r = check_escapes(file, line, len, err);
        if (r < 0)
                return r;
        _cleanup_free_ char *text = strndup(line, len);
        if (!text)
                return umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "out of memory");
        return umw_json_parse(text, file, tree, err);
}

static size_t member_index(const struct schema *s, const char *key)
{
        for (size_t i = 0; i < s->n_names; i++)
                if (strcmp(s->names[i], key) == 0)
                        return i;
        return s->n_names;
}

/* Each known member's value, refusing one given twice (yajl's tree keeps
 * both): who reads the first and who the last must never matter. */
static int collect(struct message *m, const struct schema *s, struct umw_error **err)
{
        for (size_t i = 0; i < m->tree->u.object.len; i++) {
                size_t k = member_index(s, m->tree->u.object.keys[i]);
                if (k == s->n_names)
                        continue;
                if (m->value[k])
                        return refuse(&m->at[k], err, "given twice");
                m->value[k] = m->tree->u.object.values[i];
        }
        return 0;
}

static int check_version(yajl_val v, const struct umw_jloc *at, struct umw_error **err)
{
        if (!YAJL_IS_INTEGER(v))
                return umw_json_expected(at, "the protocol version, an integer", err);
        if (v->u.number.i != RELAY_VERSION)
                return umw_fail(err, UMW_EXIT_CONFIG, EPROTONOSUPPORT,
                                "%s: unsupported protocol version %lld (this relay speaks %d)",
                                at->file, v->u.number.i, RELAY_VERSION);
        return 0;
}

static int read_variant(struct message *m, const struct schema *s, struct umw_error **err)
{
        yajl_val v = m->value[1];
        for (size_t i = 0; YAJL_IS_STRING(v) && i < s->n_variants; i++) {
                if (s->variants[i].name && strcmp(s->variants[i].name, v->u.string) == 0) {
                        m->variant = i;
                        return 0;
                }
        }
        return refuse(&m->at[1], err, "expected one of %s", s->variant_names);
}

/* A member's name fit for a one-line message: printable ASCII as it is,
 * any other byte as '?', cut at NAME_SHOWN - 1 bytes. */
static const char *shown_name(const char *key, char buf[static NAME_SHOWN])
{
        size_t i = 0;
        for (; key[i] && i < NAME_SHOWN - 1; i++)
                buf[i] = key[i] >= 0x20 && key[i] < 0x7f ? key[i] : '?';
        buf[i] = '\0';
        return buf;
}

static int refuse_others(const struct message *m, const struct schema *s, struct umw_error **err)
{
        const struct variant *var = &s->variants[m->variant];
        unsigned allowed = var->allowed | BIT(0) | BIT(1);
        for (size_t i = 0; i < m->tree->u.object.len; i++) {
                const char *key = m->tree->u.object.keys[i];
                size_t k = member_index(s, key);
                if (k < s->n_names && (allowed & BIT(k)))
                        continue;
                char name[NAME_SHOWN];
                struct umw_jloc at = umw_jloc_key(&m->root, shown_name(key, name));
                return refuse(&at, err, "not a member of %s", var->what);
        }
        return 0;
}

static int check_required(const struct message *m, const struct schema *s, struct umw_error **err)
{
        const struct variant *var = &s->variants[m->variant];
        for (size_t k = 2; k < s->n_names; k++)
                if ((var->required & BIT(k)) && !m->value[k])
                        return refuse(&m->at[k], err, "required in %s", var->what);
        return 0;
}

/* Parses the line into m: an object of the protocol's version whose
 * variant is known, each member known once, and for a closed message only
 * the variant's members and all it needs. */
static int message_read(struct message *m, const struct schema *s, const char *line, size_t len,
                        struct umw_error **err)
{
        umw_jloc_init(&m->root, s->file);
        for (size_t i = 0; i < s->n_names; i++)
                m->at[i] = umw_jloc_key(&m->root, s->names[i]);
        int r;
        if ((r = line_tree(s->file, line, len, s->line_max, &m->tree, err)) < 0 ||
            (r = umw_json_object(m->tree, &m->root, err)) < 0 || (r = collect(m, s, err)) < 0 ||
            (r = check_version(m->value[0], &m->at[0], err)) < 0 ||
            (r = read_variant(m, s, err)) < 0 || (!s->open && (r = refuse_others(m, s, err)) < 0))
                return r;
        return check_required(m, s, err);
}

/* Each string member given, checked, into out. */
static int read_strings(const struct message *m, const struct string_member *t, size_t n, void *out,
                        struct umw_error **err)
{
        for (size_t i = 0; i < n; i++) {
                const struct umw_jloc *at = &m->at[t[i].member];
                const char *s = NULL;
                int r;
                if (!m->value[t[i].member])
                        continue;
                if ((r = umw_json_string(m->value[t[i].member], at, &s, err)) < 0 ||
                    (r = t[i].check(s, t[i].max, at, err)) < 0)
                        return r;
                memcpy((char *)out + t[i].offset, s, strlen(s) + 1);
        }
        return 0;
}

/* ------------------------------------------------------------ requests */

enum {
        RQ_V,
        RQ_KIND,
        RQ_PATH,
        RQ_MODE,
        RQ_RULE,
        RQ_PORT,
        RQ_WHY,
        RQ_TEXT,
        RQ_NAME,
        RQ_PARAMS,
        RQ_N
};
_Static_assert(RQ_N <= MEMBERS_MAX, "a message's members fit struct message");

static const char *const request_names[RQ_N] = {
    [RQ_V] = "v",       [RQ_KIND] = "kind",     [RQ_PATH] = "path", [RQ_MODE] = "mode",
    [RQ_RULE] = "rule", [RQ_PORT] = "port",     [RQ_WHY] = "why",   [RQ_TEXT] = "text",
    [RQ_NAME] = "name", [RQ_PARAMS] = "params",
};

static const struct variant kinds[] = {
    /* A refusal the parser child hands on: its one line in text. */
    [RELAY_BAD] = {NULL, "a refused request", BIT(RQ_TEXT), BIT(RQ_TEXT)},
    [RELAY_GRANT] = {"grant", "a grant request", BIT(RQ_PATH) | BIT(RQ_MODE) | BIT(RQ_WHY),
                     BIT(RQ_PATH) | BIT(RQ_WHY)},
    [RELAY_REVOKE] = {"revoke", "a revoke request", BIT(RQ_PATH) | BIT(RQ_WHY), BIT(RQ_PATH)},
    [RELAY_EGRESS] = {"egress", "an egress request", BIT(RQ_RULE) | BIT(RQ_WHY),
                      BIT(RQ_RULE) | BIT(RQ_WHY)},
    [RELAY_INGRESS] = {"ingress", "an ingress request", BIT(RQ_PORT) | BIT(RQ_WHY),
                       BIT(RQ_PORT) | BIT(RQ_WHY)},
    [RELAY_NOTE] = {"note", "a note request", BIT(RQ_TEXT), BIT(RQ_TEXT)},
    [RELAY_STATUS] = {"status", "a status request", 0, 0},
    [RELAY_ACTION] = {"action", "an action request", BIT(RQ_NAME) | BIT(RQ_PARAMS) | BIT(RQ_WHY),
                      BIT(RQ_NAME) | BIT(RQ_WHY)},
    [RELAY_ACTIONS] = {"actions", "an actions request", 0, 0},
};

static const struct schema request_schema = {
    .file = "request",
    .names = request_names,
    .n_names = RQ_N,
    .variants = kinds,
    .n_variants = ARRAY_SIZE(kinds),
    .variant_names = "grant, revoke, egress, ingress, note, status, action, actions",
    .line_max = RELAY_LINE_MAX,
};

static const struct string_member request_strings[] = {
    {RQ_PATH, offsetof(struct relay_request, path), RELAY_PATH_MAX, check_path},
    {RQ_RULE, offsetof(struct relay_request, rule), RELAY_RULE_MAX, check_rule},
    {RQ_WHY, offsetof(struct relay_request, why), RELAY_WHY_MAX, check_text},
    {RQ_TEXT, offsetof(struct relay_request, text), RELAY_NOTE_MAX, check_text},
    {RQ_NAME, offsetof(struct relay_request, action), RELAY_ACTION_MAX, check_action},
};

const char *relay_kind_name(enum relay_kind kind)
{
        return (size_t)kind < ARRAY_SIZE(kinds) ? kinds[kind].name : NULL;
}

static int read_mode(yajl_val v, const struct umw_jloc *at, uint32_t *rw, struct umw_error **err)
{
        if (!v)
                return 0; /* "ro" */
        if (!YAJL_IS_STRING(v) ||
            (strcmp(v->u.string, "ro") != 0 && strcmp(v->u.string, "rw") != 0))
                return umw_json_expected(at, "\"ro\" or \"rw\"", err);
        *rw = strcmp(v->u.string, "rw") == 0;
        return 0;
}

static int read_port(yajl_val v, const struct umw_jloc *at, uint32_t *port, struct umw_error **err)
{
        int64_t n = 0;
        if (!v)
                return 0;
        int r = umw_json_int64(v, at, 1, 65535, &n, err);
        if (r < 0)
                return r;
        *port = (uint32_t)n;
        return 0;
}

/* One parameter NAME: "VALUE" into p: a name as the table spells them, a
 * value of text (no control character: a newline is refused here). */
static int read_param(const char *name, yajl_val v, const struct umw_jloc *at,
                      struct relay_param *p, struct umw_error **err)
{
        char shown[NAME_SHOWN];
        struct umw_jloc key = umw_jloc_key(at, shown_name(name, shown));
        const char *value = NULL;
        int r;
        if ((r = check_param_name(name, RELAY_PARAM_NAME_MAX, &key, err)) < 0 ||
            (r = umw_json_string(v, &key, &value, err)) < 0 ||
            (r = check_text(value, RELAY_PARAM_MAX, &key, err)) < 0)
                return r;
        memcpy(p->name, name, strlen(name) + 1);
        memcpy(p->value, value, strlen(value) + 1);
        return 0;
}

/* "params": an object of at most RELAY_PARAMS_MAX names, each once. */
static int read_params(yajl_val v, const struct umw_jloc *at, struct relay_request *q,
                       struct umw_error **err)
{
        if (!v)
                return 0;
        int r = umw_json_object(v, at, err);
        if (r < 0)
                return r;
        if (v->u.object.len > RELAY_PARAMS_MAX)
                return refuse(at, err, "expected at most %d parameters", RELAY_PARAMS_MAX);
        for (size_t i = 0; i < v->u.object.len; i++) {
                const char *name = v->u.object.keys[i];
                for (size_t k = 0; k < i; k++)
                        if (strcmp(v->u.object.keys[k], name) == 0)
                                return refuse(at, err, "a parameter given twice");
                if ((r = read_param(name, v->u.object.values[i], at, &q->params[i], err)) < 0)
                        return r;
                q->n_params++;
        }
        return 0;
}

static int request_read(const char *line, size_t len, struct relay_request *q,
                        struct umw_error **err)
{
        _cleanup_message_ struct message m = {0};
        int r;
        if ((r = message_read(&m, &request_schema, line, len, err)) < 0 ||
            (r = read_strings(&m, request_strings, ARRAY_SIZE(request_strings), q, err)) < 0 ||
            (r = read_mode(m.value[RQ_MODE], &m.at[RQ_MODE], &q->rw, err)) < 0 ||
            (r = read_port(m.value[RQ_PORT], &m.at[RQ_PORT], &q->port, err)) < 0 ||
            (r = read_params(m.value[RQ_PARAMS], &m.at[RQ_PARAMS], q, err)) < 0)
                return r;
        q->kind = (uint32_t)m.variant;
        return 0;
}

int relay_request_parse(const char *line, size_t len, struct relay_request *out,
                        struct umw_error **err)
{
        memset(out, 0, sizeof(*out));
        int r = request_read(line, len, out, err);
        if (r < 0) /* left as a record that holds nothing, ready to become RELAY_BAD */
                memset(out, 0, sizeof(*out));
        return r;
}

/* A string member of a record: terminated, checked where the kind takes
 * it (unless optional and empty), empty where it does not. */
static int check_string(const struct relay_request *q, const struct string_member *t,
                        const struct umw_jloc *root, struct umw_error **err)
{
        const struct variant *k = &kinds[q->kind];
        const char *s = (const char *)q + t->offset;
        struct umw_jloc at = umw_jloc_key(root, request_names[t->member]);
        if (!memchr(s, '\0', t->max + 1))
                return refuse(&at, err, "not terminated inside its %zu bytes", t->max + 1);
        if ((k->allowed & BIT(t->member)) && ((k->required & BIT(t->member)) || s[0]))
                return t->check(s, t->max, &at, err);
        if (s[0])
                return refuse(&at, err, "set, but %s does not take it", k->what);
        return 0;
}

/* The parameters of a record: only an action's, each terminated, named
 * and valued as the parser leaves them, no name twice. */
static int check_params(const struct relay_request *q, const struct umw_jloc *root,
                        struct umw_error **err)
{
        struct umw_jloc at = umw_jloc_key(root, "params");
        if (q->n_params > (q->kind == RELAY_ACTION ? RELAY_PARAMS_MAX : 0))
                return refuse(&at, err, "expected at most %d parameters, for an action only",
                              RELAY_PARAMS_MAX);
        for (uint32_t i = 0; i < q->n_params; i++) {
                const struct relay_param *p = &q->params[i];
                int r;
                if (!memchr(p->name, '\0', sizeof(p->name)) ||
                    !memchr(p->value, '\0', sizeof(p->value)))
                        return refuse(&at, err, "parameter %u is not terminated", i);
                if ((r = check_param_name(p->name, RELAY_PARAM_NAME_MAX, &at, err)) < 0 ||
                    (r = check_text(p->value, RELAY_PARAM_MAX, &at, err)) < 0)
                        return r;
                for (uint32_t k = 0; k < i; k++)
                        if (strcmp(q->params[k].name, p->name) == 0)
                                return refuse(&at, err, "a parameter given twice");
        }
        return 0;
}

int relay_request_check(const struct relay_request *q, struct umw_error **err)
{
        struct umw_jloc root, at;
        umw_jloc_init(&root, "request record");
        if (q->kind >= ARRAY_SIZE(kinds)) {
                at = umw_jloc_key(&root, "kind");
                return refuse(&at, err, "expected a kind from 0 to %zu", ARRAY_SIZE(kinds) - 1);
        }
        const struct variant *k = &kinds[q->kind];
        for (size_t i = 0; i < ARRAY_SIZE(request_strings); i++) {
                int r = check_string(q, &request_strings[i], &root, err);
                if (r < 0)
                        return r;
        }
        if (q->rw > ((k->allowed & BIT(RQ_MODE)) ? 1u : 0u)) {
                at = umw_jloc_key(&root, "rw");
                return refuse(&at, err, "expected %s", q->kind == RELAY_GRANT ? "0 or 1" : "0");
        }
        if ((k->allowed & BIT(RQ_PORT)) ? q->port < 1 || q->port > 65535 : q->port != 0) {
                at = umw_jloc_key(&root, "port");
                return refuse(&at, err, "expected %s",
                              q->kind == RELAY_INGRESS ? "a port from 1 to 65535" : "0");
        }
        return check_params(q, &root, err);
}

/* A string member, unless it is empty (not taken, or an optional one left out). */
static void gen_str(yajl_gen g, const char *key, const char *value)
{
        if (value[0])
                umw_jgen_key_str(g, key, value);
}

int relay_request_format(const struct relay_request *q, char **out, size_t *len,
                         struct umw_error **err)
{
        int r = relay_request_check(q, err);
        if (r < 0)
                return r;
        if (q->kind == RELAY_BAD)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "request: a refused request has no line");
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "out of memory");
        yajl_gen_map_open(g);
        umw_jgen_key_int(g, "v", RELAY_VERSION);
        umw_jgen_key_str(g, "kind", kinds[q->kind].name);
        gen_str(g, "path", q->path);
        if (q->kind == RELAY_GRANT)
                umw_jgen_key_str(g, "mode", q->rw ? "rw" : "ro");
        gen_str(g, "rule", q->rule);
        if (q->kind == RELAY_INGRESS)
                umw_jgen_key_int(g, "port", q->port);
        gen_str(g, "name", q->action);
        if (q->n_params) {
                umw_jgen_key(g, "params");
                yajl_gen_map_open(g);
                for (uint32_t i = 0; i < q->n_params; i++)
                        umw_jgen_key_str(g, q->params[i].name, q->params[i].value);
                yajl_gen_map_close(g);
        }
        gen_str(g, "why", q->why);
        gen_str(g, "text", q->text);
        yajl_gen_map_close(g);
        size_t n = 0;
        char *text = umw_jgen_finish(g, &n);
        char *line = text ? realloc(text, n + 2) : NULL;
        if (!line) {
                free(text);
                return umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "out of memory");
        }
        line[n] = '\n';
        line[n + 1] = '\0';
        *out = line;
        *len = n + 1;
        return 0;
}

/* ------------------------------------------------------------ answers */

enum { AN_V, AN_STATUS, AN_ID, AN_REASON, AN_N };
_Static_assert(AN_N <= MEMBERS_MAX, "a message's members fit struct message");

static const char *const answer_names[AN_N] = {
    [AN_V] = "v", [AN_STATUS] = "status", [AN_ID] = "id", [AN_REASON] = "reason"};

#define ANSWER_MEMBERS (BIT(AN_ID) | BIT(AN_REASON))
static const struct variant statuses[] = {
    [RELAY_PENDING] = {"pending", "an answer", ANSWER_MEMBERS, 0},
    [RELAY_OK] = {"ok", "an answer", ANSWER_MEMBERS, 0},
    [RELAY_GRANTED] = {"granted", "an answer", ANSWER_MEMBERS, 0},
    [RELAY_DENIED] = {"denied", "an answer", ANSWER_MEMBERS, 0},
    [RELAY_TIMEOUT] = {"timeout", "an answer", ANSWER_MEMBERS, 0},
    [RELAY_REFUSED] = {"refused", "an answer", ANSWER_MEMBERS, 0},
    [RELAY_ERROR] = {"error", "an answer", ANSWER_MEMBERS, 0},
};

/* Open: status's lists ("grants", "egress", "ports") are the caller's. */
static const struct schema answer_schema = {
    .file = "answer",
    .names = answer_names,
    .n_names = AN_N,
    .variants = statuses,
    .n_variants = ARRAY_SIZE(statuses),
    .variant_names = "pending, ok, granted, denied, timeout, refused, error",
    .open = true,
    .line_max = RELAY_ANSWER_MAX,
};

static const struct string_member answer_strings[] = {
    {AN_ID, offsetof(struct relay_answer, id), RELAY_ID_MAX, check_id},
    {AN_REASON, offsetof(struct relay_answer, reason), RELAY_WHY_MAX, check_reason},
};

const char *relay_status_name(enum relay_status status)
{
        return (size_t)status < ARRAY_SIZE(statuses) ? statuses[status].name : NULL;
}

int relay_answer_parse(const char *line, size_t len, struct relay_answer *out,
                       struct umw_error **err)
{
        _cleanup_message_ struct message m = {0};
        memset(out, 0, sizeof(*out));
        int r;
        if ((r = message_read(&m, &answer_schema, line, len, err)) < 0 ||
            (r = read_strings(&m, answer_strings, ARRAY_SIZE(answer_strings), out, err)) < 0)
                return r;
        out->status = (enum relay_status)m.variant;
        return 0;
}

/* ------------------------------------------------------------ control */

enum { CT_V, CT_OP, CT_ID, CT_HASH, CT_REMEMBER, CT_WHY, CT_N };
_Static_assert(CT_N <= MEMBERS_MAX, "a message's members fit struct message");

static const char *const control_names[CT_N] = {
    [CT_V] = "v",
    [CT_OP] = "op",
    [CT_ID] = "id",
    [CT_HASH] = "hash",
    [CT_REMEMBER] = "remember",
    [CT_WHY] = "why",
};

static const struct variant ops[] = {
    [RELAY_OP_PENDING] = {"pending", "a pending message", 0, 0},
    [RELAY_OP_WATCH] = {"watch", "a watch message", 0, 0},
    [RELAY_OP_ADOPT] = {"adopt", "an adopt message", 0, 0},
    [RELAY_OP_APPROVE] = {"approve", "an approve message",
                          BIT(CT_ID) | BIT(CT_HASH) | BIT(CT_REMEMBER), BIT(CT_ID) | BIT(CT_HASH)},
    [RELAY_OP_DENY] = {"deny", "a deny message", BIT(CT_ID) | BIT(CT_WHY), BIT(CT_ID)},
    [RELAY_OP_ACTIONS] = {"actions", "an actions message", 0, 0},
};

static const struct schema control_schema = {
    .file = "control",
    .names = control_names,
    .n_names = CT_N,
    .variants = ops,
    .n_variants = ARRAY_SIZE(ops),
    .variant_names = "pending, watch, adopt, approve, deny, actions",
    .line_max = RELAY_LINE_MAX,
};

static const struct string_member control_strings[] = {
    {CT_ID, offsetof(struct relay_control, id), RELAY_ID_MAX, check_id},
    {CT_HASH, offsetof(struct relay_control, hash), RELAY_HASH_HEX, check_hash},
    {CT_WHY, offsetof(struct relay_control, why), RELAY_WHY_MAX, check_text},
};

int relay_control_parse(const char *line, size_t len, struct relay_control *out,
                        struct umw_error **err)
{
        _cleanup_message_ struct message m = {0};
        memset(out, 0, sizeof(*out));
        int r;
        if ((r = message_read(&m, &control_schema, line, len, err)) < 0 ||
            (r = read_strings(&m, control_strings, ARRAY_SIZE(control_strings), out, err)) < 0 ||
            (m.value[CT_REMEMBER] && (r = umw_json_bool(m.value[CT_REMEMBER], &m.at[CT_REMEMBER],
                                                        &out->remember, err)) < 0))
                return r;
        out->op = (enum relay_op)m.variant;
        return 0;
}
