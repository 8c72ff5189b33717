/* The agent's own repository in review mode: LAYER/git, bound over the
 * workspace's .git inside the sandbox. It starts as the host repository's
 * HEAD, branches, tags and index were when the layer began, and reaches the
 * host's objects read-only through an alternate (policy/compose.h's
 * AGENT_REPO_OBJECTS, where the host's .git/objects is bound read-only). Of the host's config,
 * hooks, remotes and credential helpers it holds nothing. The agent commits, branches and resets
 * there as it likes: none of it reaches the host's .git, and none of it is in the layer's upper
 * (what deliver reads). */
#ifndef UMW_AGENT_REPO_H
#define UMW_AGENT_REPO_H

#include <stdbool.h>
#include <sys/types.h>

#include "policy/compose.h"

struct umw_error;

/* The layer's files: the agent's repository, and the host's HEAD commit
 * when the layer began (40 hex digits and a newline), which deliveries are
 * made on. */
#define AGENT_REPO_DIR "git"
#define LAYER_BASELINE "baseline"

/* Makes layer_fd/git from the repository at ws_fd/.git, once (a layer that
 * has one keeps it), owned by uid:gid, and the layer's baseline. *present:
 * there is one (none when the workspace's .git is no directory holding a
 * repository). */
int agent_repo_prepare(int ws_fd, int layer_fd, uid_t uid, gid_t gid, bool *present,
                       struct umw_error **err);

#endif
