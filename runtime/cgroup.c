#include "runtime/cgroup.h"
#include "runtime/cgroup_bpf.h"
#include "runtime/cgroup_host.h"
#include "runtime/cgroup_map.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const v1_controller_names[] = {
    "cpu",  "cpuacct", "cpuset",  "memory",   "devices",    "freezer", "blkio",
    "pids", "hugetlb", "net_cls", "net_prio", "perf_event", "rdma",    "misc"};

static const struct hierarchy *v1_with(const struct host *host, const char *controller)
{
        for (size_t i = 0; i < host->n; i++)
                if (!host->h[i].v2 && cgroup_has_controller(&host->h[i], controller))
                        return &host->h[i];
        return NULL;
}

/* A v1 or hybrid host: some v1 hierarchy carries a controller (a named one
 * such as name=systemd carries none). */
static bool has_v1(const struct host *host)
{
        for (size_t i = 0; i < ARRAY_SIZE(v1_controller_names); i++)
                if (v1_with(host, v1_controller_names[i]))
                        return true;
        return false;
}

/* The deepest existing directory of path in h (the hierarchy root at least). */
static int nearest_existing(const struct hierarchy *h, const char *path, char *dir, size_t size)
{
        int n = snprintf(dir, size, "%s/%s", h->mountpoint, path);
        if (n < 0 || (size_t)n >= size)
                return -ENAMETOOLONG;
        size_t root_len = strlen(h->mountpoint);
        struct stat st;
        while (stat(dir, &st) < 0) {
                char *slash = strrchr(dir, '/');
                if (!slash || (size_t)(slash - dir) < root_len)
                        return -errno;
                *slash = '\0';
        }
        return 0;
}

/* On v2 the container can have what the highest ancestor we may enable
 * controllers below offers: the root's for root, the delegated subtree's
 * (often less) for a user. */
static void v2_available(struct hierarchy *h, const char *path)
{
        char dir[1024], parent[1100];
        if (nearest_existing(h, path, dir, sizeof(dir)) < 0)
                snprintf(dir, sizeof(dir), "%s", h->mountpoint);
        size_t root_len = strlen(h->mountpoint);
        char *slash;
        while (strlen(dir) > root_len && (slash = strrchr(dir, '/'))) {
                snprintf(parent, sizeof(parent), "%.*s/cgroup.subtree_control", (int)(slash - dir),
                         dir);
                if (access(parent, W_OK) < 0)
                        break;
                *slash = '\0';
        }
        _cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        cgroup_read_small(fd, "cgroup.controllers", h->controllers, sizeof(h->controllers));
}

/* A user's part of a pure cgroup v2 host: the highest ancestor of our own
 * cgroup (the 0:: line of /proc/self/cgroup) whose directory and
 * cgroup.procs we may write, as systemd delegates user@UID.service. Below
 * the root's children only root writes, and moving a process needs
 * cgroup.procs of the common ancestor writable: a user's containers can
 * live nowhere else. Empty where there is none, or on a v1 or hybrid host
 * (there a directory per controller is delegated: umwelt-run-UID). */
static void v2_delegated_base(char *base, size_t size)
{
        base[0] = '\0';
        struct host host;
        _cleanup_error_ struct umw_error *ignored = NULL;
        if (cgroup_host_find(&host, &ignored) < 0 || has_v1(&host) || !cgroup_unified(&host))
                return;
        const struct hierarchy *v2 = cgroup_unified(&host);
        char self[1024];
        _cleanup_close_ int fd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
        cgroup_read_small(fd, "cgroup", self, sizeof(self));
        char *line = strstr(self, "0::/");
        if (!line || (line != self && line[-1] != '\n'))
                return;
        line += 4;
        line[strcspn(line, "\n")] = '\0';
        for (;;) {
                char dir[1100], procs[1200];
                snprintf(dir, sizeof(dir), "%s/%s", v2->mountpoint, line);
                snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
                if (!line[0] || access(dir, W_OK) < 0 || access(procs, W_OK) < 0)
                        return;
                snprintf(base, size, "%s", line);
                char *slash = strrchr(line, '/');
                if (!slash)
                        return;
                *slash = '\0';
        }
}

