/* The host actions table (host_actions.h): read strictly, every value
 * checked where it is written, nothing in it expanded but the declared
 * parameters' placeholders. */
#include "policy/host_actions.h"
#include "policy/toml.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define DEFAULT_LANG "LANG=C.UTF-8"

/* What the members point into: the tree, and the lists made from it. */
struct owned {
        struct toml_value *root;
        void **blocks;
        size_t n, cap;
};

static void *own(struct owned *o, void *block)
{
        if (!block)
                return NULL;
        if (o->n == o->cap) {
                size_t cap = o->cap ? o->cap * 2 : 16;
                void **more = realloc(o->blocks, cap * sizeof(*more));
                if (!more) {
                        free(block);
                        return NULL;
                }
                o->blocks = more;
                o->cap = cap;
        }
        o->blocks[o->n++] = block;
        return block;
}

void host_actions_free(struct host_actions *t)
{
        struct owned *o = t->owned;
        if (o) {
                for (size_t i = 0; i < o->n; i++)
                        free(o->blocks[i]);
                free(o->blocks);
                toml_free(o->root);
                free(o);
        }
        free(t->items);
        *t = (struct host_actions){0};
}

/* A reader of one file: where messages point and what to keep. */
struct reader {
        const char *file;
        struct owned *o;
        struct umw_error **err;
};

static int at(const struct reader *rd, const struct toml_value *v, const char *key, const char *fmt,
              ...) __attribute__((format(printf, 4, 5)));

