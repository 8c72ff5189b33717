/* The record of an install: each change it made, with what was there
 * before, so that uninstall takes out exactly what install put in and puts
 * back what it replaced (a deny rule the user had already is not ours to
 * remove). It lives in umwelt's state directory, out of every sandbox's
 * reach, as STATE/mcp-install/HARNESS-HASH.json, HASH naming the project. */
#include "mcp/install_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/paths.h"
#include "common/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const op_names[] = {
    [CH_FILE] = "file",   [CH_DIR] = "dir",           [CH_OBJECT] = "object",
    [CH_ARRAY] = "array", [CH_MEMBER] = "member",     [CH_ELEMENT] = "element",
    [CH_TABLE] = "table", [CH_TOML_KEY] = "toml-key", [CH_TOML_BODY] = "toml-body",
};

void change_free(struct change *c)
{
        for (size_t i = 0; i < c->n; i++)
                free(c->path[i]);
        free(c->path);
        free(c->file);
        free(c->new);
        free(c->old);
        free(c->before);
        *c = (struct change){0};
}

void changes_free(struct changes *cs)
{
        for (size_t i = 0; i < cs->n; i++)
                change_free(&cs->v[i]);
        free(cs->v);
        *cs = (struct changes){0};
}

int changes_add(struct changes *cs, struct change *c)
{
        if (cs->n == cs->cap) {
                size_t cap = cs->cap ? 2 * cs->cap : 8;
                struct change *v = realloc(cs->v, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                cs->v = v;
                cs->cap = cap;
        }
        cs->v[cs->n++] = *c;
        *c = (struct change){0};
        return 0;
}

static bool same_path(const struct change *a, const struct change *b)
{
        if (a->n != b->n || strcmp(a->file, b->file) != 0)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (strcmp(a->path[i], b->path[i]) != 0)
                        return false;
        return true;
}

const struct change *changes_find(const struct changes *cs, const struct change *c)
{
        for (size_t i = 0; cs && i < cs->n; i++) {
                const struct change *o = &cs->v[i];
                if (o->op == c->op && same_path(o, c) &&
                    (c->op != CH_ELEMENT || strcmp(o->new, c->new) == 0))
                        return o;
        }
        return NULL;
}

static int dup_opt(const char *s, char **out)
{
        *out = s ? strdup(s) : NULL;
        return s && !*out ? -ENOMEM : 0;
}

static int fill_change(struct change *c, const char *file, const char *const *path, size_t n,
                       const char *new, const char *old)
{
        c->path = calloc(n + 1, sizeof(*c->path));
        if (!c->path || dup_opt(file, &c->file) < 0 || dup_opt(new, &c->new) < 0 ||
            dup_opt(old, &c->old) < 0)
                return -ENOMEM;
        for (; c->n < n; c->n++)
                if (!(c->path[c->n] = strdup(path[c->n])))
                        return -ENOMEM;
        return 0;
}

int change_make(struct change *c, enum change_op op, const char *file, const char *const *path,
                size_t n, const char *new, const char *old)
{
        *c = (struct change){.op = op};
        int r = fill_change(c, file, path, n, new, old);
        if (r < 0)
                change_free(c);
        return r;
}

char *change_path(const struct change *c)
{
        return text_dotted((const char *const *)c->path, c->n);
}

int record_path(const char *harness, const char *project, char **path, struct umw_error **err)
{
        struct umw_sha256 h;
        char hex[2 * UMW_SHA256_LEN + 1];
        umw_sha256_init(&h);
        umw_sha256_update(&h, project, strlen(project));
        umw_sha256_hex(&h, hex);
        _cleanup_free_ char *name = NULL;
        if (asprintf(&name, "mcp-install/%s-%.16s.json", harness, hex) < 0)
                return umw_fail_sys(err, ENOMEM, "record");
        return umw_state_dir(name, path, err);
}

static void gen_opt(yajl_gen g, const char *key, const char *value)
{
        umw_jgen_key(g, key);
        if (value)
                umw_jgen_str(g, value);
        else
                yajl_gen_null(g);
}

static void gen_change(yajl_gen g, const struct change *c)
{
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "op", op_names[c->op]);
        umw_jgen_key_str(g, "file", c->file);
        umw_jgen_key(g, "path");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < c->n; i++)
                umw_jgen_str(g, c->path[i]);
        yajl_gen_array_close(g);
        gen_opt(g, "new", c->new);
        gen_opt(g, "old", c->old);
        gen_opt(g, "before", c->before);
        yajl_gen_map_close(g);
}

