#include "netns/gateway_upstream.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <resolv.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RESOLVER_THREADS 4
#define HOSTS_FILE_MAX   (1 << 20)

struct hosts_entry {
        char name[EGRESS_HOST_TEXT_SIZE];
        struct gateway_addr addr;
};

struct gateway_resolver {
        struct hosts_entry *hosts; /* a hosts file: the only source */
        size_t n_hosts;
        bool from_file;

        pthread_t threads[RESOLVER_THREADS];
        size_t n_threads;
        pthread_mutex_t lock;
        pthread_cond_t wake;
        struct gateway_lookup *head, *tail; /* queued, not yet taken by a worker */
        bool stop;
        int done_pipe[2]; /* workers write finished lookups' pointers */
};

static int parse_addr(const char *s, struct gateway_addr *a)
{
        memset(a, 0, sizeof(*a));
        if (inet_pton(AF_INET, s, a->addr) == 1)
                a->family = AF_INET;
        else if (inet_pton(AF_INET6, s, a->addr) == 1)
                a->family = AF_INET6;
        else
                return -EINVAL;
        return 0;
}

static int hosts_add(struct gateway_resolver *r, const char *name, const struct gateway_addr *a)
{
        struct hosts_entry *v = reallocarray(r->hosts, r->n_hosts + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        r->hosts = v;
        struct egress_host h;
        _cleanup_error_ struct umw_error *e = NULL;
        if (egress_host_canon(name, strlen(name), &h, &e) < 0 || h.kind != EGRESS_HOST_NAME)
                return -EINVAL;
        snprintf(v[r->n_hosts].name, sizeof(v[r->n_hosts].name), "%s", h.text);
        v[r->n_hosts++].addr = *a;
        return 0;
}

/* One line: ADDRESS NAME... with '#' starting a comment, as in /etc/hosts. */
static int hosts_line(struct gateway_resolver *r, char *line, const char *file, size_t lineno,
                      struct umw_error **err)
{
        char *hash = strchr(line, '#');
        if (hash)
                *hash = '\0';
        char *save = NULL;
        const char *first = strtok_r(line, " \t\r", &save);
        if (!first)
                return 0;
        struct gateway_addr a;
        if (parse_addr(first, &a) < 0)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s:%zu: expected an IPv4 or IPv6 address first", file, lineno);
        for (const char *name; (name = strtok_r(NULL, " \t\r", &save));) {
                int rc = hosts_add(r, name, &a);
                if (rc == -EINVAL)
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "%s:%zu: expected host names after the address", file,
                                        lineno);
                if (rc < 0)
                        return umw_fail_sys(err, -rc, "%s", file);
        }
        return 0;
}

/* lenient: lines that do not parse are skipped (the system's file, read
 * as glibc would: what it cannot use it ignores). */
static int hosts_load(struct gateway_resolver *r, const char *file, bool lenient,
                      struct umw_error **err)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0, lineno = 0;
        int rc = umw_read_file_at(AT_FDCWD, file, HOSTS_FILE_MAX, &text, &len, err);
        if (rc < 0)
                return rc;
        if (memchr(text, '\0', len))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: expected text, found a NUL",
                                file);
        char *cursor = text;
        for (char *line; (line = strsep(&cursor, "\n"));) {
                lineno++;
                _cleanup_error_ struct umw_error *bad = NULL;
                rc = hosts_line(r, line, file, lineno, lenient ? &bad : err);
                if (rc < 0 && bad && bad->kind == UMW_EXIT_CONFIG)
                        continue;
                if (rc < 0) {
                        if (bad)
                                *err = TAKE_PTR(bad);
                        return rc;
                }
        }
        return 0;
}

static void hosts_lookup(const struct gateway_resolver *r, struct gateway_lookup *l)
{
        l->n = 0;
        for (size_t i = 0; i < r->n_hosts && l->n < GATEWAY_ADDRS_MAX; i++)
                if (strcmp(r->hosts[i].name, l->name) == 0)
                        l->addrs[l->n++] = r->hosts[i].addr;
        l->rc = l->n ? 0 : -ENOENT;
}

