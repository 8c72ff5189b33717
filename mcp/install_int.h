/* The installer's parts (mcp/install.h is its one entry): text splices,
 * the JSON and TOML readers that keep offsets, their edits, the steps each
 * harness wants, the record of what an install changed, and the files. */
#ifndef UMW_MCP_INSTALL_INT_H
#define UMW_MCP_INSTALL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct umw_error;

/* The largest configuration file read. */
#define INSTALL_MAX_FILE (1 << 20)

/* ---- install_text.c: a malloc'd, NUL-terminated text edited in place */

struct text {
        char *s;
        size_t len;
};

/* Replaces del bytes at at with inslen bytes of ins. 0 or -errno. */
int text_splice(struct text *t, size_t at, size_t del, const char *ins, size_t inslen);
/* t becomes a copy of s. */
int text_set(struct text *t, const char *s, size_t len);
/* Line and column (from 1, columns in characters) of byte off. */
void text_linecol(const char *s, size_t off, unsigned *line, unsigned *col);
size_t text_line_start(const char *s, size_t off);
/* The offset of the newline ending off's line, or len. */
size_t text_line_end(const char *s, size_t len, size_t off);
/* Whether s[from, to) holds only spaces, tabs and carriage returns. */
bool text_blank(const char *s, size_t from, size_t to);
/* The leading spaces and tabs of off's line (malloc'd). */
char *text_indent_at(const char *s, size_t off);
/* What the file indents one level by (its first indented line), else two
 * spaces (malloc'd). */
char *text_indent_unit(const char *s, size_t len);
/* parts joined by dots: "mcp.umwelt" (malloc'd). */
char *text_dotted(const char *const *parts, size_t n);
/* A JSON string literal for s, also a TOML basic string (malloc'd). */
char *json_quote(const char *s);
/* "FILE:LINE:COL: what", classed as bad input. */
int text_fail_at(struct umw_error **err, const char *file, const char *s, size_t off,
                 const char *what);

/* ---- install_jsonc.c: JSON and JSONC with each value's offsets */

enum jkind { JK_OBJECT, JK_ARRAY, JK_STRING, JK_NUMBER, JK_BOOL, JK_NULL };

struct jnode {
        enum jkind kind;
        size_t start, end; /* the value's bytes */
        size_t item_start; /* a member's key, an element's value */
        char *key;         /* a member's key, decoded; NULL for an element */
        char *str;         /* a string's value, decoded */
        bool comma;        /* a comma follows the item, at comma_at */
        size_t comma_at;
        struct jnode *items; /* an object's members or an array's elements */
        size_t n, cap;
};

/* Parses s (len bytes, NUL-terminated); jsonc admits comments and trailing
 * commas; object: the top value must be an object. A bad byte is one line,
 * "FILE:LINE:COL: what was expected". *root is freed with jnode_free. */
int jdoc_parse(const char *file, const char *s, size_t len, bool jsonc, bool object,
               struct jnode *root, struct umw_error **err);
void jnode_free(struct jnode *v);
/* The member of obj under key, or NULL (also when obj is NULL or no object). */
struct jnode *jnode_member(const struct jnode *obj, const char *key);
/* The value at path below root, or NULL. */
struct jnode *jnode_path(struct jnode *root, const char *const *path, size_t n);

/* ---- install_json.c: edits of a JSON text at a parsed tree's offsets.
 * value is compact JSON of our making; it is laid out as the file is. The
 * tree is stale after an edit: parse again. */

/* v in compact canonical form: what two values are compared by. */
char *json_canon(const char *s, const struct jnode *v);
/* An item (key NULL for an array's element) inserted into container c
 * before its item before (c->n or more: at the end); value laid out, or
 * where raw, as it is (a member's text restored). */
int json_insert(struct text *t, const struct jnode *c, size_t before, const char *key,
                const char *value, bool raw);
/* item's value replaced by value, laid out, or by raw text as it is. */
int json_replace(struct text *t, const struct jnode *item, const char *value);
int json_replace_text(struct text *t, const struct jnode *item, const char *raw);
/* Item idx of container c removed with its comma and, where it was alone
 * on its lines, those lines. */
int json_remove(struct text *t, const struct jnode *c, size_t idx);

/* ---- install_toml.c: TOML as statements with their offsets */

enum tkind { TS_TABLE, TS_ARRAY_TABLE, TS_KEYVAL };

struct tstmt {
        enum tkind kind;
        char **key; /* a header's table or a key, its dotted parts decoded */
        size_t nkey;
        size_t key_at;       /* for messages */
        size_t start, end;   /* the statement's lines, with the newline ending them */
        size_t vstart, vend; /* a key's value */
};

struct tdoc {
        struct tstmt *st;
        size_t n, cap;
};

/* Parses s (len bytes, NUL-terminated) into statements: headers and keys,
 * in file order. Freed with tdoc_free. */