/* "FILE:LINE:COL: 'key': what" */
static int at(const struct reader *rd, const struct toml_value *v, const char *key, const char *fmt,
              ...)
{
        char what[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return umw_fail(rd->err, UMW_EXIT_CONFIG, EINVAL, "%s:%u:%u: '%s': %s", rd->file, v->line,
                        v->column, key, what);
}

static bool name_ok(const char *s, size_t max, const char *first, const char *rest)
{
        size_t len = strlen(s);
        return len >= 1 && len <= max && strchr(first, s[0]) && strspn(s, rest) == len;
}

#define LOWER_DIGITS "abcdefghijklmnopqrstuvwxyz0123456789"
#define ENV_FIRST    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"

/* An array of strings, n_min to n_max of them, as a NULL-terminated list. */
static int strings(const struct reader *rd, const struct toml_value *t, const char *key,
                   size_t n_min, size_t n_max, const char *const **out)
{
        const struct toml_value *a = NULL;
        int r = toml_get(t, key, TOML_ARRAY, rd->file, &a, rd->err);
        if (r <= 0)
                return r;
        if (a->array.n < n_min || a->array.n > n_max)
                return at(rd, a, key, "expected %zu to %zu strings, found %zu", n_min, n_max,
                          a->array.n);
        const char **list = own(rd->o, calloc(a->array.n + 1, sizeof(*list)));
        if (!list)
                return umw_fail_sys(rd->err, ENOMEM, "%s", rd->file);
        for (size_t i = 0; i < a->array.n; i++) {
                if (a->array.items[i]->kind != TOML_STRING)
                        return at(rd, a->array.items[i], key, "expected strings, found %s",
                                  toml_kind_name(a->array.items[i]->kind));
                list[i] = a->array.items[i]->string;
        }
        *out = list;
        return 1;
}

static int absolute(const struct reader *rd, const struct toml_value *v, const char *key,
                    const char *path)
{
        return path[0] == '/' ? 0 : at(rd, v, key, "expected an absolute path, found '%s'", path);
}

/* "250ms", "10s", "2m": 1 ms to an hour. */
static int read_timeout(const struct reader *rd, const struct toml_value *t, unsigned *ms)
{
        const struct toml_value *v = NULL;
        int r = toml_get(t, "timeout", TOML_STRING, rd->file, &v, rd->err);
        if (r <= 0)
                return r;
        char *end = NULL;
        errno = 0;
        unsigned long long n = strtoull(v->string, &end, 10);
        unsigned long long scale = strcmp(end, "ms") == 0  ? 1
                                   : strcmp(end, "s") == 0 ? 1000
                                   : strcmp(end, "m") == 0 ? 60000
                                                           : 0;
        if (v->string[0] < '0' || v->string[0] > '9' || errno || !scale || n == 0 ||
            n > HOST_ACTION_TIMEOUT_MAX / scale)
                return at(rd, v, "timeout",
                          "expected a duration of 1ms to 60m (\"250ms\", \"10s\", \"2m\"), "
                          "found '%s'",
                          v->string);
        *ms = (unsigned)(n * scale);
        return 0;
}

static int bounded_int(const struct reader *rd, const struct toml_value *t, const char *key,
                       int64_t lo, int64_t hi, int64_t *out)
{
        const struct toml_value *v = NULL;
        int r = toml_get(t, key, TOML_INTEGER, rd->file, &v, rd->err);
        if (r <= 0)
                return r;
        if (v->integer < lo || v->integer > hi)
                return at(rd, v, key, "expected %" PRId64 " to %" PRId64 ", found %" PRId64, lo, hi,
                          v->integer);
        *out = v->integer;
        return 0;
}

static int read_params(const struct reader *rd, const struct toml_value *t, struct host_action *a)
{
        const struct toml_value *p = NULL;
        int r = toml_get(t, "params", TOML_TABLE, rd->file, &p, rd->err);
        if (r <= 0)
                return r;
        if (p->table.n > HOST_ACTION_PARAMS_MAX)
                return at(rd, p, "params", "expected at most %d parameters",
                          HOST_ACTION_PARAMS_MAX);
        for (size_t i = 0; i < p->table.n; i++) {
                const struct toml_entry *e = &p->table.entries[i];
                if (!name_ok(e->key, HOST_ACTION_PARAM_MAX, LOWER_DIGITS "_", LOWER_DIGITS "_"))
                        return at(rd, e->value, e->key,
                                  "expected a parameter name of 1 to %d of [a-z0-9_]",
                                  HOST_ACTION_PARAM_MAX);
                struct host_action_param *q = &a->params[a->n_params++];
                q->name = e->key;
                if ((r = strings(rd, p, e->key, 1, 64, &q->values)) < 0)
                        return r;
                for (const char *const *v = q->values; *v; v++)
                        if (strlen(*v) < 1 || strlen(*v) > HOST_ACTION_VALUE_MAX)
                                return at(rd, e->value, e->key, "expected values of 1 to %d bytes",
                                          HOST_ACTION_VALUE_MAX);
        }
        return 0;
}

/* The environment: the table's NAME = "value" pairs, then PATH and LANG
 * where it sets neither. Nothing else, nothing inherited. */
static int read_env(const struct reader *rd, const struct toml_value *t, struct host_action *a)
{
        const struct toml_value *e = NULL;
        int r = toml_get(t, "env", TOML_TABLE, rd->file, &e, rd->err);
        if (r < 0)
                return r;
        size_t n = e ? e->table.n : 0;
        if (n > HOST_ACTION_ENV_MAX)
                return at(rd, e, "env", "expected at most %d variables", HOST_ACTION_ENV_MAX);
        const char **env = own(rd->o, calloc(n + 3, sizeof(*env)));
        if (!env)
                return umw_fail_sys(rd->err, ENOMEM, "%s", rd->file);
        bool path = false, lang = false;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                const struct toml_entry *v = &e->table.entries[i];
                if (!name_ok(v->key, 128, ENV_FIRST, ENV_FIRST "0123456789"))
                        return at(rd, v->value, v->key, "expected a variable name");
                if (v->value->kind != TOML_STRING)
                        return at(rd, v->value, v->key, "expected a string, found %s",
                                  toml_kind_name(v->value->kind));
                char *pair = NULL;
                if (asprintf(&pair, "%s=%s", v->key, v->value->string) < 0 ||
                    !(env[k++] = own(rd->o, pair)))
                        return umw_fail_sys(rd->err, ENOMEM, "%s", rd->file);
                path |= strcmp(v->key, "PATH") == 0;
                lang |= strcmp(v->key, "LANG") == 0;
        }
        if (!path)
                env[k++] = DEFAULT_PATH;
        if (!lang)
                env[k++] = DEFAULT_LANG;
        a->env = env;
        return 0;
}

