/* The agent's repository (face/agent_repo.h), made from the host's .git
 * by plain file copies: no git library at a sandbox's start. The host's
 * .git is read through fds beneath it, never following a link (in direct
 * mode an agent had the workspace, and its .git's names, in hand). What is
 * copied is data git reads, not runs: HEAD, the branches and tags (loose
 * and packed; remote-tracking refs stay behind with the remotes), the
 * index. The config is written fresh. HEAD is written last, so a layer
 * whose copy was cut short is made again at the next start. */
#include "face/agent_repo.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEAD_MAX        4096
#define REF_FILE_MAX    4096
#define REFS_MAX        65536
#define REF_DEPTH_MAX   32
#define PACKED_REFS_MAX (256u << 20)
#define OID_HEX         40

static const char agent_config[] = "[core]\n"
                                   "\trepositoryformatversion = 0\n"
                                   "\tfilemode = true\n"
                                   "\tbare = false\n"
                                   "\tlogallrefupdates = true\n";

/* s starts with an object id (s is NUL-terminated). */
static bool oid_prefix(const char *s)
{
        return strspn(s, "0123456789abcdef") == OID_HEX;
}

/* A ref file's or HEAD's text: an id and at most a newline. */
static bool is_oid(const char *s, size_t len)
{
        return oid_prefix(s) && (len == OID_HEX || (len == OID_HEX + 1 && s[OID_HEX] == '\n'));
}

/* name beneath dir as a regular file of at most max bytes; *out NULL when
 * it does not exist. */
static int read_beneath(int dir, const char *name, size_t max, char **out, size_t *len,
                        struct umw_error **err)
{
        *out = NULL;
        *len = 0;
        _cleanup_close_ int fd = umw_open_beneath(dir, name, O_RDONLY);
        if (fd == -ENOENT)
                return 0;
        struct stat st;
        if (fd < 0)
                return umw_fail_sys(err, -fd, ".git/%s", name);
        if (fstat(fd, &st) < 0)
                return umw_fail_errno(err, ".git/%s", name);
        if (!S_ISREG(st.st_mode))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, ".git/%s: expected a regular file",
                                name);
        return umw_read_fd(fd, name, max, out, len, err);
}

/* In packed-refs, the line "OID REF" for ref; its OID copied to oid. */
static void packed_lookup(const char *packed, const char *ref, char oid[OID_HEX + 1])
{
        size_t rlen = strlen(ref);
        for (const char *l = packed, *nl; *l; l = nl + 1) {
                nl = strchr(l, '\n');
                size_t llen = nl ? (size_t)(nl - l) : strlen(l);
                if (llen == OID_HEX + 1 + rlen && oid_prefix(l) && l[OID_HEX] == ' ' &&
                    memcmp(l + OID_HEX + 1, ref, rlen) == 0) {
                        memcpy(oid, l, OID_HEX);
                        oid[OID_HEX] = '\0';
                        return;
                }
                if (!nl)
                        return;
        }
}

/* HEAD's commit, through a branch it names (loose, else packed); oid
 * empty when the branch has no commit yet. */
static int head_commit(int git, const char *head, const char *packed, char oid[OID_HEX + 1],
                       struct umw_error **err)
{
        oid[0] = '\0';
        if (is_oid(head, strlen(head))) {
                memcpy(oid, head, OID_HEX);
                oid[OID_HEX] = '\0';
                return 0;
        }
        if (strncmp(head, "ref: refs/heads/", 16) != 0)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                ".git/HEAD: expected a commit id or 'ref: refs/heads/...'");
        _cleanup_free_ char *ref = strndup(head + 5, strcspn(head + 5, "\n"));
        _cleanup_free_ char *loose = NULL;
        size_t len;
        int r = ref ? read_beneath(git, ref, REF_FILE_MAX, &loose, &len, err)
                    : umw_fail_sys(err, ENOMEM, ".git/HEAD");
        if (r < 0)
                return r;
        if (loose && is_oid(loose, len)) {
                memcpy(oid, loose, OID_HEX);
                oid[OID_HEX] = '\0';
        } else if (!loose && packed) {
                packed_lookup(packed, ref, oid);
        }
        return 0;
}

