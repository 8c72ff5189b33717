/* probe: a static multi-tool that integration tests run inside containers.
 * Each subcommand prints one fact about the process it runs as, in a form a
 * shell test can compare exactly. Usage: probe SUBCOMMAND [ARGS...]. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int usage(void)
{
        fprintf(stderr, "usage: probe caps|status FIELD|fds|syscall NAME [ARG]|nr NR [ARG...]|"
                        "int80 NR|ids|rlimit NAME|"
                        "write-exe [DEV:INO]|attack-exe FIFO DEV:INO|kill0|watch-exe DEV:INO "
                        "SECONDS|watch-runtime DEV:INO SECONDS|cwd|"
                        "ns|hostname|sleep N|"
                        "exit N|signals [FILE]|open PATH r|w|rw|tty|time|alloc MIB|forks N|"
                        "spin SECONDS\n");
        return 2;
}

/* Prints the value of each named /proc/self/status field as "Name value". */
static int print_status_fields(const char *const *names, size_t n)
{
        FILE *f = fopen("/proc/self/status", "re");
        if (f == NULL) {
                perror("probe: /proc/self/status");
                return 1;
        }
        char line[512];
        size_t found = 0;
        while (fgets(line, sizeof line, f) != NULL) {
                char *colon = strchr(line, ':');
                if (colon == NULL)
                        continue;
                *colon = '\0';
                for (size_t i = 0; i < n; i++) {
                        if (strcmp(line, names[i]) != 0)
                                continue;
                        char *v = colon + 1;
                        v += strspn(v, " \t");
                        v[strcspn(v, "\n")] = '\0';
                        printf("%s %s\n", line, v);
                        found++;
                }
        }
        fclose(f);
        return found == n ? 0 : 1;
}

static int cmd_caps(void)
{
        static const char *const names[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};
        return print_status_fields(names, 5);
}

static int cmd_status(const char *field)
{
        const char *names[] = {field};
        return print_status_fields(names, 1);
}

/* Lists every open fd but 0, 1, 2; exit 1 when there is any. */
static int cmd_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        if (d == NULL) {
                perror("probe: /proc/self/fd");
                return 2;
        }
        int self = dirfd(d), extra = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
                if (e->d_name[0] == '.')
                        continue;
                int fd = atoi(e->d_name);
                if (fd <= 2 || fd == self)
                        continue;
                char target[PATH_MAX] = "";
                ssize_t n = readlinkat(self, e->d_name, target, sizeof target - 1);
                if (n >= 0)
                        target[n] = '\0';
                printf("fd %d -> %s\n", fd, n >= 0 ? target : strerror(errno));
                extra++;
        }
        closedir(d);
        return extra > 0 ? 1 : 0;
}

static long parse_long(const char *s)
{
        return s == NULL ? 0 : strtol(s, NULL, 0);
}

/* Runs one system call directly (no libc substitution of e.g. mkdirat for
 * mkdir) and prints 0 on success or the errno number. */
static int cmd_syscall(const char *name, const char *arg)
{
        char buf[PATH_MAX];
        long r;
        if (strcmp(name, "getcwd") == 0)
                r = syscall(SYS_getcwd, buf, sizeof buf);
        else if (strcmp(name, "uname") == 0) {
                struct utsname u;
                r = syscall(SYS_uname, &u);
        } else if (strcmp(name, "mkdir") == 0)
                r = syscall(SYS_mkdir, arg ? arg : "/tmp/probe-mkdir", 0700);
        else if (strcmp(name, "mkdirat") == 0)
                r = syscall(SYS_mkdirat, AT_FDCWD, arg ? arg : "/tmp/probe-mkdir", 0700);
        else if (strcmp(name, "unshare") == 0)
                r = syscall(SYS_unshare, arg ? parse_long(arg) : CLONE_NEWUTS);
        else if (strcmp(name, "mount") == 0)
                r = syscall(SYS_mount, "none", arg ? arg : "/tmp", "tmpfs", 0L, NULL);
        else if (strcmp(name, "keyctl") == 0)
                r = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
        else if (strcmp(name, "personality") == 0)
                r = syscall(SYS_personality, arg ? parse_long(arg) : 0xffffffffL);
        else if (strcmp(name, "getpid") == 0)
                r = syscall(SYS_getpid);
        else if (strcmp(name, "chdir") == 0)
                r = syscall(SYS_chdir, arg ? arg : "/");
        else if (strcmp(name, "sethostname") == 0)
                r = syscall(SYS_sethostname, arg ? arg : "probe", strlen(arg ? arg : "probe"));
        else if (strcmp(name, "socket") == 0)
                r = syscall(SYS_socket, arg ? parse_long(arg) : AF_UNIX, SOCK_STREAM, 0);
        else {
                fprintf(stderr, "probe: unknown syscall %s\n", name);
                return 2;
        }
        printf("%d\n", r < 0 ? errno : 0);
        return 0;
}

