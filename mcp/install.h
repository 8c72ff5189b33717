/* umwelt-mcp's install and uninstall verbs: a coding agent's harness
 * (OpenCode, Claude Code, Codex) configured to run umwelt-mcp as its MCP
 * server for a project, with its own bash, edit and write switched off or
 * denied, so that the agent's only ones act inside the sandbox. The user's
 * files are edited, never replaced: their other entries, comments and
 * layout survive, and uninstall undoes exactly what install did. */
#ifndef UMW_MCP_INSTALL_H
#define UMW_MCP_INSTALL_H

/* `umwelt-mcp install|uninstall ...`: argv[0] is "install" or "uninstall".
 * Prints what it did (or with --dry-run, the change as a unified-style
 * diff) on stdout; returns the exit status (0, or a umw_exit class after
 * printing one error line "umwelt-mcp: ..." on stderr). self: the absolute
 * path of the umwelt-mcp binary to write into the entry. */
int mcp_install_main(int argc, char **argv, const char *self);

#endif