int tdoc_parse(const char *file, const char *s, size_t len, struct tdoc *d, struct umw_error **err);
void tdoc_free(struct tdoc *d);
/* The statement of the header [path], or -1. */
ssize_t tdoc_table(const struct tdoc *d, const char *const *path, size_t n);
/* The statement of key (n dotted parts) in table (a header's statement, or
 * -1 for the root table before any header), or -1. */
ssize_t tdoc_key(const struct tdoc *d, ssize_t table, const char *const *key, size_t n);
/* The first key of table whose first part is first (a dotted key or an
 * inline table defining it), or -1. */
ssize_t tdoc_key_prefix(const struct tdoc *d, ssize_t table, const char *first);
/* Past the last key line of table (its header's line when it has none). */
size_t tdoc_section_end(const struct tdoc *d, ssize_t table);
/* The last header whose first part is first, or -1. */
ssize_t tdoc_last_table_under(const struct tdoc *d, const char *first);

/* ---- install_tomledit.c: edits of a TOML text at a tdoc's offsets (stale
 * after an edit: parse again) */

/* A dotted key, each part quoted (json_quote: TOML's basic strings escape
 * as JSON's do) where it is not bare (malloc'd). */
char *toml_key(const char *const *key, size_t n);
int toml_replace_value(struct text *t, const struct tstmt *st, const char *value);
/* "key = value" as the last line of table (-1: the root). */
int toml_insert_key(struct text *t, const struct tdoc *d, ssize_t table, const char *key,
                    const char *value);
/* st's lines removed. */
int toml_remove_stmt(struct text *t, const struct tstmt *st);
/* "[header]" and body (whole lines) at offset at, a blank line above. */
int toml_insert_table(struct text *t, size_t at, const char *header, const char *body);
/* table's header and key lines removed, with the blank line above. */
int toml_remove_table(struct text *t, const struct tdoc *d, ssize_t table);
/* The key lines of table, from after its header (malloc'd), and replaced. */
char *toml_body(const struct text *t, const struct tdoc *d, ssize_t table);
int toml_replace_body(struct text *t, const struct tdoc *d, ssize_t table, const char *body);

/* ---- install_file.c: a configuration file of the project */

struct cfile {
        int projfd;          /* the project's directory (not owned) */
        const char *project; /* its absolute path */
        const char *dir;     /* the directory in it that holds the file, or NULL */
        const char *name;    /* the file's name there */
        char *path;          /* the whole path, for messages (owned) */
        bool dir_exists, exists;
        mode_t mode;
        uid_t uid;
        gid_t gid;
        struct text orig; /* as read */
        struct text text; /* as it is to be */
};

/* f's directory and file read, no link followed: a symbolic link is refused
 * by name, a missing one is no error (dir_exists, exists false). */
int cfile_read(struct cfile *f, struct umw_error **err);
/* f->text written to a new file beside f and renamed over it (its mode and,
 * for root, its owner kept), the directory made where missing; refused when
 * the file no longer holds f->orig. */
int cfile_write(struct cfile *f, struct umw_error **err);
/* f removed, where it still holds f->orig. */
int cfile_remove(struct cfile *f, struct umw_error **err);
/* dir (in the project) removed where empty: 1 removed, 0 left, or -errno. */
int cfile_rmdir(int projfd, const char *dir);
void cfile_free(struct cfile *f);

/* ---- install_diff.c */

/* a -> b as a unified diff of 3 lines of context, "--- A" and "+++ B"
 * above; every byte that could steer a terminal shown as \xNN. */
int diff_print(FILE *out, const char *name_a, const struct text *a, const char *name_b,
               const struct text *b);

/* ---- install_record.c: what an install changed, kept in umwelt's state
 * directory (which no sandbox sees) so that uninstall undoes exactly that */

enum change_op {
        CH_FILE,      /* the file was created */
        CH_DIR,       /* the directory was created */
        CH_OBJECT,    /* JSON: an empty object made at path, for what follows */
        CH_ARRAY,     /* JSON: an empty array made at path, for what follows */
        CH_MEMBER,    /* JSON: the member at path set to new */
        CH_ELEMENT,   /* JSON: the string new appended to the array at path */
        CH_TABLE,     /* TOML: the empty table path made, for what follows */
        CH_TOML_KEY,  /* TOML: the key path[n-1] of table path[0..n-2] set to new */
        CH_TOML_BODY, /* TOML: the key lines of table path set to new */
};

struct change {
        enum change_op op;
        char *file; /* relative to the project */
        char **path;
        size_t n;
        char *new;    /* what was written: canonical JSON, TOML text */
        char *old;    /* what was there, as written; NULL: nothing */
        char *before; /* a member moved last: the key its old self preceded */
};

struct changes {
        struct change *v;
        size_t n, cap;
};

void change_free(struct change *c);
void changes_free(struct changes *cs);
/* Adds c (its strings owned by cs from now). */
int changes_add(struct changes *cs, struct change *c);
/* The change of cs that c stands for (same op, file and path; for an
 * element the same value), or NULL. */