/* Runs system call number NR with up to six numeric arguments (any base
 * strtoull reads, all 64 bits kept) and prints 0 or the errno number. */
static int cmd_nr(char **argv, int argc)
{
        unsigned long a[6] = {0};
        for (int i = 1; i < argc && i <= 6; i++)
                a[i - 1] = strtoull(argv[i], NULL, 0);
        long r = syscall((long)strtoull(argv[0], NULL, 0), a[0], a[1], a[2], a[3], a[4], a[5]);
        printf("%d\n", r < 0 ? errno : 0);
        return 0;
}

/* Makes system call NR through the i386 entry point (int 0x80) and prints
 * what it returned. */
static int cmd_int80(const char *nr)
{
#ifdef __x86_64__
        long r = parse_long(nr);
        __asm__ volatile("int $0x80" : "+a"(r) : : "memory");
        printf("%ld\n", r);
        return 0;
#else
        fprintf(stderr, "probe: int80 %s: not an x86-64 machine\n", nr);
        return 2;
#endif
}

/* uid=U gid=G euid=U egid=G groups=A,B umask=0022 */
static int cmd_ids(void)
{
        gid_t groups[256];
        int n = getgroups(256, groups);
        if (n < 0) {
                perror("probe: getgroups");
                return 1;
        }
        mode_t m = umask(0);
        umask(m);
        printf("uid=%u gid=%u euid=%u egid=%u groups=", getuid(), getgid(), geteuid(), getegid());
        for (int i = 0; i < n; i++)
                printf("%s%u", i ? "," : "", groups[i]);
        printf(" umask=%04o\n", m);
        return 0;
}

static const struct {
        const char *name;
        int resource;
} rlimits[] = {
    {"AS", RLIMIT_AS},           {"CORE", RLIMIT_CORE},         {"CPU", RLIMIT_CPU},
    {"DATA", RLIMIT_DATA},       {"FSIZE", RLIMIT_FSIZE},       {"LOCKS", RLIMIT_LOCKS},
    {"MEMLOCK", RLIMIT_MEMLOCK}, {"MSGQUEUE", RLIMIT_MSGQUEUE}, {"NICE", RLIMIT_NICE},
    {"NOFILE", RLIMIT_NOFILE},   {"NPROC", RLIMIT_NPROC},       {"RSS", RLIMIT_RSS},
    {"RTPRIO", RLIMIT_RTPRIO},   {"RTTIME", RLIMIT_RTTIME},     {"SIGPENDING", RLIMIT_SIGPENDING},
    {"STACK", RLIMIT_STACK},
};

static void print_limit(rlim_t v)
{
        if (v == RLIM_INFINITY)
                printf("unlimited");
        else
                printf("%llu", (unsigned long long)v);
}

/* Prints "SOFT HARD" for RLIMIT_NAME (NAME with or without the prefix). */
static int cmd_rlimit(const char *name)
{
        if (strncmp(name, "RLIMIT_", 7) == 0)
                name += 7;
        for (size_t i = 0; i < sizeof rlimits / sizeof rlimits[0]; i++) {
                if (strcmp(name, rlimits[i].name) != 0)
                        continue;
                struct rlimit rl;
                if (getrlimit(rlimits[i].resource, &rl) < 0) {
                        perror("probe: getrlimit");
                        return 1;
                }
                print_limit(rl.rlim_cur);
                putchar(' ');
                print_limit(rl.rlim_max);
                putchar('\n');
                return 0;
        }
        fprintf(stderr, "probe: unknown rlimit %s\n", name);
        return 2;
}

