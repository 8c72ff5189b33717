/* The buckets of a delivery (delivery_rules.h). A path is judged part by
 * part. The .git rule follows git's own verify_path: a part is .git when,
 * with the code points HFS+ ignores removed, ASCII case folded and the
 * trailing dots and spaces NTFS drops stripped, it is ".git", or NTFS's
 * short name "git~1", or ".git:" and a stream name. The held names are data,
 * each with the reason a user is shown. */
#include "policy/delivery_rules.h"
#include "common/utf8.h"

#include <string.h>
#include <strings.h>
#include <sys/stat.h>

struct held {
        const char *name; /* one part, or parts joined by '/', anywhere in the path */
        const char *reason;
};

static const char shell_rc[] = "a shell runs it when it starts";

static const struct held builtin_held[] = {
    {".umwelt.toml", "the sandbox's own policy"},
    {".envrc", "direnv runs it on entering the directory"},
    {".vscode", "the editor runs the tasks and launch settings in it"},
    {".idea", "the IDE runs the run configurations in it"},
    {".devcontainer", "dev container tools build and run what it names"},
    {".npmrc", "npm reads scripts, registries and tokens from it"},
    {".cargo/config.toml", "cargo runs the commands it names"},
    {".cargo/config", "cargo runs the commands it names"},
    {".pre-commit-config.yaml", "pre-commit runs the hooks it names"},
    {".husky", "husky runs its hooks from git"},
    {".github/workflows", "CI runs its workflows with the repository's secrets"},
    {".bashrc", shell_rc},
    {".bash_profile", shell_rc},
    {".bash_login", shell_rc},
    {".bash_logout", shell_rc},
    {".profile", shell_rc},
    {".zshrc", shell_rc},
    {".zshenv", shell_rc},
    {".zprofile", shell_rc},
    {".zlogin", shell_rc},
    {".zlogout", shell_rc},
    {".cshrc", shell_rc},
    {".tcshrc", shell_rc},
    {".kshrc", shell_rc},
};

const char *delivery_bucket_name(enum delivery_bucket b)
{
        return b == DELIVERY_APPLY ? "apply" : b == DELIVERY_HOLD ? "hold" : "reject";
}

/* Code points HFS+ leaves out of a name when it compares (git's
 * is_hfs_dotgit list): joiners, directional marks, U+FEFF. */
static bool hfs_ignored(uint32_t cp)
{
        return (cp >= 0x200c && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) ||
               (cp >= 0x206a && cp <= 0x206f) || cp == 0xfeff;
}

/* part folded as the filesystems above compare names, into out (at most
 * 15 bytes and a NUL: longer is no .git): false when it is not UTF-8. */
static bool fold(const char *part, size_t len, char out[static 16])
{
        size_t o = 0;
        for (size_t i = 0; i < len;) {
                uint32_t cp;
                size_t n = umw_utf8_decode((const unsigned char *)part + i, len - i, &cp);
                if (!n)
                        return false;
                i += n;
                if (hfs_ignored(cp))
                        continue;
                if (o < 15)
                        out[o] = cp < 0x80 ? (char)(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp) : '?';
                o++;
        }
        if (o > 15)
                o = 15;
        while (o > 0 && (out[o - 1] == '.' || out[o - 1] == ' '))
                o--;
        out[o] = '\0';
        return true;
}

static bool is_dotgit(const char *folded)
{
        return strcmp(folded, ".git") == 0 || strcmp(folded, "git~1") == 0 ||
               strncmp(folded, ".git:", 5) == 0;
}

bool delivery_part_is_dotgit(const char *part, size_t len)
{
        char folded[16];
        return fold(part, len, folded) && is_dotgit(folded);
}

