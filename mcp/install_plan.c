/* What each harness is given, from its own documentation and source (the
 * versions are in umwelt-mcp(1)): where its project configuration lives,
 * the entry that starts `umwelt-mcp --project DIR` over stdio, and how its
 * own bash, edit and write are switched off. */
#include "mcp/install_int.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OpenCode 1.18: opencode.json (or .jsonc) at the project's root, JSONC.
 * A local MCP server is {type: local, command: [argv...]}. Its permission
 * "edit" covers the edit, write and patch tools; a rule of "deny" for a
 * whole permission takes the tool away, and the last rule that matches
 * wins, so ours go last (a "*" after them would win). A permission given
 * as one string is made {"*": it} first. The legacy `tools` switches are
 * folded into permission by OpenCode itself. */
static int opencode(struct plan *p, const char *self, const char *project)
{
        _cleanup_free_ char *self_q = json_quote(self), *project_q = json_quote(project);
        if (!self_q || !project_q)
                return -ENOMEM;
        p->notes = notes_opencode;
        struct hfile *f = &p->files[p->nfiles++];
        *f = (struct hfile){
            .names = {"opencode.json", "opencode.jsonc"}, .jsonc = true, .skeleton = "{}\n"};
        if (asprintf(&p->values[0],
                     "{\"type\":\"local\",\"command\":[%s,\"--project\",%s],"
                     "\"enabled\":true}",
                     self_q, project_q) < 0)
                return -ENOMEM;
        f->steps[f->nsteps++] = (struct step){ST_MEMBER, {"mcp", "umwelt"}, 2, p->values[0]};
        f->steps[f->nsteps++] = (struct step){ST_OBJECTIFY, {"permission"}, 1, NULL};
        f->steps[f->nsteps++] =
            (struct step){ST_MEMBER_LAST, {"permission", "bash"}, 2, "\"deny\""};
        f->steps[f->nsteps++] =
            (struct step){ST_MEMBER_LAST, {"permission", "edit"}, 2, "\"deny\""};
        return 0;
}

/* Claude Code 2.1: the project's servers in .mcp.json ({type: stdio,
 * command, args}), strict JSON; its permission rules in
 * .claude/settings.json, where a deny rule holds in every permission mode
 * and "Edit" covers every tool that edits files. */
static int claude(struct plan *p, const char *self, const char *project)
{
        _cleanup_free_ char *self_q = json_quote(self), *project_q = json_quote(project);
        if (!self_q || !project_q)
                return -ENOMEM;
        struct hfile *f = &p->files[p->nfiles++];
        *f = (struct hfile){.names = {".mcp.json"}, .skeleton = "{}\n"};
        if (asprintf(&p->values[0],
                     "{\"type\":\"stdio\",\"command\":%s,\"args\":[\"--project\",%s]}", self_q,
                     project_q) < 0)
                return -ENOMEM;
        f->steps[f->nsteps++] = (struct step){ST_MEMBER, {"mcpServers", "umwelt"}, 2, p->values[0]};
        f = &p->files[p->nfiles++];
        *f = (struct hfile){.dir = ".claude", .names = {"settings.json"}, .skeleton = "{}\n"};
        static const char *const tools[] = {"Bash", "Edit", "Write"};
        for (size_t i = 0; i < ARRAY_SIZE(tools); i++)
                f->steps[f->nsteps++] =
                    (struct step){ST_ELEMENT, {"permissions", "deny"}, 2, tools[i]};
        return 0;
}

/* Codex 0.171: .codex/config.toml in the project, read only where the user
 * trusts the project. An [mcp_servers.NAME] table of command and args;
 * features.shell_tool = false takes the shell tools (exec_command,
 * write_stdin) away. Its file edits are apply_patch, which the model's
 * catalog entry brings and no setting removes: sandbox_mode = "read-only"
 * keeps them from writing without the user's approval. */
static int codex(struct plan *p, const char *self, const char *project)
{
        struct hfile *f = &p->files[p->nfiles++];
        *f =
            (struct hfile){.dir = ".codex", .names = {"config.toml"}, .toml = true, .skeleton = ""};
        _cleanup_free_ char *self_q = json_quote(self), *project_q = json_quote(project);
        if (!self_q || !project_q ||
            asprintf(&p->values[0], "command = %s\nargs = [\"--project\", %s]\n", self_q,
                     project_q) < 0)
                return -ENOMEM;
        /* The root's key first: in a new file, above the tables. */
        f->steps[f->nsteps++] = (struct step){ST_TOML_KEY, {"sandbox_mode"}, 1, "\"read-only\""};
        f->steps[f->nsteps++] =
            (struct step){ST_TOML_TABLE, {"mcp_servers", "umwelt"}, 2, p->values[0]};
        f->steps[f->nsteps++] = (struct step){ST_TOML_KEY, {"features", "shell_tool"}, 2, "false"};
        p->note = "codex reads .codex/config.toml only in a project it trusts: answer its "
                  "question on the first start there, or see projects.<path>.trust_level in "
                  "~/.codex/config.toml";
        return 0;
}

static const struct harness {
        const char *name;
        int (*make)(struct plan *p, const char *self, const char *project);
} harnesses[] = {
    {"opencode", opencode},
    {"claude", claude},
    {"codex", codex},
};

int plan_make(const char *harness, const char *self, const char *project, struct plan *p,
              struct umw_error **err)
{
        *p = (struct plan){.harness = harness};
        for (size_t i = 0; i < ARRAY_SIZE(harnesses); i++) {
                if (strcmp(harness, harnesses[i].name) != 0)
                        continue;
                int r = harnesses[i].make(p, self, project);
                if (r < 0) {
                        plan_free(p);
                        return umw_fail_sys(err, -r, "%s", harness);
                }
                return 0;
        }
        return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                        "unknown harness '%s': expected opencode, claude or codex", harness);
}

void plan_free(struct plan *p)
{
        for (size_t i = 0; i < ARRAY_SIZE(p->values); i++)
                free(p->values[i]);
        *p = (struct plan){0};
}
