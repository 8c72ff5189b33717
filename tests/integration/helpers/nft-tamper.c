/* nft-tamper: what a workload would try against its network wall, in the
 * network namespace it runs in, with nothing but netlink (static, for a
 * busybox rootfs). One nf_tables batch on table inet umwelt:
 *   nft-tamper delete   delete the table
 *   nft-tamper flush    delete every rule of the table
 *   nft-tamper accept   set the output chain's policy to accept
 * Prints "ok" when the kernel took it, else "error: " and the kernel's
 * reason, and exits 0 or 1. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static char buf[8192];
static size_t used;

static struct nlmsghdr *begin_msg(uint16_t type, uint16_t flags, uint32_t seq, uint16_t res_id)
{
        struct nlmsghdr *nlh = (struct nlmsghdr *)(buf + used);
        memset(nlh, 0, NLMSG_HDRLEN + sizeof(struct nfgenmsg));
        nlh->nlmsg_type = type;
        nlh->nlmsg_flags = NLM_F_REQUEST | flags;
        nlh->nlmsg_seq = seq;
        nlh->nlmsg_len = NLMSG_HDRLEN + sizeof(struct nfgenmsg);
        struct nfgenmsg *g = NLMSG_DATA(nlh);
        g->nfgen_family =
            type == NFNL_MSG_BATCH_BEGIN || type == NFNL_MSG_BATCH_END ? AF_UNSPEC : NFPROTO_INET;
        g->version = NFNETLINK_V0;
        g->res_id = htons(res_id);
        return nlh;
}

static void put_attr(struct nlmsghdr *nlh, uint16_t type, const void *data, size_t len)
{
        struct nlattr *a = (struct nlattr *)((char *)nlh + NLMSG_ALIGN(nlh->nlmsg_len));
        a->nla_type = type;
        a->nla_len = (uint16_t)(NLA_HDRLEN + len);
        memcpy((char *)a + NLA_HDRLEN, data, len);
        nlh->nlmsg_len = NLMSG_ALIGN(nlh->nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void end_msg(struct nlmsghdr *nlh)
{
        used += NLMSG_ALIGN(nlh->nlmsg_len);
}

static int tamper(struct nlmsghdr *nlh, const char *what)
{
        static const char table[] = "umwelt", chain[] = "output";
        if (strcmp(what, "delete") == 0) {
                put_attr(nlh, NFTA_TABLE_NAME, table, sizeof(table));
                return NFT_MSG_DELTABLE;
        }
        if (strcmp(what, "flush") == 0) {
                put_attr(nlh, NFTA_RULE_TABLE, table, sizeof(table));
                return NFT_MSG_DELRULE;
        }
        if (strcmp(what, "accept") == 0) {
                uint32_t policy = htonl(NF_ACCEPT);
                put_attr(nlh, NFTA_CHAIN_TABLE, table, sizeof(table));
                put_attr(nlh, NFTA_CHAIN_NAME, chain, sizeof(chain));
                put_attr(nlh, NFTA_CHAIN_POLICY, &policy, sizeof(policy));
                return NFT_MSG_NEWCHAIN;
        }
        return -1;
}

/* The first error the kernel answered, 0 when it acked. */
static int answer(int fd)
{
        char in[8192];
        ssize_t n = recv(fd, in, sizeof(in), 0);
        if (n < 0)
                return errno;
        for (struct nlmsghdr *h = (void *)in; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
                struct nlmsgerr *e = NLMSG_DATA(h);
                if (h->nlmsg_type == NLMSG_ERROR && e->error)
                        return -e->error;
        }
        return 0;
}

int main(int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "usage: nft-tamper delete|flush|accept\n");
                return 2;
        }
        end_msg(begin_msg(NFNL_MSG_BATCH_BEGIN, 0, 1, NFNL_SUBSYS_NFTABLES));
        struct nlmsghdr *nlh = begin_msg(0, NLM_F_ACK, 2, 0);
        int type = tamper(nlh, argv[1]);
        if (type < 0) {
                fprintf(stderr, "nft-tamper: unknown action %s\n", argv[1]);
                return 2;
        }
        nlh->nlmsg_type = (uint16_t)((NFNL_SUBSYS_NFTABLES << 8) | type);
        end_msg(nlh);
        end_msg(begin_msg(NFNL_MSG_BATCH_END, 0, 3, NFNL_SUBSYS_NFTABLES));
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
        struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
        if (fd < 0 || sendto(fd, buf, used, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                printf("error: %s\n", strerror(errno));
                return 1;
        }
        int e = answer(fd);
        if (e) {
                printf("error: %s\n", strerror(e));
                return 1;
        }
        printf("ok\n");
        return 0;
}