const struct change *changes_find(const struct changes *cs, const struct change *c);
/* A change of op in file at path (n parts): its strings malloc'd. */
int change_make(struct change *c, enum change_op op, const char *file, const char *const *path,
                size_t n, const char *new, const char *old);
/* "mcp.umwelt", "permissions.deny", for messages (malloc'd). */
char *change_path(const struct change *c);

/* The record of harness's install in project: its file under umwelt's state
 * directory (*path malloc'd). */
int record_path(const char *harness, const char *project, char **path, struct umw_error **err);
/* Reads it into cs; 0 when there is none (cs left empty), 1 when read. */
int record_read(const char *path, struct changes *cs, struct umw_error **err);
int record_write(const char *path, const char *harness, const char *project,
                 const struct changes *cs, struct umw_error **err);
int record_remove(const char *path, struct umw_error **err);

/* ---- install_step.c, install_step_toml.c: what a harness wants of a
 * file, applied to its text, and the record's changes undone */

enum step_op {
        ST_MEMBER,      /* JSON: the member at path holds value (compact JSON) */
        ST_MEMBER_LAST, /* the same, and it is its object's last member */
        ST_OBJECTIFY,   /* JSON: a string at path becomes {"*": it} */
        ST_ELEMENT,     /* JSON: the string value is an element of the array at path */
        ST_TOML_KEY,    /* TOML: key path[n-1] of table path[0..n-2] (the root
                         * for n 1) holds value (TOML text) */
        ST_TOML_TABLE,  /* TOML: table path holds exactly value's key lines */
};

struct step {
        enum step_op op;
        const char *path[4];
        size_t n;
        const char *value;
};

/* One file's edit: its text, where changes go, what is said of them. */
struct edit {
        const char *file; /* its path, for messages */
        const char *rel;  /* relative to the project, as the record keeps it */
        bool jsonc;
        struct text *t;
        const struct changes *prior; /* the record of an earlier install */
        struct changes *out;
        FILE *log; /* a line for each thing done */
        struct umw_error **err;
};

/* install_edit.c: c added to e->out where it was made now (changed) or
 * by an earlier install, whose record keeps what was there first; else
 * freed. */
int edit_note(struct edit *e, struct change *c, bool changed);
/* A change of op at path in e's file noted: done is NULL where nothing
 * changed now, else what is said of it ("" for nothing). */
int edit_change(struct edit *e, enum change_op op, const char *const *path, size_t n,
                const char *new, const char *old, const char *done);
/* "FILE: PATH what" on e->log. */
void edit_say(struct edit *e, const struct change *c, const char *what);
int edit_nomem(struct edit *e);

int step_apply_json(struct edit *e, const struct step *st);
int step_apply_toml(struct edit *e, const struct step *st);
/* c undone in e's text where the text still holds what c wrote; else a
 * line says what was left as it is. */
int change_undo_json(struct edit *e, const struct change *c);
int change_undo_toml(struct edit *e, const struct change *c);
/* Whether the text holds nothing but an empty top object (JSON) or blank
 * lines (TOML): a file install made and may now remove. */
bool text_is_empty_config(const struct text *t, bool toml);

/* ---- install_plan.c: what each harness is given */

struct hfile {
        const char *dir;      /* the directory in the project, or NULL */
        const char *names[2]; /* the file's name; the first that exists is edited */
        bool jsonc, toml;
        const char *skeleton; /* a new file's text before the steps */
        struct step steps[6];
        size_t nsteps;
};

struct plan {
        const char *harness;
        struct hfile files[2];
        size_t nfiles;
        char *values[2];  /* what the steps' values point into (owned) */
        const char *note; /* said after an install */
        /* What the harness's own configuration can give back of what was
         * denied, said after an install (of the first file), or NULL. */
        int (*notes)(const struct cfile *f, FILE *out, struct umw_error **err);
};

/* harness's plan for an entry running self --project project; an unknown
 * harness is a usage error naming the three. */
int plan_make(const char *harness, const char *self, const char *project, struct plan *p,
              struct umw_error **err);
void plan_free(struct plan *p);

/* ---- install_notes.c */

/* Notes on out for each rule of OpenCode's that would give back bash or
 * edit after install: an agent's own, those of a file read after f. */
int notes_opencode(const struct cfile *f, FILE *out, struct umw_error **err);

/* ---- install_apply.c: install and uninstall */

struct install_opts {
        bool uninstall, dry_run, help;
        const char *harness;
        const char *project; /* as given */
        const char *self;    /* umwelt-mcp's absolute path */
        char *project_abs;
        int projfd;
};

/* The plan applied to the project's files, what was there recorded, the
 * files written (or with dry_run, the diffs printed). */
int install_do(const struct install_opts *o, struct umw_error **err);
/* The record's changes undone where the files still hold them, the files
 * and directories install made removed where empty, the record removed. */
int install_undo(const struct install_opts *o, struct umw_error **err);

#endif