int cgroup_path_resolve(const char *cgroups_path, const char *id, enum cgroup_manager manager,
                        char **out, struct umw_error **err)
{
        char *path = NULL;
        if (!cgroups_path || !*cgroups_path) {
                /* A user's containers under a parent of their own, so
                 * delegating one directory to them gives nothing of root's;
                 * on pure v2, in what is delegated to them. */
                uid_t uid = geteuid();
                char base[1024] = "";
                if (uid != 0)
                        v2_delegated_base(base, sizeof(base));
                int n = uid == 0  ? asprintf(&path, "umwelt-run/%s", id)
                        : base[0] ? asprintf(&path, "%s/umwelt-run/%s", base, id)
                                  : asprintf(&path, "umwelt-run-%u/%s", (unsigned)uid, id);
                if (n < 0)
                        return umw_fail_sys(err, ENOMEM, "cgroup path");
                *out = path;
                return 0;
        }
        const char *colon = strchr(cgroups_path, ':');
        if (manager == CGROUP_MANAGER_SYSTEMD && colon && cgroups_path[0] != '/') {
                /* "machine.slice:libpod:ID" is the scope machine.slice/libpod-ID.scope. */
                char slice[256], prefix[256], name[512];
                if (sscanf(cgroups_path, "%255[^:]:%255[^:]:%511s", slice, prefix, name) != 3)
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        ".linux.cgroupsPath: expected "
                                        "slice:prefix:name, got '%s'",
                                        cgroups_path);
                if (asprintf(&path, "%s/%s-%s.scope", slice, prefix, name) < 0)
                        return umw_fail_sys(err, ENOMEM, "cgroup path");
        } else {
                while (*cgroups_path == '/')
                        cgroups_path++;
                path = strdup(cgroups_path);
                if (!path)
                        return umw_fail_sys(err, ENOMEM, "cgroup path");
        }
        /* No component may climb out or be empty. */
        bool bad = path[0] == '\0';
        for (char *c = path; !bad && c;) {
                char *slash = strchr(c, '/');
                size_t len = slash ? (size_t)(slash - c) : strlen(c);
                bad = len == 0 || (len == 2 && c[0] == '.' && c[1] == '.') ||
                      (len == 1 && c[0] == '.');
                c = slash ? slash + 1 : NULL;
        }
        if (bad) {
                free(path);
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                ".linux.cgroupsPath: expected a path without '.', "
                                "'..' or empty components, got '%s'",
                                cgroups_path);
        }
        *out = path;
        return 0;
}

/* ---------------------------------------------------------------- plan */

struct cgroup_write {
        const struct hierarchy *h;
        const struct cgroup_setting *s;
};

struct cgroup_plan {
        char *path;
        bool strict;
        struct host host;
        struct cgroup_settings v1, v2;
        struct cgroup_write *w;
        size_t n_w;
        char v2_enable[256]; /* "+hugetlb +memory": enabled down to the container */
        /* For v1 devices.allow/deny, and the v2 BPF program. */
        struct cgroup_device_rule *rules;
        size_t n_rules;
};

void cgroup_plan_free(struct cgroup_plan *p)
{
        if (!p)
                return;
        free(p->path);
        cgroup_settings_release(&p->v1);
        cgroup_settings_release(&p->v2);
        free(p->w);
        free(p->rules);
        free(p);
}