static const struct host_action_param *param_named(const struct host_action *a, const char *name,
                                                   size_t len)
{
        for (size_t i = 0; i < a->n_params; i++)
                if (strlen(a->params[i].name) == len && memcmp(a->params[i].name, name, len) == 0)
                        return &a->params[i];
        return NULL;
}

/* The placeholder at s ('{'): its length with the braces, and its
 * parameter (NULL: not one declared). */
static size_t placeholder(const struct host_action *a, const char *s,
                          const struct host_action_param **p)
{
        const char *close = strchr(s, '}');
        *p = close ? param_named(a, s + 1, (size_t)(close - s - 1)) : NULL;
        return close ? (size_t)(close - s + 1) : 0;
}

/* argv[0] a fixed absolute program; every '{' elsewhere opens a declared
 * parameter's placeholder. */
static int check_argv(const struct reader *rd, const struct toml_value *t, struct host_action *a)
{
        const struct toml_value *v = toml_table_get(t, "argv");
        int r = absolute(rd, v, "argv", a->argv[0]);
        if (r < 0)
                return r;
        if (strchr(a->argv[0], '{'))
                return at(rd, v, "argv", "argv[0] is the program itself: no placeholder");
        for (size_t i = 1; a->argv[i]; i++)
                for (const char *s = strchr(a->argv[i], '{'); s; s = strchr(s + 1, '{')) {
                        const struct host_action_param *p;
                        if (!placeholder(a, s, &p) || !p)
                                return at(rd, v, "argv",
                                          "argv[%zu]: '%s' uses a placeholder that is not a "
                                          "parameter declared in [action.params]",
                                          i, a->argv[i]);
                }
        return 0;
}

static int read_name(const struct reader *rd, const struct toml_value *t, struct host_action *a)
{
        const struct toml_value *v = NULL;
        int r = toml_get(t, "name", TOML_STRING, rd->file, &v, rd->err);
        if (r < 0)
                return r;
        if (!r)
                return umw_fail(rd->err, UMW_EXIT_CONFIG, EINVAL,
                                "%s:%u:%u: [[action]]: expected a 'name'", rd->file, t->line,
                                t->column);
        if (!name_ok(v->string, HOST_ACTION_NAME_MAX, LOWER_DIGITS, LOWER_DIGITS "._-"))
                return at(rd, v, "name", "expected 1 to %d of [a-z0-9._-], starting with [a-z0-9]",
                          HOST_ACTION_NAME_MAX);
        a->name = v->string;
        return 0;
}

