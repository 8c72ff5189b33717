#include "netns/gateway_pool.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

static struct gateway_addr v4(const char *text)
{
        struct gateway_addr a = {.family = AF_INET};
        cr_assert_eq(inet_pton(AF_INET, text, a.addr), 1);
        return a;
}

static struct gateway_pool_key key(const char *host, uint16_t port, const char *addr)
{
        struct gateway_pool_key k;
        struct gateway_addr a = v4(addr);
        cr_assert(gateway_pool_key_set(&k, host, port, &a));
        return k;
}

/* A connected pair: the pool gets one end, the test plays the server. */
static int pair(int *server)
{
        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        *server = sv[1];
        return sv[0];
}

static bool is_open(int fd)
{
        return fcntl(fd, F_GETFD) >= 0;
}

Test(gateway_pool, reused_only_for_exactly_its_key)
{
        struct gateway_pool p = {0};
        int server, fd = pair(&server);
        struct gateway_pool_key k = key("web.example", 80, "11.0.0.10");
        gateway_pool_put(&p, &k, fd, 1000);
        struct gateway_pool_key other_host = key("other.example", 80, "11.0.0.10");
        struct gateway_pool_key other_port = key("web.example", 8080, "11.0.0.10");
        struct gateway_pool_key other_addr = key("web.example", 80, "11.0.0.11");
        cr_assert_eq(gateway_pool_take(&p, &other_host), -1);
        cr_assert_eq(gateway_pool_take(&p, &other_port), -1);
        cr_assert_eq(gateway_pool_take(&p, &other_addr), -1);
        cr_assert_eq(p.n, 1);
        cr_assert_eq(gateway_pool_take(&p, &k), fd);
        cr_assert_eq(p.n, 0);
        cr_assert_eq(gateway_pool_take(&p, &k), -1, "taken once only");
        close(fd);
        close(server);
}

Test(gateway_pool, the_most_recent_first)
{
        struct gateway_pool p = {0};
        int s1, s2, a = pair(&s1), b = pair(&s2);
        struct gateway_pool_key k = key("web.example", 80, "11.0.0.10");
        gateway_pool_put(&p, &k, a, 1000);
        gateway_pool_put(&p, &k, b, 2000);
        cr_assert_eq(gateway_pool_take(&p, &k), b);
        cr_assert_eq(gateway_pool_take(&p, &k), a);
        close(a);
        close(b);
        close(s1);
        close(s2);
}

Test(gateway_pool, a_connection_the_server_closed_or_wrote_on_is_dropped)
{
        struct gateway_pool p = {0};
        int s1, s2, s3, closed = pair(&s1), spoke = pair(&s2), fine = pair(&s3);
        struct gateway_pool_key k = key("web.example", 80, "11.0.0.10");
        gateway_pool_put(&p, &k, fine, 1000);
        gateway_pool_put(&p, &k, spoke, 1001);
        gateway_pool_put(&p, &k, closed, 1002);
        close(s1);
        cr_assert_eq(write(s2, "x", 1), 1);
        cr_assert_eq(gateway_pool_take(&p, &k), fine);
        cr_assert_eq(p.n, 0);
        cr_assert(!is_open(closed) && !is_open(spoke), "dropped ones are closed");
        close(fine);
        close(s2);
        close(s3);
}

Test(gateway_pool, idle_ones_expire_and_a_full_pool_drops_the_oldest)
{
        struct gateway_pool p = {0};
        int servers[GATEWAY_POOL_MAX + 1], fds[GATEWAY_POOL_MAX + 1];
        struct gateway_pool_key k = key("web.example", 80, "11.0.0.10");
        for (int i = 0; i <= GATEWAY_POOL_MAX; i++) {
                fds[i] = pair(&servers[i]);
                gateway_pool_put(&p, &k, fds[i], 1000 + (uint64_t)i);
        }
        cr_assert_eq(p.n, GATEWAY_POOL_MAX);
        cr_assert(!is_open(fds[0]), "the oldest made room");
        gateway_pool_sweep(&p, 1000 + GATEWAY_POOL_IDLE_MS + 2);
        cr_assert_eq(p.n, GATEWAY_POOL_MAX - 1, "one more past the bound");
        cr_assert(!is_open(fds[1]) && is_open(fds[2]));
        gateway_pool_clear(&p);
        cr_assert_eq(p.n, 0);
        for (int i = 0; i <= GATEWAY_POOL_MAX; i++) {
                cr_assert(!is_open(fds[i]));
                close(servers[i]);
        }
}

Test(gateway_pool, a_host_too_long_is_not_keyed)
{
        struct gateway_pool_key k;
        char host[EGRESS_HOST_TEXT_SIZE + 1];
        memset(host, 'a', sizeof(host) - 1);
        host[sizeof(host) - 1] = '\0';
        struct gateway_addr a = v4("11.0.0.10");
        cr_assert(!gateway_pool_key_set(&k, host, 80, &a));
}