int record_write(const char *path, const char *harness, const char *project,
                 const struct changes *cs, struct umw_error **err)
{
        yajl_gen g = umw_jgen_new(true);
        if (!g)
                return umw_fail_sys(err, ENOMEM, "record %s", path);
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "harness", harness);
        umw_jgen_key_str(g, "project", project);
        umw_jgen_key(g, "changes");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < cs->n; i++)
                gen_change(g, &cs->v[i]);
        yajl_gen_array_close(g);
        yajl_gen_map_close(g);
        size_t len;
        _cleanup_free_ char *text = umw_jgen_finish(g, &len);
        _cleanup_free_ char *dir = strdup(path);
        if (!text || !dir)
                return umw_fail_sys(err, ENOMEM, "record %s", path);
        char *slash = strrchr(dir, '/');
        *slash = '\0';
        int r = umw_mkdir_p(dir, 0700, 0700, err);
        if (r < 0)
                return r;
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return umw_fail_errno(err, "open %s", dir);
        return umw_write_file_atomic(dfd, slash + 1, text, len, 0600, err);
}

static int read_opt(yajl_val obj, const char *key, const struct umw_jloc *loc, char **out,
                    struct umw_error **err)
{
        yajl_val v = umw_json_member(obj, key);
        const char *s;
        *out = NULL;
        if (!v)
                return 0;
        struct umw_jloc at = umw_jloc_key(loc, key);
        int r = umw_json_string(v, &at, &s, err);
        if (r < 0)
                return r;
        return (*out = strdup(s)) ? 0 : umw_fail_sys(err, ENOMEM, "record");
}

static int read_op(yajl_val v, const struct umw_jloc *loc, enum change_op *op,
                   struct umw_error **err)
{
        const char *name;
        struct umw_jloc at = umw_jloc_key(loc, "op");
        int r = umw_json_string(umw_json_member(v, "op"), &at, &name, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ARRAY_SIZE(op_names); i++)
                if (strcmp(op_names[i], name) == 0) {
                        *op = (enum change_op)i;
                        return 0;
                }
        return umw_json_expected(&at, "a change's kind", err);
}

static int read_change(yajl_val v, const struct umw_jloc *loc, struct change *c,
                       struct umw_error **err)
{
        enum change_op op = CH_FILE;
        const char *file, **path;
        size_t n;
        struct umw_jloc at_file = umw_jloc_key(loc, "file"), at_path = umw_jloc_key(loc, "path");
        int r;
        if ((r = umw_json_object(v, loc, err)) < 0 || (r = read_op(v, loc, &op, err)) < 0 ||
            (r = umw_json_string(umw_json_member(v, "file"), &at_file, &file, err)) < 0 ||
            (r = umw_json_strv(umw_json_member(v, "path"), &at_path, &path, &n, err)) < 0)
                return r;
        r = change_make(c, op, file, path, n, NULL, NULL);
        free(path);
        if (r < 0)
                return umw_fail_sys(err, -r, "record");
        if ((r = read_opt(v, "new", loc, &c->new, err)) < 0 ||
            (r = read_opt(v, "old", loc, &c->old, err)) < 0 ||
            (r = read_opt(v, "before", loc, &c->before, err)) < 0)
                change_free(c);
        return r;
}

static int read_changes(yajl_val doc, const char *path, struct changes *cs, struct umw_error **err)
{
        struct umw_jloc root, at;
        umw_jloc_init(&root, path);
        at = umw_jloc_key(&root, "changes");
        yajl_val arr = umw_json_member(doc, "changes");
        int r = umw_json_array(arr, &at, err);
        for (size_t i = 0; r == 0 && i < arr->u.array.len; i++) {
                struct umw_jloc el = umw_jloc_index(&at, i);
                struct change c;
                if ((r = read_change(arr->u.array.values[i], &el, &c, err)) < 0)
                        break;
                if ((r = changes_add(cs, &c)) < 0) {
                        change_free(&c);
                        r = umw_fail_sys(err, -r, "record %s", path);
                }
        }
        return r;
}

int record_read(const char *path, struct changes *cs, struct umw_error **err)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
                return 0;
        if (fd < 0)
                return umw_fail_errno(err, "open %s", path);
        int r = umw_read_fd(fd, path, INSTALL_MAX_FILE, &text, &len, err);
        if (r < 0)
                return r;
        yajl_val doc;
        if ((r = umw_json_parse(text, path, &doc, err)) < 0)
                return r;
        r = read_changes(doc, path, cs, err);
        yajl_tree_free(doc);
        if (r < 0)
                changes_free(cs);
        return r < 0 ? r : 1;
}

int record_remove(const char *path, struct umw_error **err)
{
        if (unlink(path) < 0 && errno != ENOENT)
                return umw_fail_errno(err, "remove %s", path);
        return 0;
}
