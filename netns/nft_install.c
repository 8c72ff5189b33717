#include "netns/nft_install.h"
#include "netns/nft_build.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>

/* A dump message is at most as large as the largest read buffer seen, up
 * to 32 KiB: a smaller buffer would truncate it. */
#define RECV_SIZE    (32u << 10)
#define REQUEST_SIZE 512u

struct nl {
        struct mnl_socket *sock;
        uint32_t portid, seq;
};

static void nl_close(struct nl *nl)
{
        if (nl->sock)
                mnl_socket_close(nl->sock);
}

static int nl_open(struct nl *nl, struct umw_error **err)
{
        *nl = (struct nl){.sock = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC), .seq = 1};
        if (!nl->sock)
                return umw_fail_errno(err, "nftables: open a netfilter netlink socket (is "
                                           "nfnetlink in the kernel?)");
        if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0)
                return umw_fail_errno(err, "nftables: bind the netlink socket");
        nl->portid = mnl_socket_get_portid(nl->sock);
        return 0;
}

/* ------------------------------------------------------------ the batch */

struct acks {
        uint32_t first_seq; /* the batch's begin */
        size_t ok;
        int error; /* the first refusal (positive errno), by sequence */
        uint32_t error_seq;
};

static void note_answer(struct acks *a, const struct nlmsghdr *nlh)
{
        const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
        if (nlh->nlmsg_type != NLMSG_ERROR || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
                return;
        if (e->error == 0) {
                a->ok++;
        } else if (!a->error || nlh->nlmsg_seq < a->error_seq) {
                a->error = -e->error;
                a->error_seq = nlh->nlmsg_seq;
        }
}

/* The kernel runs a batch inside sendmsg: once it returns, every answer is
 * queued, and reading until the queue is empty collects them all. */
static int collect_acks(struct nl *nl, struct acks *a, struct umw_error **err)
{
        _cleanup_free_ char *buf = malloc(RECV_SIZE);
        if (!buf)
                return umw_fail_sys(err, ENOMEM, "nftables: acks");
        for (;;) {
                ssize_t n = recv(mnl_socket_get_fd(nl->sock), buf, RECV_SIZE, MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                        return 0;
                if (n < 0)
                        return umw_fail_errno(err, "nftables: read the kernel's acks");
                int len = (int)n;
                for (const struct nlmsghdr *nlh = (const void *)buf; mnl_nlmsg_ok(nlh, len);
                     nlh = mnl_nlmsg_next(nlh, &len))
                        note_answer(a, nlh);
        }
}

static int refused(const struct acks *a, struct umw_error **err)
{
        if (a->error_seq == a->first_seq)
                return umw_fail_sys(err, a->error,
                                    "nftables: the kernel refused the batch (nf_tables missing, "
                                    "or no CAP_NET_ADMIN over the network namespace)");
        return umw_fail_sys(err, a->error, "nftables: the kernel refused message %u of the ruleset",
                            a->error_seq - a->first_seq);
}

/* *existed: the batch failed only because the table is there already. */
static int send_ruleset(struct nl *nl, const struct nft_ruleset *rs, bool *existed,
                        struct umw_error **err)
{
        _cleanup_free_ char *buf = malloc(NFT_BATCH_SIZE);
        if (!buf)
                return umw_fail_sys(err, ENOMEM, "nftables: batch");
        size_t len = 0, n_acked = 0;
        struct acks a = {.first_seq = nl->seq};
        int r = nft_ruleset_batch(rs, nl->seq, buf, NFT_BATCH_SIZE, &len, &n_acked, err);
        if (r < 0)
                return r;
        nl->seq += (uint32_t)n_acked + 2;
        if (mnl_socket_sendto(nl->sock, buf, len) < 0)
                return umw_fail_errno(err, "nftables: send the ruleset");
        if ((r = collect_acks(nl, &a, err)) < 0)
                return r;
        *existed = a.error == EEXIST && a.error_seq == a.first_seq + 1;
        if (a.error && !*existed)
                return refused(&a, err);
        if (!a.error && a.ok != n_acked)
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO,
                                "nftables: the kernel acknowledged %zu of %zu messages", a.ok,
                                n_acked);
        return 0;
}

/* Best effort, after a ruleset of ours read back wrong: nothing half-right
 * stays in a namespace that outlives the container. */
static void delete_table(struct nl *nl)
{
        char buf[REQUEST_SIZE * 2];
        struct mnl_nlmsg_batch *b = mnl_nlmsg_batch_start(buf, REQUEST_SIZE);
        if (!b)
                return;
        nftnl_batch_begin(mnl_nlmsg_batch_current(b), nl->seq++);
        mnl_nlmsg_batch_next(b);
        struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(b), NFT_MSG_DELTABLE,
                                                     NFPROTO_INET, 0, nl->seq++);
        mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, NFT_TABLE_NAME);
        mnl_nlmsg_batch_next(b);
        nftnl_batch_end(mnl_nlmsg_batch_current(b), nl->seq++);
        mnl_nlmsg_batch_next(b);
        (void)!mnl_socket_sendto(nl->sock, mnl_nlmsg_batch_head(b), mnl_nlmsg_batch_size(b));
        mnl_nlmsg_batch_stop(b);
}

