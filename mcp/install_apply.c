/* install and uninstall, file by file: read, edit in memory, then the
 * record first and the files after it (a record of a change a failure
 * kept from being written is harmless: uninstall finds the file without
 * it and leaves the file alone), or with --dry-run the diffs only. */
#include "mcp/install_int.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALREADY      "already installed, nothing to change"
#define NOTHING_LEFT "nothing of the install was left to undo"

/* What one run holds: the plan, the files, the record, what it says. */
struct run {
        const struct install_opts *o;
        struct plan plan;
        struct cfile files[2];
        size_t nfiles;
        char *record;
        struct changes prior, out;
        char *log;
        size_t loglen;
        FILE *logf;
};

static void run_free(struct run *r)
{
        for (size_t i = 0; i < r->nfiles; i++)
                cfile_free(&r->files[i]);
        if (r->logf)
                fclose(r->logf);
        free(r->log);
        free(r->record);
        changes_free(&r->prior);
        changes_free(&r->out);
        plan_free(&r->plan);
}

static int run_init(struct run *r, const struct install_opts *o, struct umw_error **err)
{
        *r = (struct run){.o = o};
        int rc;
        if ((rc = plan_make(o->harness, o->self, o->project_abs, &r->plan, err)) < 0 ||
            (rc = record_path(o->harness, o->project_abs, &r->record, err)) < 0 ||
            (rc = record_read(r->record, &r->prior, err)) < 0)
                return rc;
        r->logf = open_memstream(&r->log, &r->loglen);
        return r->logf ? rc : umw_fail_sys(err, ENOMEM, "%s", o->harness);
}

static int cfile_init(struct run *r, struct cfile *f, const char *dir, const char *name)
{
        *f = (struct cfile){
            .projfd = r->o->projfd, .project = r->o->project_abs, .dir = dir, .name = name};
        int n = asprintf(&f->path, "%s/%s%s%s", r->o->project_abs, dir ? dir : "", dir ? "/" : "",
                         name);
        return n < 0 ? -ENOMEM : 0;
}

/* h's file: the first of its names that exists, else its first name. */
static int find_file(struct run *r, const struct hfile *h, struct cfile *f, struct umw_error **err)
{
        for (size_t i = 0; i < ARRAY_SIZE(h->names) && h->names[i]; i++) {
                cfile_free(f);
                int rc = cfile_init(r, f, h->dir, h->names[i]);
                if (rc < 0)
                        return umw_fail_sys(err, -rc, "%s", h->names[i]);
                if ((rc = cfile_read(f, err)) < 0)
                        return rc;
                if (f->exists)
                        return 0;
        }
        cfile_free(f);
        int rc = cfile_init(r, f, h->dir, h->names[0]);
        return rc < 0 ? umw_fail_sys(err, -rc, "%s", h->names[0]) : cfile_read(f, err);
}

static char *rel_name(const struct cfile *f)
{
        char *rel = NULL;
        return asprintf(&rel, "%s%s%s", f->dir ? f->dir : "", f->dir ? "/" : "", f->name) < 0 ? NULL
                                                                                              : rel;
}

/* An edit of f's text (rel: its name in the record), lines said to the
 * run's log. */
static struct edit edit_of(struct run *r, const struct hfile *h, struct cfile *f, const char *rel,
                           struct umw_error **err)
{
        return (struct edit){.file = f->path,
                             .rel = rel,
                             .jsonc = h->jsonc,
                             .t = &f->text,
                             .log = r->logf,
                             .err = err};
}

static int edit_file(struct run *r, const struct hfile *h, struct cfile *f, struct umw_error **err)
{
        _cleanup_free_ char *rel = rel_name(f);
        int rc = rel ? 0 : -ENOMEM;
        if (rc == 0)
                rc = f->exists ? text_set(&f->text, f->orig.s, f->orig.len)
                               : text_set(&f->text, h->skeleton, strlen(h->skeleton));
        if (rc < 0)
                return umw_fail_sys(err, -rc, "%s", f->path);
        struct edit e = edit_of(r, h, f, rel, err);
        e.prior = &r->prior;
        e.out = &r->out;
        /* A directory's change names it as its file. */
        struct edit dir = e;
        dir.rel = h->dir;
        if ((h->dir && (rc = edit_change(&dir, CH_DIR, NULL, 0, NULL, NULL,
                                         f->dir_exists ? NULL : "")) < 0) ||
            (rc = edit_change(&e, CH_FILE, NULL, 0, NULL, NULL, f->exists ? NULL : "")) < 0)
                return rc;
        for (size_t i = 0; i < h->nsteps; i++) {
                rc =
                    h->toml ? step_apply_toml(&e, &h->steps[i]) : step_apply_json(&e, &h->steps[i]);
                if (rc < 0)
                        return rc;
        }
        return 0;
}