static int parse_devino(const char *s, dev_t *dev, ino_t *ino)
{
        unsigned long long d, i;
        if (s == NULL || sscanf(s, "%llu:%llu", &d, &i) != 2)
                return -1;
        *dev = (dev_t)d;
        *ino = (ino_t)i;
        return 0;
}

/* Looks at /proc/PID/exe: prints whether it is the watched binary and
 * whether it can be opened for writing. Returns 1 when it is reachable. */
static int check_exe(const char *pid, int want, dev_t dev, ino_t ino, int quiet)
{
        char path[300];
        snprintf(path, sizeof path, "/proc/%s/exe", pid);
        int fd = open(path, O_PATH | O_CLOEXEC);
        if (fd < 0) {
                if (!quiet)
                        printf("%s open-path errno=%d\n", pid, errno);
                return 0;
        }
        struct stat st;
        int match = fstat(fd, &st) == 0 && want && st.st_dev == dev && st.st_ino == ino;
        /* Reopen through the O_PATH fd, as the CVE-2019-5736 exploit does. */
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
        int wfd = open(self, O_WRONLY | O_CLOEXEC);
        int werr = wfd < 0 ? errno : 0;
        if (wfd >= 0)
                close(wfd);
        close(fd);
        if (!quiet || match)
                printf("%s %s write=%d\n", pid, match ? "HOST-BINARY" : "other", werr);
        return match || (want == 0 && werr == 0 && strcmp(pid, "self") != 0);
}

static int is_pid(const char *s)
{
        return s[0] != '\0' && strspn(s, "0123456789") == strlen(s);
}

/* Scans every /proc/PID/exe once. With DEV:INO, exit 1 when a process runs
 * that binary; without, exit 1 when any other process's exe is writable. */
static int scan_exes(int want, dev_t dev, ino_t ino, int quiet)
{
        DIR *d = opendir("/proc");
        if (d == NULL) {
                perror("probe: /proc");
                return 2;
        }
        char me[32];
        snprintf(me, sizeof me, "%d", getpid());
        int bad = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
                if (!is_pid(e->d_name) || strcmp(e->d_name, me) == 0)
                        continue;
                bad |= check_exe(e->d_name, want, dev, ino, quiet);
        }
        closedir(d);
        return bad;
}

static int cmd_write_exe(const char *devino)
{
        dev_t dev = 0;
        ino_t ino = 0;
        int want = devino != NULL;
        if (want && parse_devino(devino, &dev, &ino) < 0)
                return usage();
        int fd = open("/proc/self/exe", O_WRONLY | O_CLOEXEC);
        printf("self write=%d\n", fd < 0 ? errno : 0);
        if (fd >= 0)
                close(fd);
        return scan_exes(want, dev, ino, 0);
}

/* Reopens an O_PATH fd for writing, as the CVE-2019-5736 exploit does
 * once the runtime has exited; never writes. Returns 1 when it opened. */
static int reopen_writable(int fd)
{
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
        int wfd = open(self, O_WRONLY | O_CLOEXEC);
        if (wfd < 0)
                return 0;
        close(wfd);
        return 1;
}

static int pid_held(const int *pids, int n, int pid)
{
        for (int i = 0; i < n; i++)
                if (pids[i] == pid)
                        return 1;
        return 0;
}

/* For SECONDS, watches every /proc/PID/exe: each process seen running the
 * binary DEV:INO from a writable mount is held by an O_PATH fd and retried for writing until the
 * end. Prints "seen N writable N"; exit 1 when any became writable. */