static int add_write(struct cgroup_plan *p, const struct hierarchy *h,
                     const struct cgroup_setting *s)
{
        struct cgroup_write *w = reallocarray(p->w, p->n_w + 1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        p->w = w;
        p->w[p->n_w++] = (struct cgroup_write){.h = h, .s = s};
        if (h->v2 && s->controller[0] && !cgroup_list_has(p->v2_enable, " +", s->controller)) {
                size_t len = strlen(p->v2_enable);
                snprintf(p->v2_enable + len, sizeof(p->v2_enable) - len, "%s+%s", len ? " " : "",
                         s->controller);
        }
        return 0;
}

static int missing_controller(const struct host *host, const struct cgroup_setting *s,
                              const char *file, struct umw_error **err)
{
        const struct hierarchy *v2 = NULL;
        for (size_t i = 0; i < host->n; i++)
                if (host->h[i].v2)
                        v2 = &host->h[i];
        char offers[600] = "";
        const char *list =
            v2 && v2->controllers[0] != '\n' && v2->controllers[0] ? v2->controllers : "none";
        if (v2)
                snprintf(offers, sizeof(offers), " (cgroup v2 at %s offers: %.*s)", v2->mountpoint,
                         (int)strcspn(list, "\n"), list);
        return umw_fail(err, UMW_EXIT_CONFIG, EOPNOTSUPP,
                        "%s: .linux.resources: %s needs the cgroup controller '%s', which is not "
                        "available here%s: enable or delegate it (systemd: Delegate=%s) or run "
                        "with --cgroup-manager disabled to start without limits",
                        file, s->file, s->controller, offers, s->controller);
}

/* resources without its "unified" member (v1 refuses it; on a hybrid host it
 * goes to the unified hierarchy instead). view borrows res's storage. */
static yajl_val without_unified(yajl_val res, struct yajl_val_s *view, const char **keys,
                                yajl_val *values)
{
        if (!YAJL_IS_OBJECT(res))
                return res;
        *view = *res;
        size_t n = 0;
        for (size_t i = 0; i < res->u.object.len; i++) {
                if (strcmp(res->u.object.keys[i], "unified") == 0)
                        continue;
                keys[n] = res->u.object.keys[i];
                values[n++] = res->u.object.values[i];
        }
        view->u.object.keys = keys;
        view->u.object.values = values;
        view->u.object.len = n;
        return view;
}

static bool is_unified_key(yajl_val res, const char *file)
{
        yajl_val u = umw_json_member(res, "unified");
        return YAJL_IS_OBJECT(u) && umw_json_member(u, file);
}

/* On a hybrid host a v1 setting goes to its v1 hierarchy; a controller only
 * the unified hierarchy has (and the unified map) is written there. */
static int plan_hybrid(struct cgroup_plan *p, yajl_val res, const char *file,
                       struct umw_error **err)
{
        struct hierarchy *v2 = cgroup_unified(&p->host);
        size_t n = YAJL_IS_OBJECT(res) ? res->u.object.len : 0;
        _cleanup_free_ const char **keys = calloc(n + 1, sizeof(*keys));
        _cleanup_free_ yajl_val *values = calloc(n + 1, sizeof(*values));
        if (!keys || !values)
                return umw_fail_sys(err, ENOMEM, "cgroup plan");
        struct yajl_val_s view;
        int r = cgroup_map_resources(without_unified(res, &view, keys, values), CGROUP_V1, file,
                                     &p->v1, err);
        if (r < 0)
                return r;
        char need_v2[256] = "";
        for (size_t i = 0; i < p->v1.n; i++) {
                const struct cgroup_setting *s = &p->v1.items[i];
                const struct hierarchy *h = v1_with(&p->host, s->controller);
                if (h && (r = add_write(p, h, s)) < 0)
                        return umw_fail_sys(err, -r, "cgroup plan");
                if (h)
                        continue;
                if (!v2 || !cgroup_has_controller(v2, s->controller))
                        return missing_controller(&p->host, s, file, err);
                size_t len = strlen(need_v2);
                snprintf(need_v2 + len, sizeof(need_v2) - len, " %s", s->controller);
        }
        yajl_val u = umw_json_member(res, "unified");
        bool has_unified = YAJL_IS_OBJECT(u) && u->u.object.len > 0;
        if (!need_v2[0] && !has_unified)
                return 0;
        if ((r = cgroup_map_resources(res, CGROUP_V2, file, &p->v2, err)) < 0)
                return r;
        for (size_t i = 0; i < p->v2.n; i++) {
                const struct cgroup_setting *s = &p->v2.items[i];
                if (!cgroup_list_has(need_v2, " ", s->controller) && !is_unified_key(res, s->file))
                        continue;
                if (!v2 || (s->controller[0] && !cgroup_has_controller(v2, s->controller)))
                        return missing_controller(&p->host, s, file, err);
                if ((r = add_write(p, v2, s)) < 0)
                        return umw_fail_sys(err, -r, "cgroup plan");
        }
        return 0;
}

static int plan_v2(struct cgroup_plan *p, yajl_val res, const char *file, struct umw_error **err)
{
        struct hierarchy *v2 = cgroup_unified(&p->host);
        int r = cgroup_map_resources(res, CGROUP_V2, file, &p->v2, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < p->v2.n; i++) {
                const struct cgroup_setting *s = &p->v2.items[i];
                if (!v2 || (s->controller[0] && !cgroup_has_controller(v2, s->controller)))
                        return missing_controller(&p->host, s, file, err);
                if ((r = add_write(p, v2, s)) < 0)
                        return umw_fail_sys(err, -r, "cgroup plan");
        }
        return 0;
}

static int plan_settings(struct cgroup_plan *p, yajl_val res, const char *file,
                         struct umw_error **err)
{
        struct hierarchy *v2 = cgroup_unified(&p->host);
        if (v2)
                v2_available(v2, p->path);
        if (has_v1(&p->host))
                return plan_hybrid(p, res, file, err);
        return plan_v2(p, res, file, err);
}

/* ---------------------------------------------------------------- devices */

static int add_rule(struct cgroup_plan *p, bool allow, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int add_rule(struct cgroup_plan *p, bool allow, const char *fmt, ...)
{
        struct cgroup_device_rule *rules = reallocarray(p->rules, p->n_rules + 1, sizeof(*rules));
        if (!rules)
                return -ENOMEM;
        p->rules = rules;
        struct cgroup_device_rule *d = &p->rules[p->n_rules++];
        d->allow = allow;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->rule, sizeof(d->rule), fmt, ap);
        va_end(ap);
        return 0;
}

static void device_number(char *buf, size_t size, yajl_val v)
{
        if (YAJL_IS_INTEGER(v) && v->u.number.i >= 0)
                snprintf(buf, size, "%lld", v->u.number.i);
        else
                snprintf(buf, size, "*");
}

/* One linux.resources.devices entry as a v1 rule. */
static int device_rule(struct cgroup_plan *p, yajl_val item, const struct umw_jloc *loc,
                       struct umw_error **err)
{
        int r = umw_json_object(item, loc, err);
        if (r < 0)
                return r;
        struct umw_jloc at = umw_jloc_key(loc, "allow");
        bool allow = false;
        yajl_val v = umw_json_member(item, "allow");
        if (!v)
                return umw_json_expected(&at, "a boolean", err);
        if ((r = umw_json_bool(v, &at, &allow, err)) < 0)
                return r;
        const char *type = "a", *access = "rwm";
        at = umw_jloc_key(loc, "type");
        if ((v = umw_json_member(item, "type")) && (r = umw_json_string(v, &at, &type, err)) < 0)
                return r;
        if (strcmp(type, "a") != 0 && strcmp(type, "b") != 0 && strcmp(type, "c") != 0)
                return umw_json_expected(&at, "\"a\", \"b\" or \"c\"", err);
        at = umw_jloc_key(loc, "access");
        if ((v = umw_json_member(item, "access")) &&
            (r = umw_json_string(v, &at, &access, err)) < 0)
                return r;
        if (!access[0] || strspn(access, "rwm") != strlen(access) || strlen(access) > 3)
                return umw_json_expected(&at, "a combination of r, w and m", err);
        char major[24], minor[24];
        for (int i = 0; i < 2; i++) {
                const char *key = i ? "minor" : "major";
                at = umw_jloc_key(loc, key);
                v = umw_json_member(item, key);
                if (v && (!YAJL_IS_INTEGER(v) || v->u.number.i < -1 || v->u.number.i > 0xfffff))
                        return umw_json_expected(&at, "a device number, or -1 for any", err);
        }
        device_number(major, sizeof(major), umw_json_member(item, "major"));
        device_number(minor, sizeof(minor), umw_json_member(item, "minor"));
        r = type[0] == 'a' ? add_rule(p, allow, "a")
                           : add_rule(p, allow, "%s %s:%s %s", type, major, minor, access);
        return r < 0 ? umw_fail_sys(err, -r, "device rules") : 0;
}

/* The devices every container gets whatever its rules say, as other OCI
 * runtimes create them. */
static const char *const default_devices[] = {"c 1:3 rwm", "c 1:5 rwm", "c 1:7 rwm",
                                              "c 1:8 rwm", "c 1:9 rwm", "c 5:0 rwm",
                                              "c 5:1 rwm", "c 5:2 rwm", "c 136:* rwm"};

/* Deny everything, then the spec's rules in order, then always the default
 * set and linux.devices: the container's own /dev keeps working. */
static int plan_devices(struct cgroup_plan *p, const struct cgroup_request *req,
                        struct umw_error **err)
{
        struct umw_jloc loc;
        umw_jloc_init_at(&loc, req->file, ".linux.resources.devices");
        yajl_val list = umw_json_member(req->resources, "devices");
        int r = list ? umw_json_array(list, &loc, err) : 0;
        if (r < 0)
                return r;
        if ((r = add_rule(p, false, "a")) < 0)
                return umw_fail_sys(err, -r, "device rules");
        for (size_t i = 0; list && i < list->u.array.len; i++) {
                struct umw_jloc at = umw_jloc_index(&loc, i);
                if ((r = device_rule(p, list->u.array.values[i], &at, err)) < 0)
                        return r;
        }
        for (size_t i = 0; i < ARRAY_SIZE(default_devices); i++)
                if ((r = add_rule(p, true, "%s", default_devices[i])) < 0)
                        return umw_fail_sys(err, -r, "device rules");
        for (size_t i = 0; i < req->n_devices; i++) {
                const struct spec_device *d = &req->devices[i];
                if (d->type == 'p')
                        continue;
                r = add_rule(p, true, "%c %" PRId64 ":%" PRId64 " rwm", d->type == 'b' ? 'b' : 'c',
                             d->major, d->minor);
                if (r < 0)
                        return umw_fail_sys(err, -r, "device rules");
        }
        return 0;
}

/* ---------------------------------------------------------------- checks */

static bool has_writes(const struct cgroup_plan *p, const struct hierarchy *h)
{
        for (size_t i = 0; i < p->n_w; i++)
                if (p->w[i].h == h)
                        return true;
        return false;
}

/* Without root, a limit needs a hierarchy delegated to us. */
static int check_delegated(const struct cgroup_plan *p, const char *file, struct umw_error **err)
{
        for (size_t i = 0; i < p->n_w; i++) {
                char dir[1024];
                const struct cgroup_write *w = &p->w[i];
                if (nearest_existing(w->h, p->path, dir, sizeof(dir)) < 0 || access(dir, W_OK) < 0)
                        return umw_fail(err, UMW_EXIT_CONFIG, EACCES,
                                        "%s: .linux.resources: %s needs the cgroup controller "
                                        "'%s', which is not delegated to uid %u (%s is not "
                                        "writable): delegate %s/%.*s to it (or systemd: "
                                        "Delegate=yes), or run with --cgroup-manager disabled "
                                        "to start without limits",
                                        file, w->s->file, w->s->controller, (unsigned)geteuid(),
                                        dir, w->h->mountpoint, (int)strcspn(p->path, "/"), p->path);
        }
        return 0;
}

static bool holds_processes(const struct hierarchy *h, const char *path)
{
        char file[1024], buf[16];
        snprintf(file, sizeof(file), "%s/%s", h->mountpoint, path);
        _cleanup_close_ int fd = open(file, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return false;
        cgroup_read_small(fd, "cgroup.procs", buf, sizeof(buf));
        return buf[0] != '\0';
}

static int check_unused(const struct cgroup_plan *p, struct umw_error **err)
{
        for (size_t i = 0; i < p->host.n; i++)
                if (holds_processes(&p->host.h[i], p->path))
                        return umw_fail(err, UMW_EXIT_EXISTS, EEXIST,
                                        "cgroup %s/%s already holds processes (another "
                                        "container's?): choose another linux.cgroupsPath",
                                        p->host.h[i].mountpoint, p->path);
        return 0;
}

/* The plan's host, writes and device rules, checked against what the
 * cgroup may be. */
static int plan_fill(struct cgroup_plan *p, const struct cgroup_request *req, bool fresh,
                     struct umw_error **err)
{
        int r;
        if ((r = cgroup_host_find(&p->host, err)) < 0 ||
            (r = plan_settings(p, req->resources, req->file, err)) < 0)
                return r;
        if (fresh && req->strict && (v1_with(&p->host, "devices") || cgroup_unified(&p->host)) &&
            (r = plan_devices(p, req, err)) < 0)
                return r;
        if (!req->strict && (r = check_delegated(p, req->file, err)) < 0)
                return r;
        return fresh ? check_unused(p, err) : 0;
}

static int plan_build(const struct cgroup_request *req, bool fresh, struct cgroup_plan **out,
                      struct umw_error **err)
{
        struct cgroup_plan *p = calloc(1, sizeof(*p));
        if (!p || !(p->path = strdup(req->path))) {
                free(p);
                return umw_fail_sys(err, ENOMEM, "cgroup plan");
        }
        p->strict = req->strict;
        int r = plan_fill(p, req, fresh, err);
        if (r < 0) {
                cgroup_plan_free(p);
                return r;
        }
        *out = p;
        return 0;
}

int cgroup_plan_new(const struct cgroup_request *req, struct cgroup_plan **out,
                    struct umw_error **err)
{
        return plan_build(req, true, out, err);
}

/* ---------------------------------------------------------------- writing */

/* A new cpuset cgroup starts with no cpus and no mems, and refuses tasks:
 * copy both from the parent (an existing one that has them is left). */
static int cpuset_inherit(int parentfd, int fd)
{
        static const char *const files[] = {"cpuset.cpus", "cpuset.mems"};
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                _cleanup_close_ int cur = openat(fd, files[i], O_RDWR | O_CLOEXEC);
                if (cur < 0)
                        return -errno;
                char now[16];
                if (umw_read_all(cur, now, sizeof(now)) > 1)
                        continue; /* already set */
                char buf[4096];
                _cleanup_close_ int in = openat(parentfd, files[i], O_RDONLY | O_CLOEXEC);
                if (in < 0)
                        return -errno;
                ssize_t n = umw_read_all(in, buf, sizeof(buf));
                if (n < 0)
                        return (int)n;
                if (umw_write_all(cur, buf, (size_t)n) < 0)
                        return -errno;
        }
        return 0;
}

/* The leaf in one mkdirat and one open where nothing is to be done on the
 * way down (a v1 hierarchy other than cpuset): its parents exist from the
 * first container on, and a walk costs three calls per parent in each of
 * the hierarchies. -ENOENT: a parent is missing. cgroupfs has no symbolic
 * links, and path has no "." or ".." component (cgroup_path_resolve). */
static int open_leaf(int rootfd, const char *path, int *out)
{
        if (mkdirat(rootfd, path, 0755) < 0 && errno != EEXIST)
                return -errno;
        *out = openat(rootfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return *out < 0 ? -errno : 0;
}

/* Switches enable ("+memory +pids") on in dirfd's cgroup.subtree_control.
 * Above a user's delegated subtree only root may write it, and there the
 * controllers the subtree offers are on already: refused is then no
 * failure. */
static int v2_enable(int dirfd, const char *enable)
{
        int r = cgroup_write_at(dirfd, "cgroup.subtree_control", enable);
        if (r != -EACCES && r != -EPERM)
                return r;
        char now[256], name[64];
        cgroup_read_small(dirfd, "cgroup.subtree_control", now, sizeof(now));
        for (const char *c = enable; *c; c += strspn(c, " ")) {
                size_t n = strcspn(c, " ");
                snprintf(name, sizeof(name), "%.*s", (int)(n > 0 ? n - 1 : 0), c + 1);
                if (!cgroup_list_has(now, " \n", name))
                        return r;
                c += n;
        }
        return 0;
}

/* mkdir -p of path below the hierarchy root, returning an fd of the leaf.
 * On v2, enable (e.g. "+memory +pids") is switched on in every ancestor so
 * that the leaf has those controllers' files. */
static int make_cgroup_dir(const struct hierarchy *h, const char *path, const char *enable,
                           int *out)
{
        _cleanup_close_ int fd = open(h->mountpoint, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        bool is_cpuset = !h->v2 && cgroup_has_controller(h, "cpuset");
        if (!h->v2 && !is_cpuset) {
                int r = open_leaf(fd, path, out);
                if (r != -ENOENT)
                        return r;
        }
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        char *save = NULL;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                int r;
                if (h->v2 && enable && enable[0] && (r = v2_enable(fd, enable)) < 0)
                        return r;
                if (mkdirat(fd, c, 0755) < 0 && errno != EEXIST)
                        return -errno;
                int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return -errno;
                if (is_cpuset && (r = cpuset_inherit(fd, next)) < 0) {
                        close(next);
                        return r;
                }
                close(fd);
                fd = next;
        }
        *out = TAKE_FD(fd);
        return 0;
}

static bool is_memory_pair(const char *file)
{
        return strcmp(file, "memory.limit_in_bytes") == 0 ||
               strcmp(file, "memory.memsw.limit_in_bytes") == 0;
}

/* The index of the other half of v1's memory/memsw pair still to write. */
static size_t memory_partner(const struct cgroup_plan *p, const struct hierarchy *h, size_t i,
                             const bool *done)
{
        for (size_t j = 0; j < p->n_w; j++)
                if (j != i && !done[j] && p->w[j].h == h && is_memory_pair(p->w[j].s->file) &&
                    strcmp(p->w[j].s->file, p->w[i].s->file) != 0)
                        return j;
        return p->n_w;
}

/* A v1 cpu file of dirfd as a number, or -1. */
static long long read_cpu_number(int dirfd, const char *file)
{
        _cleanup_close_ int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC);
        char buf[32];
        ssize_t n = fd < 0 ? -1 : umw_read_all(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        return strtoll(buf, NULL, 10);
}

/* The container's rt period: its own setting, else v1's default. */
static long long planned_rt_period(const struct cgroup_plan *p, const struct hierarchy *h)
{
        for (size_t i = 0; i < p->n_w; i++)
                if (p->w[i].h == h && strcmp(p->w[i].s->file, "cpu.rt_period_us") == 0)
                        return strtoll(p->w[i].s->value, NULL, 10);
        return 1000000;
}

/* v1 gives a new cpu cgroup rt_runtime_us 0, and a child's share of
 * realtime (runtime / period) may not pass its parent's: the container's
 * realtimeRuntime fails (EINVAL) under umwelt-run/ or any parent of the
 * cgroupsPath. As crun does, each ancestor below the hierarchy's root (the
 * machine's, never written) with a smaller share gets the container's, top
 * down, in its own period; the kernel's own checks (children's shares
 * within their parent's) still decide. */
static int rt_budget_ancestors(const struct cgroup_plan *p, const struct hierarchy *h,
                               const char *value)
{
        long long want = strtoll(value, NULL, 10), period = planned_rt_period(p, h);
        _cleanup_close_ int fd = open(h->mountpoint, O_PATH | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *copy = strdup(p->path);
        if (fd < 0 || !copy)
                return fd < 0 ? -errno : -ENOMEM;
        char *leaf = strrchr(copy, '/');
        if (!leaf || period <= 0)
                return -EINVAL;
        *leaf = '\0';
        char *save = NULL;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return -errno;
                close(fd);
                fd = next;
                long long own = read_cpu_number(fd, "cpu.rt_period_us");
                long long need = own > 0 ? (want * own + period - 1) / period : want;
                char buf[32];
                snprintf(buf, sizeof(buf), "%lld", need);
                int r = read_cpu_number(fd, "cpu.rt_runtime_us") < need
                            ? cgroup_write_at(fd, "cpu.rt_runtime_us", buf)
                            : 0;
                if (r < 0)
                        return r;
        }
        return 0;
}

/* v1 keeps memory.limit_in_bytes <= memory.memsw.limit_in_bytes at every
 * moment: when one write breaks that (EINVAL), the other goes first. */
static int apply_writes(const struct cgroup_plan *p, const struct hierarchy *h, int dirfd,
                        struct umw_error **err)
{
        _cleanup_free_ bool *done = calloc(p->n_w + 1, sizeof(bool));
        if (!done)
                return umw_fail_sys(err, ENOMEM, "cgroup limits");
        for (size_t i = 0; i < p->n_w; i++) {
                const struct cgroup_setting *s = p->w[i].s;
                if (done[i] || p->w[i].h != h)
                        continue;
                int r = cgroup_write_at(dirfd, s->file, s->value);
                if (r == -EINVAL && !h->v2 && strcmp(s->file, "cpu.rt_runtime_us") == 0 &&
                    rt_budget_ancestors(p, h, s->value) == 0)
                        r = cgroup_write_at(dirfd, s->file, s->value);
                size_t j = r == -EINVAL && is_memory_pair(s->file) ? memory_partner(p, h, i, done)
                                                                   : p->n_w;
                if (j < p->n_w &&
                    (r = cgroup_write_at(dirfd, p->w[j].s->file, p->w[j].s->value)) == 0) {
                        done[j] = true;
                        r = cgroup_write_at(dirfd, s->file, s->value);
                }
                if (r < 0)
                        return umw_fail_sys(err, -r, "cgroup %s/%s: write '%s' to %s",
                                            h->mountpoint, p->path, s->value, s->file);
                done[i] = true;
        }
        return 0;
}

static int apply_devices(const struct cgroup_plan *p, const struct hierarchy *h, int dirfd,
                         struct umw_error **err)
{
        /* v2 has no devices controller: a BPF program carries the same rules
         * (on a hybrid host too, as a second wall). */
        if (p->n_rules && h->v2)
                return cgroup_bpf_devices_attach(dirfd, p->rules, p->n_rules, err);
        if (!p->n_rules || !cgroup_has_controller(h, "devices"))
                return 0;
        /* One open file each: every write is a rule of its own. */
        _cleanup_close_ int deny = -1, allow = -1;
        for (size_t i = 0; i < p->n_rules; i++) {
                const char *file = p->rules[i].allow ? "devices.allow" : "devices.deny";
                int *fd = p->rules[i].allow ? &allow : &deny;
                if (*fd < 0)
                        *fd = openat(dirfd, file, O_WRONLY | O_CLOEXEC);
                int r = *fd < 0 ? -errno
                                : umw_write_all(*fd, p->rules[i].rule, strlen(p->rules[i].rule));
                if (r < 0)
                        return umw_fail_sys(err, -r, "cgroup %s/%s: write '%s' to %s",
                                            h->mountpoint, p->path, p->rules[i].rule, file);
        }
        return 0;
}

static int write_pid(int dirfd, pid_t pid)
{
        char buf[32];
        snprintf(buf, sizeof(buf), "%d", pid);
        return cgroup_write_at(dirfd, "cgroup.procs", buf);
}

/* The steps of setup_hierarchy; a failure without *err is a -errno of
 * make_cgroup_dir or write_pid. */
static int fill_hierarchy(const struct cgroup_plan *p, const struct hierarchy *h, pid_t pid,
                          int *fd, struct umw_error **err)
{
        _cleanup_close_ int dirfd = -1;
        int r;
        if ((r = make_cgroup_dir(h, p->path, h->v2 ? p->v2_enable : NULL, &dirfd)) < 0 ||
            (r = apply_writes(p, h, dirfd, err)) < 0 || (r = apply_devices(p, h, dirfd, err)) < 0 ||
            (pid > 0 && (r = write_pid(dirfd, pid)) < 0))
                return r;
        *fd = TAKE_FD(dirfd);
        return 0;
}

/* One hierarchy's directory with its limits and device rules, and pid moved
 * in unless pid is 0. Without strict, a hierarchy we may not use and that
 * carries no limit leaves *fd at -1. */
static int setup_hierarchy(const struct cgroup_plan *p, const struct hierarchy *h, pid_t pid,
                           int *fd, struct umw_error **err)
{
        bool required = p->strict || has_writes(p, h);
        int r = fill_hierarchy(p, h, pid, fd, err);
        if (r < 0 && *err)
                return r;
        if (r < 0 && required)
                return umw_fail_sys(err, -r, "cgroup %s/%s", h->mountpoint, p->path);
        if (r < 0)
                umw_debug("cgroup %s/%s not used: %s", h->mountpoint, p->path, strerror(-r));
        return 0;
}

int cgroup_plan_prepare_unified(const struct cgroup_plan *p, int *fd, struct umw_error **err)
{
        *fd = -1;
        const struct hierarchy *v2 = NULL;
        for (size_t i = 0; i < p->host.n && !v2; i++)
                if (p->host.h[i].v2)
                        v2 = &p->host.h[i];
        return v2 ? setup_hierarchy(p, v2, 0, fd, err) : 0;
}

_Static_assert(CGROUP_MAX_JOINS >= MAX_HIERARCHIES, "a join per hierarchy");

/* A writable fd of the tasks file of the v1 cgroup set up at dirfd, for the
 * init to join; -1 when the hierarchy was skipped or, not required, its
 * tasks file cannot be opened. */
static int open_tasks(const struct cgroup_plan *p, const struct hierarchy *h, int dirfd, int *out,
                      struct umw_error **err)
{
        *out = dirfd < 0 ? -1 : openat(dirfd, "tasks", O_WRONLY | O_CLOEXEC);
        if (*out >= 0 || dirfd < 0)
                return 0;
        if (p->strict || has_writes(p, h))
                return umw_fail_errno(err, "cgroup %s/%s: open tasks", h->mountpoint, p->path);
        umw_debug("cgroup %s/%s not joined: %s", h->mountpoint, p->path, strerror(errno));
        return 0;
}

int cgroup_plan_enter(const struct cgroup_plan *p, pid_t pid, bool in_unified, int *joins,
                      size_t *n_joins, struct umw_error **err)
{
        *n_joins = 0;
        for (size_t i = 0; i < p->host.n; i++) {
                const struct hierarchy *h = &p->host.h[i];
                if (in_unified && h->v2)
                        continue;
                _cleanup_close_ int fd = -1;
                int tasks = -1;
                int r;
                if ((r = setup_hierarchy(p, h, h->v2 ? pid : 0, &fd, err)) < 0 ||
                    (!h->v2 && (r = open_tasks(p, h, fd, &tasks, err)) < 0)) {
                        cgroup_join_close(joins, n_joins);
                        return r;
                }
                if (tasks >= 0)
                        joins[(*n_joins)++] = tasks;
        }
        return 0;
}

void cgroup_join_close(int *joins, size_t *n)
{
        for (size_t i = 0; i < *n; i++)
                close(joins[i]);
        *n = 0;
}

/* "0" to each of the n fds, up to the first that fails: 0 or its -errno. */
static int write_each_zero(const int *joins, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                int r = umw_write_all(joins[i], "0", 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

int cgroup_join_self(int *joins, size_t *n, struct umw_error **err)
{
        int r = write_each_zero(joins, *n);
        cgroup_join_close(joins, n);
        return r < 0 ? umw_fail_sys(err, -r, "join the container's cgroup") : 0;
}

/* A v1 hierarchy's tasks file, or the cgroup2 directory, of path; -1 where
 * the cgroup is missing or not ours to join. */
static int open_join(const struct hierarchy *h, const char *path)
{
        _cleanup_close_ int dir = cgroup_open_in(h, path, h->v2 ? O_RDONLY : O_PATH);
        int fd = dir < 0 || h->v2 ? TAKE_FD(dir) : openat(dir, "tasks", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                umw_debug("cgroup %s/%s not joined: %s", h->mountpoint, path, strerror(errno));
        return fd;
}

int cgroup_open_joins(const char *path, int *joins, size_t *n_joins, int *unified_fd,
                      struct umw_error **err)
{
        struct host host;
        *n_joins = 0;
        *unified_fd = -1;
        int r = cgroup_host_find(&host, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < host.n; i++) {
                const struct hierarchy *h = &host.h[i];
                if (h->v2 && *unified_fd >= 0)
                        continue;
                int fd = open_join(h, path);
                if (fd >= 0 && h->v2)
                        *unified_fd = fd;
                else if (fd >= 0)
                        joins[(*n_joins)++] = fd;
        }
        return 0;
}

/* The plan's writes to the existing cgroup path, hierarchy by hierarchy,
 * up to the first that fails. */
static int update_writes(const struct cgroup_plan *p, const char *path, struct umw_error **err)
{
        for (size_t i = 0; i < p->host.n; i++) {
                const struct hierarchy *h = &p->host.h[i];
                if (!has_writes(p, h))
                        continue;
                _cleanup_close_ int fd = cgroup_open_in(h, path, O_PATH);
                if (fd < 0)
                        return umw_fail_errno(err, "cgroup %s/%s", h->mountpoint, path);
                int r;
                if (h->v2 && p->v2_enable[0]) {
                        /* Controllers the container did not have yet. */
                        umw_close_fdp(&fd);
                        if ((r = make_cgroup_dir(h, path, p->v2_enable, &fd)) < 0)
                                return umw_fail_sys(err, -r, "cgroup %s/%s", h->mountpoint, path);
                }
                if ((r = apply_writes(p, h, fd, err)) < 0)
                        return r;
        }
        return 0;
}

int cgroup_update(const char *path, yajl_val resources, const char *file, struct umw_error **err)
{
        struct cgroup_request req = {
            .path = path, .resources = resources, .file = file, .strict = true};
        struct cgroup_plan *p = NULL;
        int r = plan_build(&req, false, &p, err);
        if (r < 0)
                return r;
        r = update_writes(p, path, err);
        cgroup_plan_free(p);
        return r;
}
