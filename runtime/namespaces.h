/* Namespaces: which to create, which to join by path, and the user
 * namespace's id maps written from outside. */
#ifndef UMW_NAMESPACES_H
#define UMW_NAMESPACES_H

#include <stdbool.h>
#include <sys/types.h>

struct spec;
struct spec_idmap;
struct umw_error;

/* CLONE_NEW* flags of the namespaces the spec asks to create, except time
 * (only children enter it, see ns_prepare_parent) and cgroup (created by the
 * init once it is in its cgroup, see init.c). */
int ns_clone_flags(const struct spec *spec);
/* Refuses combinations the runtime cannot build (no mount namespace, a
 * joined user namespace, ...), before anything is created. */
int ns_check(const struct spec *spec, struct umw_error **err);
/* The namespaces umwelt-run was in before ns_prepare_parent. */
struct ns_saved {
        int pid_fd, time_fd;
};

/* In umwelt-run, before clone: the namespaces that only take effect for
 * children (pid joined by path; time, new with its offsets or joined). */
int ns_prepare_parent(const struct spec *spec, struct ns_saved *saved, struct umw_error **err);
/* Right after clone: umwelt-run's own later children (hooks, helpers) are
 * again born in its own pid and time namespaces. */
int ns_restore_parent(struct ns_saved *saved, struct umw_error **err);
/* In the init, after its user namespace is mapped: setns into every
 * namespace the spec names by path (except user, pid and time). */
int ns_join_paths(const struct spec *spec, struct umw_error **err);
/* A user namespace named by path, opened by the init while the host's /proc
 * is still visible (fd -1 when none), and joined last before the process
 * set-up: everything else was built with the runtime's own privileges (its
 * namespaces belong to the runtime's user namespace); the workload runs in
 * the joined one. */
int ns_open_user(const struct spec *spec, int *fd, struct umw_error **err);
int ns_join_user(int fd, struct umw_error **err);
/* From umwelt-run: writes the init's uid_map, setgroups and gid_map. */
int ns_write_id_maps(const struct spec *spec, pid_t pid, struct umw_error **err);
/* The same for any process pid that has a user namespace of its own
 * waiting for these maps. */
int ns_write_maps(pid_t pid, const struct spec_idmap *uids, size_t n_uids,
                  const struct spec_idmap *gids, size_t n_gids, struct umw_error **err);

#endif
