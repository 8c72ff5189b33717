/* policy diff: the project's policy file against the copy last accepted,
 * line by line (common/linediff.h). The file is the agent's
 * text shown on the user's terminal: every byte that could steer the
 * terminal (C0 and C1 controls, DEL, bytes that are not UTF-8) is printed
 * as \xNN, so no line can hide another. */
#include "face/project_policy.h"
#include "common/error.h"
#include "common/linediff.h"
#include "common/utf8.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_line(char mark, const char *line, size_t len, void *ctx)
{
        FILE *out = ctx;
        fputc(mark, out);
        umw_put_printable(out, line, len, true);
        fputc('\n', out);
}

int project_policy_diff(const struct project_policy *p, FILE *out, struct umw_error **err)
{
        fprintf(out, "--- %s\n+++ %s\n",
                p->has_accepted ? "accepted" : "accepted: none (never accepted)",
                p->present ? p->file : "(no file)");
        int r = linediff(p->accepted, p->accepted_len, p->text, p->len, put_line, out);
        if (r < 0)
                return umw_fail_sys(err, -r, "policy diff");
        bool a_nl = p->accepted_len && p->accepted[p->accepted_len - 1] == '\n';
        bool b_nl = p->len && p->text[p->len - 1] == '\n';
        if (p->accepted_len && p->len && a_nl != b_nl)
                fprintf(out, "(the %s file's last line has no newline)\n",
                        a_nl ? "new" : "accepted");
        return 0;
}