static bool changed(const struct cfile *f)
{
        return !f->exists || f->text.len != f->orig.len ||
               memcmp(f->text.s, f->orig.s, f->orig.len);
}

static int print_diffs(struct run *r, bool removing, const char *nothing, struct umw_error **err)
{
        bool any = false;
        for (size_t i = 0; i < r->nfiles; i++) {
                struct cfile *f = &r->files[i];
                bool gone = removing && !f->text.s;
                if ((removing && !f->exists) || (!gone && !changed(f)))
                        continue;
                struct text none = {0};
                int rc = diff_print(stdout, f->exists ? f->path : "/dev/null", &f->orig,
                                    gone ? "/dev/null" : f->path, gone ? &none : &f->text);
                if (rc < 0)
                        return umw_fail_sys(err, -rc, "diff %s", f->path);
                any = true;
        }
        if (!any)
                printf("%s in %s: %s\n", r->o->harness, r->o->project_abs, nothing);
        return 0;
}

static int finish(struct run *r, const char *nothing, struct umw_error **err)
{
        if (fflush(r->logf) != 0)
                return umw_fail_errno(err, "%s", r->o->harness);
        if (r->loglen == 0)
                printf("%s in %s: %s\n", r->o->harness, r->o->project_abs, nothing);
        fwrite(r->log, 1, r->loglen, stdout);
        return 0;
}

static int install_files(struct run *r, struct umw_error **err)
{
        for (size_t i = 0; i < r->plan.nfiles; i++) {
                int rc = find_file(r, &r->plan.files[i], &r->files[i], err);
                r->nfiles = i + 1;
                if (rc < 0 || (rc = edit_file(r, &r->plan.files[i], &r->files[i], err)) < 0)
                        return rc;
        }
        int rc;
        if (r->o->dry_run) {
                rc = print_diffs(r, false, ALREADY, err);
        } else {
                rc = record_write(r->record, r->o->harness, r->o->project_abs, &r->out, err);
                for (size_t i = 0; rc == 0 && i < r->nfiles; i++)
                        if (changed(&r->files[i]))
                                rc = cfile_write(&r->files[i], err);
                if (rc == 0)
                        rc = finish(r, ALREADY, err);
        }
        if (rc == 0 && r->plan.notes)
                rc = r->plan.notes(&r->files[0], stdout, err);
        if (rc == 0 && r->plan.note)
                printf("note: %s\n", r->plan.note);
        return rc;
}

int install_do(const struct install_opts *o, struct umw_error **err)
{
        struct run r;
        int rc = run_init(&r, o, err);
        if (rc >= 0)
                rc = install_files(&r, err);
        run_free(&r);
        return rc < 0 ? rc : 0;
}

/* The plan's description of the file the record names (its format). */
static const struct hfile *plan_file(const struct plan *p, const char *rel)
{
        const char *slash = strrchr(rel, '/');
        const char *name = slash ? slash + 1 : rel;
        for (size_t i = 0; i < p->nfiles; i++)
                for (size_t j = 0; j < ARRAY_SIZE(p->files[i].names); j++)
                        if (p->files[i].names[j] && !strcmp(p->files[i].names[j], name))
                                return &p->files[i];
        return NULL;
}

static bool made_file(const struct changes *cs, const char *rel)
{
        for (size_t i = 0; i < cs->n; i++)
                if (cs->v[i].op == CH_FILE && !strcmp(cs->v[i].file, rel))
                        return true;
        return false;
}