static int gai_errno(int rc)
{
        switch (rc) {
        case EAI_NONAME:
        case EAI_NODATA:
        case EAI_ADDRFAMILY:
                return -ENOENT;
        case EAI_AGAIN:
                return -EAGAIN;
        case EAI_MEMORY:
                return -ENOMEM;
        case EAI_SYSTEM:
                return errno ? -errno : -EIO;
        default:
                return -EIO;
        }
}

static void system_lookup(struct gateway_lookup *l)
{
        struct addrinfo hints = {
            .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG};
        struct addrinfo *res = NULL;
        int rc = getaddrinfo(l->name, NULL, &hints, &res);
        l->n = 0;
        if (rc != 0) {
                l->rc = gai_errno(rc);
                return;
        }
        for (struct addrinfo *ai = res; ai && l->n < GATEWAY_ADDRS_MAX; ai = ai->ai_next) {
                struct gateway_addr *a = &l->addrs[l->n];
                memset(a, 0, sizeof(*a));
                a->family = ai->ai_family;
                if (ai->ai_family == AF_INET)
                        memcpy(a->addr, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
                else if (ai->ai_family == AF_INET6)
                        memcpy(a->addr, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
                else
                        continue;
                l->n++;
        }
        freeaddrinfo(res);
        l->rc = l->n ? 0 : -ENOENT;
}

static struct gateway_lookup *take_queued(struct gateway_resolver *r)
{
        pthread_mutex_lock(&r->lock);
        while (!r->stop && !r->head)
                pthread_cond_wait(&r->wake, &r->lock);
        struct gateway_lookup *l = r->stop ? NULL : r->head;
        if (l) {
                r->head = l->next;
                if (!r->head)
                        r->tail = NULL;
                l->next = NULL;
        }
        pthread_mutex_unlock(&r->lock);
        return l;
}

static void *worker(void *arg)
{
        struct gateway_resolver *r = arg;
        for (struct gateway_lookup *l; (l = take_queued(r));) {
                system_lookup(l);
                /* One pointer: an atomic pipe write; the pipe holds far more
                 * than the connection cap lets be pending. */
                if (write(r->done_pipe[1], &l, sizeof(l)) != sizeof(l))
                        abort();
        }
        return NULL;
}

/* With the first name to resolve: a gateway that resolves none (a sandbox
 * that ends before it asks) starts no thread. Fewer threads than asked for
 * still serve; none is an error (-errno). */
static int start_workers(struct gateway_resolver *r)
{
        while (r->n_threads < RESOLVER_THREADS) {
                int rc = pthread_create(&r->threads[r->n_threads], NULL, worker, r);
                if (rc != 0)
                        return r->n_threads ? 0 : -rc;
                r->n_threads++;
        }
        return 0;
}

/* The engine opens no file once confined, while glibc reads its resolver's
 * configuration (/etc/resolv.conf, /etc/nsswitch.conf, /etc/gai.conf,
 * /etc/host.conf) on first use and later only stats it: one lookup and
 * res_init() now load all of it. What nss_files opens at every lookup
 * (/etc/hosts) is refused later, and glibc asks DNS instead. */
static void warm_up(void)
{
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
        struct addrinfo *res = NULL;
        if (res_init() != 0)
                umw_debug("resolver: res_init failed");
        if (getaddrinfo("localhost", NULL, &hints, &res) == 0)
                freeaddrinfo(res);
}

/* /etc/hosts, read now: nss_files opens it at every lookup, which the
 * confined engine may not. Its names are answered from this copy first, as
 * "hosts: files dns" would; a change to it needs a new gateway. */
static int system_hosts(struct gateway_resolver *r, struct umw_error **err)
{
        _cleanup_error_ struct umw_error *e = NULL;
        int rc = hosts_load(r, "/etc/hosts", true, &e);
        if (rc == -ENOENT || (rc < 0 && e && e->kind == UMW_EXIT_CONFIG)) {
                umw_debug("resolver: /etc/hosts: %s", e ? e->msg : "missing");
                return 0;
        }
        if (rc < 0)
                *err = TAKE_PTR(e);
        return rc;
}

int gateway_resolver_new(const char *hosts_file, struct gateway_resolver **out,
                         struct umw_error **err)
{
        struct gateway_resolver *r = calloc(1, sizeof(*r));
        if (!r)
                return umw_fail_sys(err, ENOMEM, "resolver");
        r->done_pipe[0] = r->done_pipe[1] = -1;
        pthread_mutex_init(&r->lock, NULL);
        pthread_cond_init(&r->wake, NULL);
        int rc;
        if (pipe2(r->done_pipe, O_CLOEXEC) < 0 || fcntl(r->done_pipe[0], F_SETFL, O_NONBLOCK) < 0)
                rc = umw_fail_errno(err, "resolver pipe");
        else if (hosts_file) {
                r->from_file = true;
                rc = hosts_load(r, hosts_file, false, err);
        } else {
                warm_up();
                rc = system_hosts(r, err);
        }
        if (rc < 0) {
                gateway_resolver_free(r);
                return rc;
        }
        *out = r;
        return 0;
}

void gateway_resolver_free(struct gateway_resolver *r)
{
        if (!r)
                return;
        pthread_mutex_lock(&r->lock);
        r->stop = true;
        pthread_cond_broadcast(&r->wake);
        pthread_mutex_unlock(&r->lock);
        for (size_t i = 0; i < r->n_threads; i++)
                pthread_join(r->threads[i], NULL);
        while (r->head) {
                struct gateway_lookup *l = r->head;
                r->head = l->next;
                free(l);
        }
        for (struct gateway_lookup *l; (l = gateway_resolver_done(r));)
                free(l);
        umw_close_fdp(&r->done_pipe[0]);
        umw_close_fdp(&r->done_pipe[1]);
        pthread_cond_destroy(&r->wake);
        pthread_mutex_destroy(&r->lock);
        free(r->hosts);
        free(r);
}

int gateway_resolver_fd(const struct gateway_resolver *r)
{
        return r->done_pipe[0];
}

int gateway_resolver_submit(struct gateway_resolver *r, struct gateway_lookup *l)
{
        if (r->from_file || r->n_hosts) {
                hosts_lookup(r, l);
                if (r->from_file || l->rc == 0)
                        return 1;
        }
        int rc = r->n_threads ? 0 : start_workers(r);
        if (rc < 0) {
                l->rc = rc;
                return 1;
        }
        l->next = NULL;
        pthread_mutex_lock(&r->lock);
        if (r->tail)
                r->tail->next = l;
        else
                r->head = l;
        r->tail = l;
        pthread_cond_signal(&r->wake);
        pthread_mutex_unlock(&r->lock);
        return 0;
}

struct gateway_lookup *gateway_resolver_done(struct gateway_resolver *r)
{
        struct gateway_lookup *l = NULL;
        ssize_t n;
        do
                n = read(r->done_pipe[0], &l, sizeof(l));
        while (n < 0 && errno == EINTR);
        return n == sizeof(l) ? l : NULL;
}

socklen_t gateway_sockaddr(const struct gateway_addr *a, uint16_t port, struct sockaddr_storage *ss)
{
        memset(ss, 0, sizeof(*ss));
        if (a->family == AF_INET) {
                struct sockaddr_in *s = (struct sockaddr_in *)ss;
                s->sin_family = AF_INET;
                s->sin_port = htons(port);
                memcpy(&s->sin_addr, a->addr, 4);
                return sizeof(*s);
        }
        struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;
        s->sin6_family = AF_INET6;
        s->sin6_port = htons(port);
        memcpy(&s->sin6_addr, a->addr, 16);
        return sizeof(*s);
}

int gateway_nodelay(int fd)
{
        int one = 1;
        return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int gateway_dial(const struct gateway_addr *a, uint16_t port, int *fd)
{
        struct sockaddr_storage ss;
        socklen_t len = gateway_sockaddr(a, port, &ss);
        _cleanup_close_ int s = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (s < 0 || gateway_nodelay(s) < 0)
                return -errno;
        if (connect(s, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS)
                return -errno;
        *fd = TAKE_FD(s);
        return 0;
}

void gateway_addr_text(const struct gateway_addr *a, char *buf, size_t size)
{
        if (!inet_ntop(a->family, a->addr, buf, size) && size)
                buf[0] = '\0';
}