static int cmd_watch_exe(const char *devino, const char *seconds)
{
        dev_t dev;
        ino_t ino;
        if (parse_devino(devino, &dev, &ino) < 0 || seconds == NULL)
                return usage();
        enum { MAX_HELD = 64 };
        int held[MAX_HELD], held_pid[MAX_HELD], nheld = 0, writable = 0;
        time_t end = time(NULL) + parse_long(seconds);
        while (time(NULL) < end) {
                DIR *d = opendir("/proc");
                if (d == NULL) {
                        perror("probe: /proc");
                        return 2;
                }
                struct dirent *e;
                while ((e = readdir(d)) != NULL && nheld < MAX_HELD) {
                        if (!is_pid(e->d_name) || pid_held(held_pid, nheld, atoi(e->d_name)))
                                continue;
                        char path[300];
                        snprintf(path, sizeof path, "/proc/%s/exe", e->d_name);
                        int fd = open(path, O_PATH | O_CLOEXEC);
                        struct stat st;
                        if (fd < 0)
                                continue;
                        /* The binary through a read-only mount of it (the
                         * runtime's protected re-exec) is not it. */
                        struct statfs fs;
                        if (fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino &&
                            fstatfs(fd, &fs) == 0 && !(fs.f_flags & ST_RDONLY)) {
                                printf("seen pid %s\n", e->d_name);
                                held_pid[nheld] = atoi(e->d_name);
                                held[nheld++] = fd;
                        } else
                                close(fd);
                }
                closedir(d);
                for (int i = 0; i < nheld; i++) {
                        if (held[i] >= 0 && reopen_writable(held[i])) {
                                printf("WRITABLE fd %d\n", held[i]);
                                writable++;
                                close(held[i]);
                                held[i] = -1;
                        }
                }
        }
        printf("seen %d writable %d\n", nheld, writable);
        fflush(stdout);
        return writable > 0;
}

/* The CVE-2019-5736 attack as a second container process does it: another
 * process of the container runs a script whose interpreter line is
 * #!/proc/self/exe --log=FIFO, exec'd by the runtime, so it is the runtime
 * image that started it, blocked in opening FIFO. Found by its name, its
 * /proc/PID/exe (DEV:INO, the runtime's binary, on the old code) is chmod'ed setuid, truncated to
 * its own size and opened for writing, and held by an O_PATH fd; once the process is gone (FIFO
 * opened), the fd is reopened for writing through /proc/self/fd and chmod'ed through it. Never
 * writes a byte. Prints each result (0 or the errno's name); exit 1 when any worked on the binary
 * itself, 2 when no atk.sh showed up in 10 s, 0 when all were refused. */
static const char *res(int r)
{
        return r == 0 ? "0" : strerrorname_np(errno);
}

/* pid's pid in its own namespace: the last NSpid of its status. */
static long get_ns_pid(pid_t pid)
{
        char path[64], line[256];
        long last = 0;
        snprintf(path, sizeof path, "/proc/%d/status", pid);
        FILE *f = fopen(path, "re");
        while (f && fgets(line, sizeof line, f))
                if (strncmp(line, "NSpid:", 6) == 0) {
                        char *p = line + 6, *end;
                        for (long v; (v = strtol(p, &end, 10)), end != p; p = end)
                                last = v;
                }
        if (f)
                fclose(f);
        return last;
}

/* The process whose comm is atk.sh: the kernel names a script's process
 * after the script, whatever interpreter runs it. */
static pid_t find_script(void)
{
        for (int n = 0; n < 200; n++, usleep(50000)) {
                DIR *d = opendir("/proc");
                struct dirent *e;
                pid_t found = 0;
                while (d && (e = readdir(d)) != NULL && !found) {
                        char path[300], comm[32] = "";
                        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
                        FILE *f = is_pid(e->d_name) ? fopen(path, "re") : NULL;
                        if (f && fgets(comm, sizeof comm, f) && strcmp(comm, "atk.sh\n") == 0)
                                found = atoi(e->d_name);
                        if (f)
                                fclose(f);
                }
                if (d)
                        closedir(d);
                if (found)
                        return found;
        }
        return 0;
}

