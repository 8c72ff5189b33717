/* doctor: the report and how it is printed. */
#include "face/doctor.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int doctor_in_child(int (*fn)(const void *), const void *arg)
{
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                _exit(fn(arg) & 0xff);
        int status;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
}

void doctor_add(struct doctor_report *r, const char *name, bool ok, bool needed, const char *fix,
                const char *fmt, ...)
{
        struct doctor_check *more = realloc(r->checks, (r->n + 1) * sizeof(*more));
        if (!more)
                abort(); /* a report with a check silently missing would lie */
        r->checks = more;
        struct doctor_check *c = &r->checks[r->n++];
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&c->detail, fmt, ap) < 0)
                c->detail = NULL;
        va_end(ap);
        c->name = strdup(name);
        c->fix = fix && !ok ? strdup(fix) : NULL;
        c->needed = needed;
        /* Out of memory the check cannot say what it saw: it counts as failed. */
        c->ok = ok && c->name && c->detail;
}

bool doctor_report_ok(const struct doctor_report *r)
{
        for (size_t i = 0; i < r->n; i++)
                if (r->checks[i].needed && !r->checks[i].ok)
                        return false;
        return true;
}

static const char *or_empty(const char *s)
{
        return s ? s : "";
}

static void print_json(const struct doctor_report *r)
{
        yajl_gen g = umw_jgen_new(true);
        if (!g)
                return;
        yajl_gen_map_open(g);
        umw_jgen_key(g, "checks");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < r->n; i++) {
                const struct doctor_check *c = &r->checks[i];
                yajl_gen_map_open(g);
                umw_jgen_key_str(g, "name", or_empty(c->name));
                umw_jgen_key_bool(g, "ok", c->ok);
                umw_jgen_key_bool(g, "needed", c->needed);
                umw_jgen_key_str(g, "detail", or_empty(c->detail));
                umw_jgen_key(g, "fix");
                if (c->fix)
                        umw_jgen_str(g, c->fix);
                else
                        yajl_gen_null(g);
                yajl_gen_map_close(g);
        }
        yajl_gen_array_close(g);
        umw_jgen_key_bool(g, "ok", doctor_report_ok(r));
        yajl_gen_map_close(g);
        _cleanup_free_ char *text = umw_jgen_finish(g, NULL);
        if (text)
                printf("%s\n", text);
}

static void print_text(const struct doctor_report *r)
{
        size_t failed = 0;
        for (size_t i = 0; i < r->n; i++) {
                const struct doctor_check *c = &r->checks[i];
                const char *mark = c->ok ? "ok" : c->needed ? "MISSING" : "optional";
                printf("%-8s %s: %s\n", mark, or_empty(c->name), or_empty(c->detail));
                if (c->fix)
                        printf("         fix: %s\n", c->fix);
                failed += c->needed && !c->ok;
        }
        if (failed)
                printf("%zu needed check%s failed: a sandbox cannot start as it should here\n",
                       failed, failed == 1 ? "" : "s");
        else
                printf("everything a sandbox needs is here\n");
}

void doctor_report_print(const struct doctor_report *r, bool json)
{
        if (json)
                print_json(r);
        else
                print_text(r);
        fflush(stdout);
}

static int merge_check(struct doctor_report *rep, const char *prefix, yajl_val v,
                       const struct umw_jloc *loc, struct umw_error **err)
{
        const char *name = NULL, *detail = NULL, *fix = NULL;
        bool ok = false, needed = true;
        struct umw_jloc l_name = umw_jloc_key(loc, "name"), l_ok = umw_jloc_key(loc, "ok"),
                        l_needed = umw_jloc_key(loc, "needed"),
                        l_detail = umw_jloc_key(loc, "detail"), l_fix = umw_jloc_key(loc, "fix");
        yajl_val fix_v = umw_json_member(v, "fix");
        int r;
        if ((r = umw_json_object(v, loc, err)) < 0 ||
            (r = umw_json_string(umw_json_member(v, "name"), &l_name, &name, err)) < 0 ||
            (r = umw_json_bool(umw_json_member(v, "ok"), &l_ok, &ok, err)) < 0 ||
            (r = umw_json_bool(umw_json_member(v, "needed"), &l_needed, &needed, err)) < 0 ||
            (r = umw_json_string(umw_json_member(v, "detail"), &l_detail, &detail, err)) < 0 ||
            (fix_v && (r = umw_json_string(fix_v, &l_fix, &fix, err)) < 0))
                return r;
        _cleanup_free_ char *full = NULL;
        if (asprintf(&full, "%s%s", prefix, name) < 0)
                return umw_fail_sys(err, ENOMEM, "doctor");
        doctor_add(rep, full, ok, needed, fix, "%s", detail);
        return 0;
}

static int merge_checks(struct doctor_report *rep, const char *prefix, yajl_val doc,
                        const char *file, struct umw_error **err)
{
        struct umw_jloc root;
        umw_jloc_init(&root, file);
        struct umw_jloc l_checks = umw_jloc_key(&root, "checks");
        yajl_val checks = umw_json_member(doc, "checks");
        int r = umw_json_array(checks, &l_checks, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < checks->u.array.len; i++) {
                struct umw_jloc l = umw_jloc_index(&l_checks, i);
                if ((r = merge_check(rep, prefix, checks->u.array.values[i], &l, err)) < 0)
                        return r;
        }
        return 0;
}

int doctor_report_merge(struct doctor_report *r, const char *prefix, const char *text,
                        const char *file, struct umw_error **err)
{
        yajl_val doc = NULL;
        int ret = umw_json_parse(text, file, &doc, err);
        if (ret < 0)
                return ret;
        ret = merge_checks(r, prefix, doc, file, err);
        yajl_tree_free(doc);
        return ret;
}

void doctor_report_free(struct doctor_report *r)
{
        for (size_t i = 0; i < r->n; i++) {
                free(r->checks[i].name);
                free(r->checks[i].detail);
                free(r->checks[i].fix);
        }
        free(r->checks);
        *r = (struct doctor_report){0};
}