static int undo_changes(struct run *r, const struct hfile *h, struct cfile *f, const char *rel,
                        struct umw_error **err)
{
        int rc = text_set(&f->text, f->orig.s, f->orig.len);
        if (rc < 0)
                return umw_fail_sys(err, -rc, "%s", f->path);
        struct edit e = edit_of(r, h, f, rel, err);
        for (size_t i = r->prior.n; i-- > 0;) {
                const struct change *c = &r->prior.v[i];
                if (strcmp(c->file, rel) != 0)
                        continue;
                rc = h->toml ? change_undo_toml(&e, c) : change_undo_json(&e, c);
                if (rc < 0)
                        return rc;
        }
        if (made_file(&r->prior, rel) && text_is_empty_config(&f->text, h->toml)) {
                fprintf(r->logf, "%s removed: umwelt-mcp made it, and it holds nothing else\n",
                        f->path);
                free(f->text.s);
                f->text = (struct text){0};
        }
        return 0;
}

/* The file the record's change i names, undone, unless an earlier change
 * named it already. */
static int undo_file(struct run *r, size_t i, struct umw_error **err)
{
        const struct change *c = &r->prior.v[i];
        for (size_t j = 0; j < i; j++)
                if (r->prior.v[j].op != CH_DIR && !strcmp(r->prior.v[j].file, c->file))
                        return 0;
        const struct hfile *h = plan_file(&r->plan, c->file);
        if (!h || r->nfiles == ARRAY_SIZE(r->files))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: a change of %s is not %s's",
                                r->record, c->file, r->o->harness);
        struct cfile *f = &r->files[r->nfiles++];
        const char *slash = strrchr(c->file, '/');
        _cleanup_free_ char *dir = slash ? strndup(c->file, (size_t)(slash - c->file)) : NULL;
        int rc = cfile_init(r, f, h->dir, slash ? slash + 1 : c->file);
        if (rc < 0 || (slash && (!dir || strcmp(dir, h->dir ? h->dir : "") != 0)))
                return umw_fail_sys(err, rc < 0 ? -rc : EINVAL, "%s: %s", r->record, c->file);
        if ((rc = cfile_read(f, err)) < 0)
                return rc;
        if (!f->exists) {
                fprintf(r->logf, "%s: gone already: nothing to undo\n", f->path);
                return 0;
        }
        return undo_changes(r, h, f, c->file, err);
}

static int write_back(struct run *r, struct umw_error **err)
{
        for (size_t i = 0; i < r->nfiles; i++) {
                struct cfile *f = &r->files[i];
                int rc = !f->exists   ? 0
                         : !f->text.s ? cfile_remove(f, err)
                         : changed(f) ? cfile_write(f, err)
                                      : 0;
                if (rc < 0)
                        return rc;
        }
        /* Directories install made, where empty now: last made, first gone. */
        for (size_t i = r->prior.n; i-- > 0;) {
                const struct change *c = &r->prior.v[i];
                if (c->op != CH_DIR)
                        continue;
                int rc = cfile_rmdir(r->o->projfd, c->file);
                if (rc < 0)
                        return umw_fail_sys(err, -rc, "remove %s/%s", r->o->project_abs, c->file);
                if (rc == 1)
                        fprintf(r->logf, "%s/%s removed: umwelt-mcp made it\n", r->o->project_abs,
                                c->file);
        }
        return record_remove(r->record, err);
}

static int uninstall_files(struct run *r, struct umw_error **err)
{
        for (size_t i = 0; i < r->prior.n; i++) {
                int rc = r->prior.v[i].op == CH_DIR ? 0 : undo_file(r, i, err);
                if (rc < 0)
                        return rc;
        }
        if (r->o->dry_run)
                return print_diffs(r, true, NOTHING_LEFT, err);
        int rc = write_back(r, err);
        return rc < 0 ? rc : finish(r, NOTHING_LEFT, err);
}

int install_undo(const struct install_opts *o, struct umw_error **err)
{
        struct run r;
        int rc = run_init(&r, o, err);
        if (rc == 0)
                rc = umw_fail(err, UMW_EXIT_NOTFOUND, ENOENT,
                              "no install of %s in %s is recorded (%s)", o->harness, o->project_abs,
                              r.record ? r.record : "");
        if (rc > 0)
                rc = uninstall_files(&r, err);
        run_free(&r);
        return rc < 0 ? rc : 0;
}