static int read_action(const struct reader *rd, const struct toml_value *t, struct host_action *a)
{
        static const char *const keys[] = {
            "name", "description", "argv",         "timeout",     "users",  "projects", "ask",
            "cwd",  "env",         "output_limit", "concurrency", "params", NULL};
        int64_t limit = HOST_ACTION_OUTPUT_DEF, concurrency = 1;
        *a = (struct host_action){.timeout_ms = 30000, .ask = true, .cwd = "/", .description = ""};
        int r;
        if ((r = toml_check_keys(t, keys, rd->file, rd->err)) < 0 ||
            (r = read_name(rd, t, a)) < 0 ||
            (r = toml_get_string(t, "description", rd->file, &a->description, rd->err)) < 0 ||
            (r = strings(rd, t, "argv", 1, HOST_ACTION_ARGV_MAX, &a->argv)) < 0)
                return r;
        if (!a->argv)
                return umw_fail(rd->err, UMW_EXIT_CONFIG, EINVAL,
                                "%s:%u:%u: action '%s': expected an 'argv'", rd->file, t->line,
                                t->column, a->name);
        if ((r = read_timeout(rd, t, &a->timeout_ms)) < 0 ||
            (r = strings(rd, t, "users", 1, 256, &a->users)) < 0 ||
            (r = strings(rd, t, "projects", 1, 256, &a->projects)) < 0 ||
            (r = toml_get_bool(t, "ask", rd->file, &a->ask, rd->err)) < 0 ||
            (r = toml_get_string(t, "cwd", rd->file, &a->cwd, rd->err)) < 0 ||
            (r = absolute(rd, t, "cwd", a->cwd)) < 0 ||
            (r = bounded_int(rd, t, "output_limit", 0, HOST_ACTION_OUTPUT_MAX, &limit)) < 0 ||
            (r = bounded_int(rd, t, "concurrency", 1, HOST_ACTION_CONCURRENCY_MAX, &concurrency)) <
                0 ||
            (r = read_params(rd, t, a)) < 0 || (r = read_env(rd, t, a)) < 0 ||
            (r = check_argv(rd, t, a)) < 0)
                return r;
        for (const char *const *p = a->projects; p && *p; p++)
                if ((r = absolute(rd, toml_table_get(t, "projects"), "projects", *p)) < 0)
                        return r;
        a->output_limit = (size_t)limit;
        a->concurrency = (unsigned)concurrency;
        return 0;
}

static int read_table(const struct reader *rd, struct host_actions *out)
{
        static const char *const keys[] = {"action", NULL};
        const struct toml_value *list = NULL;
        int r;
        if ((r = toml_check_keys(rd->o->root, keys, rd->file, rd->err)) < 0 ||
            (r = toml_get(rd->o->root, "action", TOML_ARRAY, rd->file, &list, rd->err)) <= 0)
                return r;
        if (!list->is_table_array)
                return at(rd, list, "action", "expected [[action]] tables");
        out->items = calloc(list->array.n + 1, sizeof(*out->items));
        if (!out->items)
                return umw_fail_sys(rd->err, ENOMEM, "%s", rd->file);
        for (size_t i = 0; i < list->array.n; i++) {
                const struct toml_value *t = list->array.items[i];
                if ((r = read_action(rd, t, &out->items[i])) < 0)
                        return r;
                if (host_actions_find(out, out->items[i].name))
                        return at(rd, toml_table_get(t, "name"), "name",
                                  "action '%s' is defined twice", out->items[i].name);
                out->n++;
        }
        return 0;
}

int host_actions_parse(const char *text, size_t len, const char *file, struct host_actions *out,
                       struct umw_error **err)
{
        *out = (struct host_actions){0};
        struct owned *o = calloc(1, sizeof(*o));
        if (!o)
                return umw_fail_sys(err, ENOMEM, "%s", file);
        out->owned = o;
        struct reader rd = {.file = file, .o = o, .err = err};
        int r = toml_parse(text, len, file, &o->root, err);
        if (r >= 0)
                r = read_table(&rd, out);
        if (r < 0)
                host_actions_free(out);
        return r;
}

/* Root's, and nobody else may write it: else whoever could would choose
 * what runs on the host. */
static int check_owner(int fd, const char *path, bool dir, struct umw_error **err)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return umw_fail_errno(err, "stat %s", path);
        if ((dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) || st.st_uid != 0 ||
            (st.st_mode & 022))
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                                "%s: expected a %s owned by root and not writable by group or "
                                "others: every host action is refused",
                                path, dir ? "directory" : "regular file");
        return 0;
}