static int cmd_attack_exe(const char *fifo, const char *devino)
{
        dev_t dev;
        ino_t ino;
        if (fifo == NULL || parse_devino(devino, &dev, &ino) < 0)
                return usage();
        pid_t pid = find_script();
        if (!pid) {
                printf("no process runs atk.sh\n");
                return 2;
        }
        char exe[64];
        struct stat st;
        snprintf(exe, sizeof exe, "/proc/%d/exe", pid);
        int path = open(exe, O_PATH | O_CLOEXEC);
        if (path < 0 || fstat(path, &st) < 0) {
                printf("open O_PATH %s\n", strerrorname_np(errno));
                return 2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        /* A copy (a sealed memfd) may take a chmod: no host file changes. */
        int binary = st.st_dev == dev && st.st_ino == ino;
        printf("target %s the runtime's binary\n", binary ? "is" : "is a copy of");
        int bad = 0, r, w;
        r = chmod(exe, (st.st_mode & 07777) | S_ISUID);
        bad |= r == 0;
        printf("chmod %s\n", res(r));
        r = truncate(exe, st.st_size);
        bad |= r == 0;
        printf("truncate %s\n", res(r));
        w = open(exe, O_WRONLY | O_CLOEXEC);
        bad |= w >= 0;
        printf("open-write %s\n", res(w < 0 ? -1 : 0));
        close(w);
        /* The init of its pid namespace takes every process there along
         * when it goes: the reopen is the attack of a longer-lived one. */
        if (get_ns_pid(pid) == 1) {
                printf("reopen skipped: the target is the init\n");
                return bad && binary;
        }
        /* Let it go: it fails on its verb and exits. */
        close(open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC));
        for (int n = 0; n < 100 && kill(pid, 0) == 0; n++)
                usleep(20000);
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", path);
        w = open(self, O_WRONLY | O_CLOEXEC);
        bad |= w >= 0;
        printf("reopen-write %s\n", res(w < 0 ? -1 : 0));
        close(w);
        r = chmod(self, (st.st_mode & 07777) | S_ISUID);
        bad |= r == 0;
        printf("reopen-chmod %s\n", res(r));
        fflush(stdout);
        return bad && binary;
}

static int runs_binary(const char *exe, dev_t dev, ino_t ino)
{
        struct stat st;
        return stat(exe, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* What an escape through a runtime image needs, tried on pid: its exe
 * opened (O_PATH, then again for writing) and ptrace (PTRACE_SEIZE). 2 when either
 * reached a process still running DEV:INO, 1 when both were refused (EACCES
 * or EPERM), 0 when it was gone or ran something else by then. */
static int try_runtime(int pid, dev_t dev, ino_t ino)
{
        char exe[64];
        snprintf(exe, sizeof exe, "/proc/%d/exe", pid);
        int fd = open(exe, O_PATH | O_CLOEXEC);
        int open_errno = fd < 0 ? errno : 0;
        if (fd >= 0) {
                struct stat st;
                int hit = fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
                if (hit)
                        printf("OPENED exe of pid %d, for writing: %s\n", pid,
                               reopen_writable(fd) ? "yes" : "no");
                close(fd);
                return hit ? 2 : 0;
        }
        /* SEIZE, not ATTACH: the same permission check, and no SIGSTOP that
         * could leave a process it raced into exec'ing stopped for good. */
        if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) == 0) {
                /* Stopped, it cannot exec away while its exe is looked at. */
                int status = 0;
                int stopped = ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) == 0 &&
                              waitpid(pid, &status, __WALL) == pid && WIFSTOPPED(status);
                int hit = runs_binary(exe, dev, ino);
                if (hit)
                        printf("ATTACHED pid %d\n", pid);
                if (stopped) {
                        long pass = (status >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(status);
                        ptrace(PTRACE_DETACH, pid, NULL, (void *)pass);
                }
                return hit ? 2 : 0;
        }
        int ptrace_errno = errno;
        return (open_errno == EACCES || open_errno == EPERM) && ptrace_errno == EPERM;
}

static int is_runtime_comm(const char *pid)
{
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/%s/comm", pid);
        FILE *f = fopen(path, "re");
        if (f == NULL)
                return 0;
        int yes = fgets(comm, sizeof comm, f) != NULL && strcmp(comm, "umwelt-run\n") == 0;
        fclose(f);
        return yes;
}

/* For SECONDS, tries try_runtime on every process named umwelt-run that
 * appears (an exec entering). Prints "runtime N denied N breached N"; exit
 * 1 on a breach. */
static int cmd_watch_runtime(const char *devino, const char *seconds)
{
        dev_t dev;
        ino_t ino;
        if (parse_devino(devino, &dev, &ino) < 0 || seconds == NULL)
                return usage();
        enum { MAX_TRIED = 4096 };
        static int tried[MAX_TRIED];
        int ntried = 0, denied = 0, breached = 0;
        time_t end = time(NULL) + parse_long(seconds);
        while (time(NULL) < end && ntried < MAX_TRIED) {
                DIR *d = opendir("/proc");
                if (d == NULL) {
                        perror("probe: /proc");
                        return 2;
                }
                struct dirent *e;
                while ((e = readdir(d)) != NULL && ntried < MAX_TRIED) {
                        int pid = atoi(e->d_name);
                        if (!is_pid(e->d_name) || pid_held(tried, ntried, pid) ||
                            !is_runtime_comm(e->d_name))
                                continue;
                        tried[ntried++] = pid;
                        int r = try_runtime(pid, dev, ino);
                        denied += r == 1;
                        breached += r == 2;
                }
                closedir(d);
        }
        printf("runtime %d denied %d breached %d\n", ntried, denied, breached);
        fflush(stdout);
        return breached > 0;
}