/* packed-refs with only its header and the branches and tags (with a
 * tag's peeled "^OID" line after it). */
static char *packed_filter(const char *packed, size_t len)
{
        char *out = malloc(len + 1);
        size_t n = 0;
        bool keep = false;
        if (!out)
                return NULL;
        for (const char *l = packed; l < packed + len;) {
                const char *end = memchr(l, '\n', (size_t)(packed + len - l));
                size_t llen = end ? (size_t)(end - l) + 1 : (size_t)(packed + len - l);
                bool ref = llen > OID_HEX && oid_prefix(l) && l[OID_HEX] == ' ';
                if (l[0] == '#')
                        keep = true;
                else if (l[0] != '^')
                        keep = ref && (strncmp(l + OID_HEX + 1, "refs/heads/", 11) == 0 ||
                                       strncmp(l + OID_HEX + 1, "refs/tags/", 10) == 0);
                if (keep) {
                        memcpy(out + n, l, llen);
                        n += llen;
                }
                l += llen;
        }
        out[n] = '\0';
        return out;
}

static int copy_refs_dir(int src, int dst, unsigned depth, size_t *count, struct umw_error **err);

/* One entry of a refs directory: a directory copied into, a ref file
 * holding an id copied, anything else (symbolic refs, links) left. */
static int copy_ref(int src, int dst, const char *name, unsigned depth, size_t *count,
                    struct umw_error **err)
{
        struct stat st;
        if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return umw_fail_errno(err, ".git/refs: %s", name);
        if (++*count > REFS_MAX || depth > REF_DEPTH_MAX)
                return umw_fail(err, UMW_EXIT_CONFIG, E2BIG,
                                ".git/refs: more than %d refs or deeper than %d", REFS_MAX,
                                REF_DEPTH_MAX);
        if (S_ISDIR(st.st_mode)) {
                _cleanup_close_ int s = umw_open_beneath(src, name, O_RDONLY | O_DIRECTORY);
                if (s < 0)
                        return umw_fail_sys(err, -s, ".git/refs: %s", name);
                if (mkdirat(dst, name, 0700) < 0 && errno != EEXIST)
                        return umw_fail_errno(err, "agent repository: mkdir %s", name);
                _cleanup_close_ int d = umw_open_beneath(dst, name, O_RDONLY | O_DIRECTORY);
                if (d < 0)
                        return umw_fail_sys(err, -d, "agent repository: %s", name);
                return copy_refs_dir(s, d, depth + 1, count, err);
        }
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r = S_ISREG(st.st_mode) ? read_beneath(src, name, REF_FILE_MAX, &text, &len, err) : 0;
        if (r < 0 || !text || !is_oid(text, len))
                return r;
        text[OID_HEX] = '\n'; /* the buffer holds a NUL there at least */
        return umw_write_file_atomic(dst, name, text, OID_HEX + 1, 0600, err);
}

static int copy_refs_dir(int src, int dst, unsigned depth, size_t *count, struct umw_error **err)
{
        int fd = dup(src);
        _cleanup_closedir_ DIR *d = fd < 0 ? NULL : fdopendir(fd);
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return umw_fail_errno(err, ".git/refs");
        }
        struct dirent *e;
        int r = 0;
        errno = 0;
        while (r >= 0 && (e = readdir(d))) {
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                        r = copy_ref(src, dst, e->d_name, depth, count, err);
                errno = 0;
        }
        if (r >= 0 && errno)
                return umw_fail_errno(err, ".git/refs");
        return r;
}

