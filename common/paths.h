/* Where umwelt keeps a user's state, and making the directories on the way. */
#ifndef UMW_PATHS_H
#define UMW_PATHS_H

#include <sys/types.h>

struct umw_error;

/* $XDG_STATE_HOME/umwelt/NAME, else $HOME/.local/state/umwelt/NAME (the XDG
 * base directory rule: a relative value is invalid and ignored), into *out
 * (malloc'd); NAME NULL: that umwelt directory itself. Neither absolute is
 * an error naming what. */
int umw_state_dir(const char *name, char **out, struct umw_error **err);

/* mkdir -p: every missing directory of path, the missing parents with
 * parent_mode and path itself with mode (the umask applies); an existing
 * one is left as it is. A failure names the directory it stopped at. */
int umw_mkdir_p(const char *path, mode_t parent_mode, mode_t mode, struct umw_error **err);

/* The program name next to /proc/self/exe (a build directory, or the
 * install), else in UMW_BINDIR, executable (*out malloc'd); where it is
 * neither, an error naming both places. */
int umw_find_program(const char *name, char **out, struct umw_error **err);

#endif