static int cmd_cwd(void)
{
        char buf[PATH_MAX];
        if (getcwd(buf, sizeof buf) == NULL) {
                perror("probe: getcwd");
                return 1;
        }
        printf("%s\n", buf);
        return 0;
}

/* One "name inode" line per namespace, sorted by the kernel's order. */
static int cmd_ns(void)
{
        static const char *const names[] = {"cgroup", "ipc",  "mnt",  "net",
                                            "pid",    "time", "user", "uts"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
                char path[64];
                snprintf(path, sizeof path, "/proc/self/ns/%s", names[i]);
                struct stat st;
                if (stat(path, &st) < 0)
                        printf("%s none\n", names[i]);
                else
                        printf("%s %llu\n", names[i], (unsigned long long)st.st_ino);
        }
        return 0;
}

static int cmd_hostname(void)
{
        struct utsname u;
        if (uname(&u) < 0) {
                perror("probe: uname");
                return 1;
        }
        printf("%s %s\n", u.nodename, u.domainname);
        return 0;
}

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
        got_signal = sig;
}

/* Prints "ready", waits for one of the common termination signals, then
 * writes its name (to FILE when given) and exits 0. */
static int cmd_signals(const char *file)
{
        static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGQUIT};
        struct sigaction sa = {.sa_handler = on_signal};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
                sigaction(sigs[i], &sa, NULL);
        printf("ready\n");
        fflush(stdout);
        while (got_signal == 0)
                pause();
        FILE *out = file ? fopen(file, "we") : stdout;
        if (out == NULL) {
                perror("probe: signals file");
                return 1;
        }
        fprintf(out, "SIG%s\n", sigabbrev_np(got_signal));
        fclose(out);
        return 0;
}

/* Prints 0 when PATH opens in the given mode ("w" creates it), else the
 * errno number. */
static int cmd_open(const char *path, const char *mode)
{
        int flags;
        if (strcmp(mode, "r") == 0)
                flags = O_RDONLY;
        else if (strcmp(mode, "w") == 0)
                flags = O_WRONLY | O_CREAT;
        else if (strcmp(mode, "rw") == 0)
                flags = O_RDWR;
        else
                return usage();
        int fd = open(path, flags | O_CLOEXEC | O_NOCTTY, 0644);
        printf("%d\n", fd < 0 ? errno : 0);
        if (fd >= 0)
                close(fd);
        return 0;
}

/* isatty and name for fds 0..2, then the controlling terminal's session. */
static int cmd_tty(void)
{
        for (int fd = 0; fd <= 2; fd++) {
                char *name = ttyname(fd);
                printf("%d %s\n", fd, isatty(fd) ? (name ? name : "tty") : "notty");
        }
        printf("ctty %s\n", open("/dev/tty", O_RDONLY | O_CLOEXEC) >= 0 ? "yes" : "no");
        return 0;
}

/* Monotonic and boottime seconds, to check time namespace offsets. */
static int cmd_time(void)
{
        struct timespec m, b;
        clock_gettime(CLOCK_MONOTONIC, &m);
        clock_gettime(CLOCK_BOOTTIME, &b);
        printf("monotonic %lld boottime %lld\n", (long long)m.tv_sec, (long long)b.tv_sec);
        return 0;
}

/* Allocates and touches mib MiB, one at a time, printing each step: the
 * memory limit shows as the last step printed before the OOM kill. */
static int cmd_alloc(const char *mib)
{
        long n = parse_long(mib);
        for (long i = 1; i <= n; i++) {
                char *p = malloc(1 << 20);
                if (!p) {
                        printf("malloc failed at %ld\n", i);
                        return 1;
                }
                memset(p, 1, 1 << 20);
                printf("allocated %ld\n", i);
                fflush(stdout);
        }
        return 0;
}