/* refs/heads and refs/tags, where the host has them. */
static int copy_loose_refs(int git, int agent, struct umw_error **err)
{
        static const char *const dirs[] = {"refs/heads", "refs/tags"};
        size_t count = 0;
        for (size_t i = 0; i < 2; i++) {
                _cleanup_close_ int s = umw_open_beneath(git, dirs[i], O_RDONLY | O_DIRECTORY);
                if (s == -ENOENT)
                        continue;
                _cleanup_close_ int d = umw_open_beneath(agent, dirs[i], O_RDONLY | O_DIRECTORY);
                int r = s < 0   ? umw_fail_sys(err, -s, ".git/%s", dirs[i])
                        : d < 0 ? umw_fail_sys(err, -d, "agent repository: %s", dirs[i])
                                : copy_refs_dir(s, d, 0, &count, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The host's index, so that git status inside starts from it. */
static int copy_index(int git, int agent, struct umw_error **err)
{
        _cleanup_close_ int src = umw_open_beneath(git, "index", O_RDONLY);
        if (src == -ENOENT)
                return 0;
        struct stat st;
        if (src < 0 || fstat(src, &st) < 0)
                return umw_fail_sys(err, src < 0 ? -src : errno, ".git/index");
        if (!S_ISREG(st.st_mode))
                return 0;
        _cleanup_close_ int dst =
            openat(agent, "index", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (dst < 0)
                return umw_fail_errno(err, "agent repository: index");
        char buf[65536];
        ssize_t n;
        while ((n = read(src, buf, sizeof(buf))) > 0)
                if ((n = umw_write_all(dst, buf, (size_t)n)) < 0)
                        return umw_fail_sys(err, (int)-n, "agent repository: index");
        return n < 0 ? umw_fail_errno(err, ".git/index") : 0;
}

static int make_dirs(int agent, struct umw_error **err)
{
        static const char *const dirs[] = {"objects",    "objects/info", "objects/pack",     "refs",
                                           "refs/heads", "refs/tags",    AGENT_REPO_OBJECTS, NULL};
        for (const char *const *d = dirs; *d; d++)
                if (mkdirat(agent, *d, 0700) < 0 && errno != EEXIST)
                        return umw_fail_errno(err, "agent repository: mkdir %s", *d);
        return 0;
}

static int fill(int git, int agent, const char *head, size_t head_len, const char *packed,
                size_t packed_len, struct umw_error **err)
{
        static const char alternates[] = "../" AGENT_REPO_OBJECTS "\n";
        _cleanup_close_ int info = -1;
        _cleanup_free_ char *kept = packed ? packed_filter(packed, packed_len) : NULL;
        int r;
        if (packed && !kept)
                return umw_fail_sys(err, ENOMEM, "agent repository");
        if ((r = make_dirs(agent, err)) < 0 ||
            (r = umw_write_file_atomic(agent, "config", agent_config, sizeof(agent_config) - 1,
                                       0600, err)) < 0)
                return r;
        info = umw_open_beneath(agent, "objects/info", O_RDONLY | O_DIRECTORY);
        if (info < 0)
                return umw_fail_sys(err, -info, "agent repository: objects/info");
        if ((r = umw_write_file_atomic(info, "alternates", alternates, sizeof(alternates) - 1, 0600,
                                       err)) < 0 ||
            (kept && (r = umw_write_file_atomic(agent, "packed-refs", kept, strlen(kept), 0600,
                                                err)) < 0) ||
            (r = copy_loose_refs(git, agent, err)) < 0 || (r = copy_index(git, agent, err)) < 0)
                return r;
        return umw_write_file_atomic(agent, "HEAD", head, head_len, 0600, err);
}

struct host_refs {
        char *head, *packed;
        size_t head_len, packed_len;
        char oid[OID_HEX + 2]; /* HEAD's commit and a newline; empty: none yet */
};

static void host_refs_free(struct host_refs *h)
{
        free(h->head);
        free(h->packed);
}

/* The host's HEAD, its commit, and the packed refs. */
static int read_host_refs(int git, struct host_refs *h, struct umw_error **err)
{
        int r;
        if ((r = read_beneath(git, "HEAD", HEAD_MAX, &h->head, &h->head_len, err)) < 0 ||
            (r = read_beneath(git, "packed-refs", PACKED_REFS_MAX, &h->packed, &h->packed_len,
                              err)) < 0 ||
            (r = head_commit(git, h->head, h->packed, h->oid, err)) < 0)
                return r;
        h->oid[OID_HEX] = '\n';
        return 0;
}

/* Filled with uid and gid as the filesystem ids, so that what is made
 * belongs to whom the sandbox runs as (root's sudo caller), then back. */
static int fill_as(uid_t uid, gid_t gid, int git, int agent, const struct host_refs *h,
                   struct umw_error **err)
{
        uid_t euid = geteuid();
        gid_t egid = getegid();
        bool switch_ids = uid != euid || gid != egid;
        if (switch_ids) {
                setfsgid(gid);
                setfsuid(uid);
                if ((uid_t)setfsuid((uid_t)-1) != uid || (gid_t)setfsgid((gid_t)-1) != gid)
                        return umw_fail_sys(err, EPERM, "agent repository: act as %u:%u",
                                            (unsigned)uid, (unsigned)gid);
        }
        int r = fill(git, agent, h->head, h->head_len, h->packed, h->packed_len, err);
        if (switch_ids) {
                setfsuid(euid);
                setfsgid(egid);
        }
        return r;
}

/* The workspace's .git as a repository: a directory with a HEAD and
 * objects; *git -1 when it is none. */
static int open_host_git(int ws_fd, int *git, struct umw_error **err)
{
        *git = umw_open_beneath(ws_fd, ".git", O_RDONLY | O_DIRECTORY);
        if (*git == -ENOENT || *git == -ENOTDIR || *git == -ELOOP) {
                *git = -1;
                return 0;
        }
        if (*git < 0)
                return umw_fail_sys(err, -*git, "workspace .git");
        struct stat head, objects;
        if (fstatat(*git, "HEAD", &head, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(head.st_mode) ||
            fstatat(*git, "objects", &objects, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISDIR(objects.st_mode))
                umw_close_fdp(git);
        return 0;
}

#define _cleanup_host_refs_ __attribute__((cleanup(host_refs_free)))

int agent_repo_prepare(int ws_fd, int layer_fd, uid_t uid, gid_t gid, bool *present,
                       struct umw_error **err)
{
        struct stat st;
        *present = fstatat(layer_fd, AGENT_REPO_DIR "/HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0;
        if (*present)
                return 0;
        _cleanup_close_ int git = -1, agent = -1;
        _cleanup_host_refs_ struct host_refs h = {0};
        int r = open_host_git(ws_fd, &git, err);
        if (r < 0 || git < 0)
                return r;
        if ((r = read_host_refs(git, &h, err)) < 0 ||
            (h.oid[0] && (r = umw_write_file_atomic(layer_fd, LAYER_BASELINE, h.oid, OID_HEX + 1,
                                                    0600, err)) < 0))
                return umw_error_prefix(err, "review mode's agent repository");
        if (mkdirat(layer_fd, AGENT_REPO_DIR, 0700) < 0 && errno != EEXIST)
                return umw_fail_errno(err, "agent repository: mkdir");
        agent = umw_open_beneath(layer_fd, AGENT_REPO_DIR, O_RDONLY | O_DIRECTORY);
        if (agent < 0 || fchown(agent, uid, gid) < 0)
                return umw_fail_sys(err, agent < 0 ? -agent : errno, "agent repository");
        if ((r = fill_as(uid, gid, git, agent, &h, err)) < 0)
                return umw_error_prefix(err, "review mode's agent repository");
        *present = true;
        return 0;
}
