/* The worker's tools (worker.h), each in the sandbox's view. */
#ifndef UMW_MCP_WORKER_INT_H
#define UMW_MCP_WORKER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_tree.h>

struct umw_error;

/* A tool's text, bounded: what does not fit is counted, not kept. */
struct mcp_text {
        char *p;
        size_t len, cap, max;
        bool cut;
};

/* Appends n bytes (or what fits under max: then cut). -ENOMEM only. */
int mcp_text_add(struct mcp_text *t, const char *s, size_t n);
int mcp_text_printf(struct mcp_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mcp_text_free(struct mcp_text *t);

/* The arguments' members, typed; absent optional ones keep *out. */
int worker_arg_str(yajl_val args, const char *key, bool required, const char **out,
                   struct umw_error **err);
int worker_arg_uint(yajl_val args, const char *key, unsigned long max, unsigned long *out,
                    struct umw_error **err);
int worker_arg_bool(yajl_val args, const char *key, bool *out, struct umw_error **err);

/* The file tools: 0 with out filled, or an error that is the refusal. */
int worker_read(yajl_val args, struct mcp_text *out, struct umw_error **err);
int worker_write(yajl_val args, struct mcp_text *out, struct umw_error **err);
int worker_edit(yajl_val args, struct mcp_text *out, struct umw_error **err);
int worker_ls(yajl_val args, struct mcp_text *out, struct umw_error **err);
int worker_glob(yajl_val args, struct mcp_text *out, struct umw_error **err);
int worker_grep(yajl_val args, struct mcp_text *out, struct umw_error **err);

/* A file's bytes for edit and grep: at most WORKER_FILE_MAX. */
#define WORKER_FILE_MAX (16u << 20)

/* Whether name matches a glob where "**" spans directories (glob and
 * grep's filter). */
bool worker_glob_match(const char *pattern, const char *name);

#endif