/* Forks up to n children that wait, prints how many it got, then ends them. */
static int cmd_forks(const char *count)
{
        long n = parse_long(count), got = 0;
        pid_t *kids = calloc((size_t)n + 1, sizeof(pid_t));
        if (!kids)
                return 1;
        for (; got < n; got++) {
                pid_t pid = fork();
                if (pid < 0)
                        break;
                if (pid == 0) {
                        pause();
                        _exit(0);
                }
                kids[got] = pid;
        }
        printf("forked %ld\n", got);
        fflush(stdout);
        for (long i = 0; i < got; i++)
                kill(kids[i], SIGKILL);
        while (wait(NULL) > 0)
                ;
        free(kids);
        return 0;
}

/* Burns CPU for the given wall-clock seconds. */
static int cmd_spin(const char *seconds)
{
        struct timespec start, now;
        long s = parse_long(seconds);
        clock_gettime(CLOCK_MONOTONIC, &start);
        volatile unsigned long x = 0;
        do {
                for (int i = 0; i < 1000000; i++)
                        x++;
                clock_gettime(CLOCK_MONOTONIC, &now);
        } while (now.tv_sec - start.tv_sec < s);
        return 0;
}

int main(int argc, char **argv)
{
        if (argc < 2)
                return usage();
        const char *cmd = argv[1], *a1 = argc > 2 ? argv[2] : NULL, *a2 = argc > 3 ? argv[3] : NULL;
        int r;
        if (strcmp(cmd, "caps") == 0)
                r = cmd_caps();
        else if (strcmp(cmd, "status") == 0 && a1)
                r = cmd_status(a1);
        else if (strcmp(cmd, "fds") == 0)
                r = cmd_fds();
        else if (strcmp(cmd, "syscall") == 0 && a1)
                r = cmd_syscall(a1, a2);
        else if (strcmp(cmd, "nr") == 0 && a1)
                r = cmd_nr(argv + 2, argc - 2);
        else if (strcmp(cmd, "int80") == 0 && a1)
                r = cmd_int80(a1);
        else if (strcmp(cmd, "ids") == 0)
                r = cmd_ids();
        else if (strcmp(cmd, "rlimit") == 0 && a1)
                r = cmd_rlimit(a1);
        else if (strcmp(cmd, "write-exe") == 0)
                r = cmd_write_exe(a1);
        else if (strcmp(cmd, "kill0") == 0)
                return kill(0, SIGKILL) < 0 ? 1 : 0; /* what `kill -KILL 0` does */
        else if (strcmp(cmd, "attack-exe") == 0)
                return cmd_attack_exe(argv[2], argc > 3 ? argv[3] : NULL);
        else if (strcmp(cmd, "watch-exe") == 0)
                r = cmd_watch_exe(a1, a2);
        else if (strcmp(cmd, "watch-runtime") == 0)
                r = cmd_watch_runtime(a1, a2);
        else if (strcmp(cmd, "cwd") == 0)
                r = cmd_cwd();
        else if (strcmp(cmd, "ns") == 0)
                r = cmd_ns();
        else if (strcmp(cmd, "hostname") == 0)
                r = cmd_hostname();
        else if (strcmp(cmd, "sleep") == 0 && a1) {
                unsigned s = (unsigned)parse_long(a1);
                while ((s = sleep(s)) > 0)
                        ;
                r = 0;
        } else if (strcmp(cmd, "exit") == 0 && a1)
                r = (int)parse_long(a1);
        else if (strcmp(cmd, "signals") == 0)
                r = cmd_signals(a1);
        else if (strcmp(cmd, "open") == 0 && a1 && a2)
                r = cmd_open(a1, a2);
        else if (strcmp(cmd, "tty") == 0)
                r = cmd_tty();
        else if (strcmp(cmd, "time") == 0)
                r = cmd_time();
        else if (strcmp(cmd, "alloc") == 0 && a1)
                r = cmd_alloc(a1);
        else if (strcmp(cmd, "forks") == 0 && a1)
                r = cmd_forks(a1);
        else if (strcmp(cmd, "spin") == 0 && a1)
                r = cmd_spin(a1);
        else
                return usage();
        fflush(stdout);
        return r;
}
