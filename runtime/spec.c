/* config.json as a whole: its top-level members (root, mounts, annotations;
 * process, hooks and linux in spec_process.c, spec_hooks.c, spec_linux.c)
 * and the life of a struct spec, from spec_load to spec_free. */
#include "runtime/spec.h"
#include "runtime/spec_int.h"
#include "common/cleanup.h"
#include "common/fdio.h"
#include "common/json.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

/* config.json is a few KiB; anything near this is not a config. */
#define SPEC_MAX_SIZE (16u * 1024 * 1024)

/* Keys we read, per object; anything else is a newer or foreign extension. */
static const char *const top_keys[] = {"ociVersion", "root",   "process", "hostname",
                                       "domainname", "mounts", "hooks",   "annotations",
                                       "linux",      NULL};

static int parse_mount(yajl_val obj, const struct umw_jloc *loc, struct spec_mount *m,
                       struct umw_error **err)
{
        struct umw_jloc dest_at = umw_jloc_key(loc, "destination");
        int r;
        if ((r = umw_json_object(obj, loc, err)) < 0 ||
            (r = spec_read_absolute_path(umw_json_member(obj, "destination"), &dest_at,
                                         &m->destination, err)) < 0 ||
            (r = member_string(obj, loc, "type", false, &m->type, err)) < 0 ||
            (r = member_string(obj, loc, "source", false, &m->source, err)) < 0 ||
            (r = member_strv(obj, loc, "options", &m->options, &m->n_options, err)) < 0)
                return r;
        yajl_val v;
        struct umw_jloc at;
        if ((r = member_typed(obj, loc, "uidMappings", true, &v, &at, err)) < 0 ||
            (v && (r = spec_parse_idmaps(v, &at, &m->uid_mappings, &m->n_uid_mappings, err)) < 0))
                return r;
        if ((r = member_typed(obj, loc, "gidMappings", true, &v, &at, err)) < 0 ||
            (v && (r = spec_parse_idmaps(v, &at, &m->gid_mappings, &m->n_gid_mappings, err)) < 0))
                return r;
        return 0;
}

static int parse_mounts(yajl_val arr, const struct umw_jloc *loc, struct spec *spec,
                        struct umw_error **err)
{
        int r = spec_alloc_array(arr->u.array.len, sizeof(*spec->mounts), &spec->mounts, err);
        if (r < 0)
                return r;
        spec->n_mounts = arr->u.array.len;
        for (size_t i = 0; i < arr->u.array.len; i++) {
                struct umw_jloc at = umw_jloc_index(loc, i);
                r = parse_mount(arr->u.array.values[i], &at, &spec->mounts[i], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_root(yajl_val top, const struct umw_jloc *loc, struct spec *spec,
                      struct umw_error **err)
{
        struct umw_jloc at = umw_jloc_key(loc, "root");
        yajl_val root = umw_json_member(top, "root");
        int r;
        if ((r = umw_json_object(root, &at, err)) < 0 ||
            (r = member_string(root, &at, "path", true, &spec->root_path, err)) < 0)
                return r;
        return member_bool(root, &at, "readonly", &spec->root_readonly, err);
}

static int parse_spec(yajl_val top, const struct umw_jloc *loc, struct spec *spec,
                      struct umw_error **err)
{
        struct umw_jloc at;
        yajl_val v;
        int r;
        if ((r = umw_json_object(top, loc, err)) < 0)
                return r;
        spec_note_unknown_keys(top, loc, top_keys);
        if ((r = member_string(top, loc, "ociVersion", true, &spec->oci_version, err)) < 0 ||
            (r = parse_root(top, loc, spec, err)) < 0 ||
            (r = member_string(top, loc, "hostname", false, &spec->hostname, err)) < 0 ||
            (r = member_string(top, loc, "domainname", false, &spec->domainname, err)) < 0)
                return r;
        if ((r = member_typed(top, loc, "process", false, &v, &at, err)) < 0 ||
            (v && (r = spec_parse_process(v, &at, &spec->process, err)) < 0))
                return r;
        if ((r = member_typed(top, loc, "mounts", true, &v, &at, err)) < 0 ||
            (v && (r = parse_mounts(v, &at, spec, err)) < 0))
                return r;
        if ((r = member_typed(top, loc, "hooks", false, &v, &at, err)) < 0 ||
            (v && (r = spec_parse_hooks(v, &at, spec, err)) < 0))
                return r;
        if ((r = member_typed(top, loc, "annotations", false, &v, &at, err)) < 0 ||
            (v &&
             (r = spec_parse_kv_object(v, &at, &spec->annotations, &spec->n_annotations, err)) < 0))
                return r;
        if ((r = member_typed(top, loc, "linux", false, &v, &at, err)) < 0 ||
            (v && (r = spec_parse_linux(v, &at, spec, err)) < 0))
                return r;
        return 0;
}

int spec_load(const char *text, const char *file, struct spec **out, struct umw_error **err)
{
        struct umw_jloc loc;
        struct spec *spec = calloc(1, sizeof(*spec));
        if (!spec || !(spec->file = strdup(file))) {
                free(spec);
                return spec_oom(err);
        }
        /* In one arena: read at every start and exec (the sandbox's: 30 kB). */
        umw_jloc_init(&loc, file);
        int r;
        if ((r = umw_json_parse_doc(text, file, &spec->tree, err)) < 0 ||
            (r = parse_spec(spec->tree, &loc, spec, err)) < 0 ||
            (r = spec_check_netwall(spec, spec_annotation(spec, SPEC_NETWALL_ANNOTATION), file,
                                    err)) < 0) {
                spec_free(spec);
                return r;
        }
        *out = spec;
        return 0;
}

int spec_load_file(const char *path, struct spec **out, struct umw_error **err)
{
        _cleanup_free_ char *text = NULL;
        int r = umw_read_file_at(AT_FDCWD, path, SPEC_MAX_SIZE, &text, NULL, err);
        if (r < 0)
                return r;
        return spec_load(text, path, out, err);
}

static void seccomp_free(struct spec_seccomp *sc)
{
        if (!sc)
                return;
        for (size_t i = 0; sc->rules && i < sc->n_rules; i++) {
                free(sc->rules[i].names);
                free(sc->rules[i].args);
        }
        free(sc->rules);
        free(sc->architectures);
        free(sc->flags);
        free(sc);
}

void spec_free(struct spec *spec)
{
        if (!spec)
                return;
        spec_process_release(&spec->process);
        for (size_t i = 0; spec->mounts && i < spec->n_mounts; i++) {
                free(spec->mounts[i].options);
                free(spec->mounts[i].uid_mappings);
                free(spec->mounts[i].gid_mappings);
        }
        free(spec->mounts);
        for (int kind = 0; kind < SPEC_HOOK_COUNT; kind++) {
                for (size_t i = 0; i < spec->hooks[kind].count; i++) {
                        free(spec->hooks[kind].list[i].args);
                        free(spec->hooks[kind].list[i].env);
                }
                free(spec->hooks[kind].list);
        }
        free(spec->annotations);
        free(spec->uid_mappings);
        free(spec->gid_mappings);
        free(spec->devices);
        free(spec->sysctl);
        seccomp_free(spec->seccomp);
        free(spec->masked_paths);
        free(spec->readonly_paths);
        umw_json_doc_free(spec->tree);
        free(spec->file);
        free(spec);
}

const char *spec_annotation(const struct spec *spec, const char *key)
{
        for (size_t i = 0; i < spec->n_annotations; i++) {
                if (strcmp(spec->annotations[i].key, key) == 0)
                        return spec->annotations[i].value;
        }
        return NULL;
}
