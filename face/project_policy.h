/* The project's policy file (.umwelt.toml), applied only as the user last
 * accepted it (project_policy.c says why); policy diff and policy accept. */
#ifndef UMW_PROJECT_POLICY_H
#define UMW_PROJECT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct umw_error;

struct project_policy {
        char *file;      /* WORKSPACE/.umwelt.toml, for messages */
        char *state_dir; /* the project's state directory, where the accepted copy is */
        bool present;    /* the file exists: text, len are its bytes */
        char *text;
        size_t len;
        bool has_accepted; /* a copy was accepted: accepted, accepted_len */
        char *accepted;
        size_t accepted_len;
};

/* Reads the workspace's policy file once (no link followed, a regular file
 * of bounded size) and the copy accepted for project_id. */
int project_policy_read(const char *workspace, const char *project_id, struct project_policy *p,
                        struct umw_error **err);
/* True when there is no file, or it is byte for byte the accepted copy. */
bool project_policy_is_accepted(const struct project_policy *p);
/* The refusal of a file not accepted: UMW_EXIT_CONFIG, saying how to look
 * at it and accept it. */
int project_policy_refuse(const struct project_policy *p, const char *workspace,
                          struct umw_error **err);
/* Records p's bytes as accepted (no file: nothing is), one audit line. */
int project_policy_accept(struct project_policy *p, int audit_fd, struct umw_error **err);
/* Prints the file against the accepted copy (or none), line by line,
 * terminal-safe. */
int project_policy_diff(const struct project_policy *p, FILE *out, struct umw_error **err);
void project_policy_free(struct project_policy *p);
#define _cleanup_project_policy_ __attribute__((cleanup(project_policy_free)))

#endif