/* The path's own verdict: reject, or hold for a git file. */
static const char *path_reject(const struct delivery_entry *e, bool *git_file)
{
        *git_file = false;
        if (e->len == 0)
                return "an empty path";
        if (e->path[0] == '/')
                return "an absolute path";
        if (memchr(e->path, '\\', e->len))
                return "a backslash in the path (another filesystem's separator)";
        if (memchr(e->path, '\0', e->len))
                return "a NUL byte in the path";
        for (size_t start = 0; start <= e->len;) {
                const char *slash = memchr(e->path + start, '/', e->len - start);
                size_t end = slash ? (size_t)(slash - e->path) : e->len;
                const char *part = e->path + start;
                size_t n = end - start;
                char folded[16];
                if (n == 0 || (n == 1 && part[0] == '.') || (n == 2 && memcmp(part, "..", 2) == 0))
                        return "an empty, '.' or '..' part in the path";
                if (!fold(part, n, folded))
                        return "a name that is not valid UTF-8";
                if (is_dotgit(folded))
                        return "a .git part (in a spelling some filesystem folds to .git)";
                /* .gitmodules, .gitattributes, .gitignore, .gitlab-ci.yml
                 * (and NTFS's short name of the first); not .github. */
                *git_file = *git_file ||
                            (strncmp(folded, ".git", 4) == 0 && strcmp(folded, ".github") != 0) ||
                            strncmp(folded, "gitmod~", 7) == 0;
                start = end + 1;
        }
        return NULL;
}

/* Whether name ("a" or "a/b") is a run of the path's parts, ASCII case
 * folded (a checkout on a case-insensitive filesystem reads it so). */
static bool has_parts(const struct delivery_entry *e, const char *name)
{
        size_t n = strlen(name);
        for (size_t start = 0; start + n <= e->len;) {
                if (strncasecmp(e->path + start, name, n) == 0 &&
                    (start + n == e->len || e->path[start + n] == '/'))
                        return true;
                const char *slash = memchr(e->path + start, '/', e->len - start);
                if (!slash)
                        break;
                start = (size_t)(slash - e->path) + 1;
        }
        return false;
}

static const char *held_name(const struct delivery_rules *r, const struct delivery_entry *e)
{
        for (size_t i = 0; i < sizeof(builtin_held) / sizeof(builtin_held[0]); i++)
                if (has_parts(e, builtin_held[i].name))
                        return builtin_held[i].reason;
        for (size_t i = 0; r && r->hold && r->hold[i]; i++)
                if (has_parts(e, r->hold[i]))
                        return r->reasons && r->reasons[i] ? r->reasons[i]
                                                           : "named in the user config";
        return NULL;
}

const char *delivery_held_by_name(const struct delivery_rules *rules,
                                  const struct delivery_entry *e)
{
        bool git_file;
        path_reject(e, &git_file);
        return git_file ? "git reads it as configuration" : held_name(rules, e);
}

/* What the entry's type and content hold it for; NULL: nothing. */
static const char *held_content(const struct delivery_rules *r, const struct delivery_entry *e)
{
        uint64_t limit = r && r->size_limit ? r->size_limit : DELIVERY_SIZE_LIMIT;
        if (e->mode == 0)
                return NULL; /* deleted */
        if (S_ISLNK(e->mode))
                return "a symbolic link (held as a link; its target is never read)";
        if (S_ISDIR(e->mode))
                return e->nested_repo ? "a nested repository" : NULL;
        if (e->base_mode && (e->base_mode & S_IFMT) != (e->mode & S_IFMT))
                return "its type changed";
        if ((e->mode | e->base_mode) & 0111)
                return "executable (or it was): what the host may run";
        if (e->binary)
                return "a binary file";
        if (e->size > limit)
                return "larger than the size limit";
        return NULL;
}

void delivery_classify(const struct delivery_rules *rules, const struct delivery_entry *e,
                       struct delivery_verdict *v)
{
        bool git_file;
        const char *why = path_reject(e, &git_file);
        mode_t type = e->mode & S_IFMT;
        if (!why && e->unreadable)
                why = "it could not be read";
        if (!why && e->through_link)
                why = "a path through a symbolic link";
        if (!why && e->mode && type != S_IFREG && type != S_IFLNK && type != S_IFDIR)
                why = "a device node, FIFO or socket";
        if (why) {
                *v = (struct delivery_verdict){DELIVERY_REJECT, why};
                return;
        }
        why = git_file ? "git reads it as configuration" : held_name(rules, e);
        if (!why)
                why = held_content(rules, e);
        *v = (struct delivery_verdict){why ? DELIVERY_HOLD : DELIVERY_APPLY, why};
}