/* ------------------------------------------------------------ reading back */

struct reader {
        struct nft_ruleset *rs;
        struct umw_error **err;
};

static int on_object(const struct nlmsghdr *nlh, void *data)
{
        struct reader *rd = data;
        return nft_ruleset_read(rd->rs, nlh, rd->err) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
}

/* One request about table inet umwelt (name_attr names it), every answer
 * handed to cb until the kernel's ack or the dump's end. */
static int request(struct nl *nl, uint16_t type, uint16_t flags, uint16_t name_attr, mnl_cb_t cb,
                   struct reader *rd, const char *what)
{
        _cleanup_free_ char *buf = malloc(RECV_SIZE);
        if (!buf)
                return umw_fail_sys(rd->err, ENOMEM, "nftables: read back");
        uint32_t seq = nl->seq++;
        struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(buf, type, NFPROTO_INET, flags, seq);
        mnl_attr_put_strz(nlh, name_attr, NFT_TABLE_NAME);
        if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
                return umw_fail_errno(rd->err, "nftables: ask for the %s", what);
        int r;
        do {
                ssize_t n = mnl_socket_recvfrom(nl->sock, buf, RECV_SIZE);
                if (n < 0)
                        return umw_fail_errno(rd->err, "nftables: read back the %s", what);
                errno = 0;
                r = mnl_cb_run(buf, (size_t)n, seq, nl->portid, cb, rd);
        } while (r > MNL_CB_STOP);
        if (r < 0 && !*rd->err)
                return umw_fail_sys(rd->err, errno ? errno : EPROTO, "nftables: read back the %s",
                                    what);
        return r < 0 ? -EPROTO : 0;
}

static int read_back(struct nl *nl, struct nft_ruleset *got, struct umw_error **err)
{
        struct reader rd = {.rs = got, .err = err};
        int r;
        if ((r = request(nl, NFT_MSG_GETTABLE, NLM_F_ACK, NFTA_TABLE_NAME, on_object, &rd,
                         "table inet " NFT_TABLE_NAME)) < 0 ||
            (r = request(nl, NFT_MSG_GETCHAIN, NLM_F_DUMP, NFTA_CHAIN_TABLE, on_object, &rd,
                         "chains")) < 0)
                return r;
        return request(nl, NFT_MSG_GETRULE, NLM_F_DUMP, NFTA_RULE_TABLE, on_object, &rd, "rules");
}

/* Sends want and reads what the kernel holds back into got, to compare. */
static int send_and_check(struct nl *nl, struct nft_ruleset *want, struct nft_ruleset *got,
                          bool *existed, struct umw_error **err)
{
        int r;
        if ((r = send_ruleset(nl, want, existed, err)) < 0 || (r = read_back(nl, got, err)) < 0)
                return r;
        return nft_ruleset_compare(want, got, err);
}

int nft_ruleset_install(struct umw_error **err)
{
        struct nft_ruleset want, got = {0};
        int r = nft_ruleset_build(&want, err);
        if (r < 0)
                return r;
        struct nl nl;
        bool existed = false;
        if ((r = nl_open(&nl, err)) == 0)
                r = send_and_check(&nl, &want, &got, &existed, err);
        if (r < 0 && existed)
                umw_error_prefix(err, "table inet %s was in the network namespace already",
                                 NFT_TABLE_NAME);
        else if (r < 0 && got.table)
                delete_table(&nl);
        nl_close(&nl);
        nft_ruleset_release(&got);
        nft_ruleset_release(&want);
        return r;
}