int host_actions_load(struct host_actions *out, struct umw_error **err)
{
        *out = (struct host_actions){0};
        _cleanup_close_ int dir =
            open(HOST_ACTIONS_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir < 0 && errno == ENOENT)
                return 0;
        if (dir < 0)
                return umw_fail_errno(err, "open %s", HOST_ACTIONS_DIR);
        int r = check_owner(dir, HOST_ACTIONS_DIR, true, err);
        if (r < 0)
                return r;
        /* O_NONBLOCK: a FIFO planted under the name must not hang the open. */
        _cleanup_close_ int fd =
            openat(dir, "host-actions.toml", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
                return 0;
        if (fd < 0)
                return umw_fail_errno(err, "open %s", HOST_ACTIONS_FILE);
        if ((r = check_owner(fd, HOST_ACTIONS_FILE, false, err)) < 0)
                return r;
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        if ((r = umw_read_fd(fd, HOST_ACTIONS_FILE, TOML_MAX_FILE_SIZE, &text, &len, err)) < 0)
                return r;
        return host_actions_parse(text, len, HOST_ACTIONS_FILE, out, err);
}

const struct host_action *host_actions_find(const struct host_actions *t, const char *name)
{
        for (size_t i = 0; i < t->n; i++)
                if (strcmp(t->items[i].name, name) == 0)
                        return &t->items[i];
        return NULL;
}

bool host_action_for_user(const struct host_action *a, const char *user)
{
        return !a->users || umw_strv_contains(a->users, user);
}

bool host_action_offered(const struct host_action *a, const char *user, const char *project)
{
        return host_action_for_user(a, user) &&
               (!a->projects || umw_strv_contains(a->projects, project));
}

/* ------------------------------------------------------------ a run's argv */

static const char *arg_value(const struct host_action_arg *args, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(args[i].name, name) == 0)
                        return args[i].value;
        return NULL;
}

/* Each argument names a declared parameter, once, with one of its values. */
static int check_args(const struct host_action *a, const struct host_action_arg *args, size_t n,
                      struct umw_error **err)
{
        for (size_t i = 0; i < n; i++) {
                const struct host_action_param *p =
                    param_named(a, args[i].name, strlen(args[i].name));
                if (!p)
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "action %s: no parameter '%s'", a->name, args[i].name);
                if (arg_value(args, i, args[i].name))
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "action %s: parameter '%s' given twice", a->name, p->name);
                if (!umw_strv_contains(p->values, args[i].value))
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "action %s: parameter '%s': not one of its values", a->name,
                                        p->name);
        }
        for (size_t i = 0; i < a->n_params; i++)
                if (!arg_value(args, n, a->params[i].name))
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "action %s: parameter '%s' is required", a->name,
                                        a->params[i].name);
        return 0;
}

/* One argv element with its placeholders replaced (malloc'd). */
static char *expand(const struct host_action *a, const char *s, const struct host_action_arg *args,
                    size_t n)
{
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        if (!f)
                return NULL;
        while (*s) {
                const struct host_action_param *p = NULL;
                size_t skip = *s == '{' ? placeholder(a, s, &p) : 0;
                if (p) {
                        fputs(arg_value(args, n, p->name), f);
                        s += skip;
                } else {
                        fputc(*s++, f);
                }
        }
        if (fclose(f) != 0) {
                free(out);
                return NULL;
        }
        return out;
}

int host_action_argv(const struct host_action *a, const struct host_action_arg *args, size_t n,
                     char ***argv, struct umw_error **err)
{
        int r = check_args(a, args, n, err);
        if (r < 0)
                return r;
        size_t count = 0;
        while (a->argv[count])
                count++;
        char **out = calloc(count + 1, sizeof(*out));
        if (!out)
                return umw_fail_sys(err, ENOMEM, "action %s", a->name);
        for (size_t i = 0; i < count; i++)
                if (!(out[i] = i ? expand(a, a->argv[i], args, n) : strdup(a->argv[0]))) {
                        host_action_argv_free(out);
                        return umw_fail_sys(err, ENOMEM, "action %s", a->name);
                }
        *argv = out;
        return 0;
}

void host_action_argv_free(char **argv)
{
        for (char **p = argv; p && *p; p++)
                free(*p);
        free(argv);
}
