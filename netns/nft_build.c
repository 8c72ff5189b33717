#include "netns/nft_build.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Offsets of the addresses in the network header. */
#define IP4_SADDR        12
#define IP4_DADDR        16
#define IP6_SADDR        8
#define IP6_DADDR        24
#define LOOPBACK_IFINDEX 1
#define RULE_TEXT_MAX    2048

struct prefix {
        uint8_t nfproto; /* NFPROTO_IPV4 or NFPROTO_IPV6 */
        uint8_t addr[16];
        unsigned int len; /* in bits */
};

/* Nothing of the host's networks, the provider's or the link is reachable:
 * RFC 1918, CGNAT (RFC 6598), link-local with 169.254.169.254, ULA, IPv6
 * link-local. */
static const struct prefix blocked[] = {
    {NFPROTO_IPV4, {10}, 8},         {NFPROTO_IPV4, {172, 16}, 12},  {NFPROTO_IPV4, {192, 168}, 16},
    {NFPROTO_IPV4, {100, 64}, 10},   {NFPROTO_IPV4, {169, 254}, 16}, {NFPROTO_IPV6, {0xfc}, 7},
    {NFPROTO_IPV6, {0xfe, 0x80}, 10}};

enum direction { INBOUND, OUTBOUND };

struct chain_def {
        const char *name;
        uint32_t hook;
        bool filtered; /* carries the blocked prefixes and the lo accept */
        enum direction dir;
};

static const struct chain_def chain_defs[] = {
    {"input", NF_INET_LOCAL_IN, true, INBOUND},
    {"forward", NF_INET_FORWARD, false, INBOUND},
    {"output", NF_INET_LOCAL_OUT, true, OUTBOUND},
};

/* Expressions go into a rule as they are made; a failed allocation is
 * remembered and reported once the rule is complete. */
struct rule_builder {
        struct nftnl_rule *rule;
        bool oom;
};

static struct nftnl_expr *expr_new(struct rule_builder *b, const char *name)
{
        struct nftnl_expr *e = nftnl_expr_alloc(name);
        if (!e)
                b->oom = true;
        return e;
}

static void expr_add(struct rule_builder *b, struct nftnl_expr *e)
{
        if (e)
                nftnl_rule_add_expr(b->rule, e);
}

static void add_meta(struct rule_builder *b, uint32_t key)
{
        struct nftnl_expr *e = expr_new(b, "meta");
        if (e) {
                nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
                nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
        }
        expr_add(b, e);
}

static void add_cmp_eq(struct rule_builder *b, const void *data, uint32_t len)
{
        struct nftnl_expr *e = expr_new(b, "cmp");
        if (e) {
                nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
                nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, NFT_CMP_EQ);
                nftnl_expr_set_data(e, NFTNL_EXPR_CMP_DATA, data, len);
        }
        expr_add(b, e);
}

static void add_payload(struct rule_builder *b, uint32_t offset, uint32_t len)
{
        struct nftnl_expr *e = expr_new(b, "payload");
        if (e) {
                nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, NFT_PAYLOAD_NETWORK_HEADER);
                nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
                nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
                nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
        }
        expr_add(b, e);
}

static void add_mask(struct rule_builder *b, const uint8_t *mask, uint32_t len)
{
        static const uint8_t zero[16];
        struct nftnl_expr *e = expr_new(b, "bitwise");
        if (e) {
                nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
                nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
                nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
                nftnl_expr_set_data(e, NFTNL_EXPR_BITWISE_MASK, mask, len);
                nftnl_expr_set_data(e, NFTNL_EXPR_BITWISE_XOR, zero, len);
        }
        expr_add(b, e);
}

static void add_verdict(struct rule_builder *b, int verdict)
{
        struct nftnl_expr *e = expr_new(b, "immediate");
        if (e) {
                nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
                nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
        }
        expr_add(b, e);
}

/* ip saddr 10.0.0.0/8 drop, as nft compiles it in an inet table. */
static void build_prefix_drop(struct rule_builder *b, const struct prefix *p, enum direction dir)
{
        bool v4 = p->nfproto == NFPROTO_IPV4;
        uint32_t len = v4 ? 4 : 16;
        uint32_t offset = v4 ? (dir == INBOUND ? IP4_SADDR : IP4_DADDR)
                             : (dir == INBOUND ? IP6_SADDR : IP6_DADDR);
        uint8_t mask[16] = {0}, net[16] = {0};
        for (unsigned int bit = 0; bit < p->len; bit++)
                mask[bit / 8] |= (uint8_t)(0x80u >> (bit % 8));
        for (uint32_t i = 0; i < len; i++)
                net[i] = p->addr[i] & mask[i];
        add_meta(b, NFT_META_NFPROTO);
        add_cmp_eq(b, &p->nfproto, sizeof(p->nfproto));
        add_payload(b, offset, len);
        add_mask(b, mask, len);
        add_cmp_eq(b, net, len);
        add_verdict(b, NF_DROP);
}

static void build_loopback_accept(struct rule_builder *b, enum direction dir)
{
        uint32_t lo = LOOPBACK_IFINDEX;
        add_meta(b, dir == INBOUND ? NFT_META_IIF : NFT_META_OIF);
        add_cmp_eq(b, &lo, sizeof(lo));
        add_verdict(b, NF_ACCEPT);
}

static struct nftnl_rule *rule_new(const char *chain)
{
        struct nftnl_rule *r = nftnl_rule_alloc();
        if (!r)
                return NULL;
        nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
        if (nftnl_rule_set_str(r, NFTNL_RULE_TABLE, NFT_TABLE_NAME) < 0 ||
            nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain) < 0) {
                nftnl_rule_free(r);
                return NULL;
        }
        return r;
}

/* Appends to chain the drop of prefix p, or without p the loopback accept. */
static int append_rule(struct nftnl_chain *chain, const struct chain_def *def,
                       const struct prefix *p)
{
        struct rule_builder b = {.rule = rule_new(def->name)};
        if (!b.rule)
                return -ENOMEM;
        if (p)
                build_prefix_drop(&b, p, def->dir);
        else
                build_loopback_accept(&b, def->dir);
        nftnl_chain_rule_add_tail(b.rule, chain);
        return b.oom ? -ENOMEM : 0;
}

static int fill_chain(struct nftnl_chain *chain, const struct chain_def *def)
{
        if (!def->filtered)
                return 0;
        for (size_t i = 0; i < ARRAY_SIZE(blocked); i++) {
                int r = append_rule(chain, def, &blocked[i]);
                if (r < 0)
                        return r;
        }
        return append_rule(chain, def, NULL);
}

static struct nftnl_chain *chain_new(const struct chain_def *def)
{
        struct nftnl_chain *c = nftnl_chain_alloc();
        if (!c)
                return NULL;
        nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
        nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, def->hook);
        nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, 0);
        nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_DROP);
        if (nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, NFT_TABLE_NAME) < 0 ||
            nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, def->name) < 0 ||
            nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter") < 0) {
                nftnl_chain_free(c);
                return NULL;
        }
        return c;
}

static struct nftnl_table *table_new(void)
{
        struct nftnl_table *t = nftnl_table_alloc();
        if (!t)
                return NULL;
        nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
        nftnl_table_set_u32(t, NFTNL_TABLE_FLAGS, 0);
        if (nftnl_table_set_str(t, NFTNL_TABLE_NAME, NFT_TABLE_NAME) < 0) {
                nftnl_table_free(t);
                return NULL;
        }
        return t;
}

int nft_ruleset_build(struct nft_ruleset *rs, struct umw_error **err)
{
        *rs = (struct nft_ruleset){.table = table_new()};
        int r = rs->table ? 0 : -ENOMEM;
        for (size_t i = 0; r == 0 && i < ARRAY_SIZE(chain_defs); i++) {
                struct nftnl_chain *c = chain_new(&chain_defs[i]);
                if (!c) {
                        r = -ENOMEM;
                        break;
                }
                rs->chains[rs->n_chains++] = c;
                r = fill_chain(c, &chain_defs[i]);
        }
        if (r < 0) {
                nft_ruleset_release(rs);
                return umw_fail_sys(err, -r, "nftables: build the ruleset");
        }
        return 0;
}

void nft_ruleset_release(struct nft_ruleset *rs)
{
        if (rs->table)
                nftnl_table_free(rs->table);
        /* A chain frees the rules it holds. */
        for (size_t i = 0; i < rs->n_chains; i++)
                nftnl_chain_free(rs->chains[i]);
        *rs = (struct nft_ruleset){0};
}

int nft_ruleset_add_chain(struct nft_ruleset *rs, struct nftnl_chain *chain, struct umw_error **err)
{
        if (rs->n_chains == NFT_CHAINS_MAX) {
                nftnl_chain_free(chain);
                return umw_fail(err, UMW_EXIT_FAILURE, EEXIST,
                                "nftables: read back: more than %d chains in table inet %s",
                                NFT_CHAINS_MAX, NFT_TABLE_NAME);
        }
        rs->chains[rs->n_chains++] = chain;
        return 0;
}

static struct nftnl_chain *find_chain(const struct nft_ruleset *rs, const char *name)
{
        for (size_t i = 0; name && i < rs->n_chains; i++) {
                const char *n = nftnl_chain_get_str(rs->chains[i], NFTNL_CHAIN_NAME);
                if (n && strcmp(n, name) == 0)
                        return rs->chains[i];
        }
        return NULL;
}

void nft_ruleset_add_rule(struct nft_ruleset *rs, struct nftnl_rule *rule)
{
        struct nftnl_chain *c = find_chain(rs, nftnl_rule_get_str(rule, NFTNL_RULE_CHAIN));
        if (c) {
                nftnl_chain_rule_add_tail(rule, c);
        } else {
                rs->n_stray++;
                nftnl_rule_free(rule);
        }
}

/* Whatever was allocated goes into rs even when it does not parse, so that
 * releasing rs frees it. */
int nft_ruleset_read(struct nft_ruleset *rs, const struct nlmsghdr *nlh, struct umw_error **err)
{
        uint16_t type = NFNL_MSG_TYPE(nlh->nlmsg_type);
        int parsed = -1;
        errno = ENOMEM;
        if (type == NFT_MSG_NEWTABLE) {
                if (rs->table)
                        nftnl_table_free(rs->table);
                rs->table = nftnl_table_alloc();
                if (rs->table)
                        parsed = nftnl_table_nlmsg_parse(nlh, rs->table);
        } else if (type == NFT_MSG_NEWCHAIN) {
                struct nftnl_chain *c = nftnl_chain_alloc();
                if (c) {
                        parsed = nftnl_chain_nlmsg_parse(nlh, c);
                        if (nft_ruleset_add_chain(rs, c, err) < 0)
                                return -EEXIST;
                }
        } else if (type == NFT_MSG_NEWRULE) {
                struct nftnl_rule *r = nftnl_rule_alloc();
                if (r) {
                        parsed = nftnl_rule_nlmsg_parse(nlh, r);
                        nft_ruleset_add_rule(rs, r);
                }
        } else {
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO,
                                "nftables: read back: unexpected message type %#x",
                                nlh->nlmsg_type);
        }
        if (parsed < 0)
                return umw_fail_sys(err, errno ? errno : EPROTO,
                                    "nftables: read back: a message that does not parse");
        return 0;
}

/* ------------------------------------------------------------ batch */

struct batch_writer {
        struct mnl_nlmsg_batch *b;
        uint32_t seq;
        bool full;
};

/* The header of the next message; payload builders write after it. */
static struct nlmsghdr *next_header(struct batch_writer *w, uint16_t type, uint16_t flags)
{
        return nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(w->b), type, NFPROTO_INET, flags,
                                     w->seq++);
}

static void close_message(struct batch_writer *w)
{
        if (!mnl_nlmsg_batch_next(w->b))
                w->full = true;
}

static void put_chain(struct batch_writer *w, struct nftnl_chain *chain, size_t *n_acked)
{
        struct nlmsghdr *nlh = next_header(w, NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_ACK);
        nftnl_chain_nlmsg_build_payload(nlh, chain);
        close_message(w);
        ++*n_acked;
        struct nftnl_rule_iter *it = nftnl_rule_iter_create(chain);
        if (!it) {
                w->full = true; /* reported as no room: nothing more can be built */
                return;
        }
        for (struct nftnl_rule *r = nftnl_rule_iter_next(it); r && !w->full;
             r = nftnl_rule_iter_next(it)) {
                nlh = next_header(w, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK);
                nftnl_rule_nlmsg_build_payload(nlh, r);
                close_message(w);
                ++*n_acked;
        }
        nftnl_rule_iter_destroy(it);
}

int nft_ruleset_batch(const struct nft_ruleset *rs, uint32_t first_seq, void *buf, size_t size,
                      size_t *len, size_t *n_acked, struct umw_error **err)
{
        /* libmnl lets the last message run past the limit: half the buffer. */
        struct batch_writer w = {.b = mnl_nlmsg_batch_start(buf, size / 2), .seq = first_seq};
        if (!w.b)
                return umw_fail_sys(err, ENOMEM, "nftables: batch");
        *n_acked = 0;
        nftnl_batch_begin(mnl_nlmsg_batch_current(w.b), w.seq++);
        close_message(&w);
        struct nlmsghdr *nlh =
            next_header(&w, NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK);
        nftnl_table_nlmsg_build_payload(nlh, rs->table);
        close_message(&w);
        ++*n_acked;
        for (size_t i = 0; i < rs->n_chains && !w.full; i++)
                put_chain(&w, rs->chains[i], n_acked);
        if (!w.full) {
                nftnl_batch_end(mnl_nlmsg_batch_current(w.b), w.seq++);
                close_message(&w);
        }
        *len = mnl_nlmsg_batch_size(w.b);
        mnl_nlmsg_batch_stop(w.b);
        if (w.full)
                return umw_fail_sys(err, ENOSPC, "nftables: the ruleset does not fit in %zu bytes",
                                    size / 2);
        return 0;
}

/* ------------------------------------------------------------ comparison */

int nft_rule_text(const struct nftnl_rule *rule, char *buf, size_t len)
{
        size_t used = 0;
        struct nftnl_expr_iter *it = nftnl_expr_iter_create(rule);
        if (!it)
                return -ENOMEM;
        int r = 0;
        buf[0] = '\0';
        for (struct nftnl_expr *e = nftnl_expr_iter_next(it); e; e = nftnl_expr_iter_next(it)) {
                char one[512];
                if (nftnl_expr_snprintf(one, sizeof(one), e, NFTNL_OUTPUT_DEFAULT, 0) < 0) {
                        r = -EINVAL;
                        break;
                }
                int n = snprintf(buf + used, len - used, "%s[ %s %s]", used ? " " : "",
                                 nftnl_expr_get_str(e, NFTNL_EXPR_NAME), one);
                if (n < 0 || (size_t)n >= len - used) {
                        r = -ENOSPC;
                        break;
                }
                used += (size_t)n;
        }
        nftnl_expr_iter_destroy(it);
        return r;
}

static int differs(const char *what, struct umw_error **err)
{
        return umw_fail(err, UMW_EXIT_FAILURE, EPROTO, "nftables: read back: %s", what);
}

static bool same_u32(const struct nftnl_chain *a, const struct nftnl_chain *b, uint16_t attr)
{
        return nftnl_chain_is_set(a, attr) && nftnl_chain_is_set(b, attr) &&
               nftnl_chain_get_u32(a, attr) == nftnl_chain_get_u32(b, attr);
}

static bool same_str(const struct nftnl_chain *a, const struct nftnl_chain *b, uint16_t attr)
{
        const char *x = nftnl_chain_get_str(a, attr), *y = nftnl_chain_get_str(b, attr);
        return x && y && strcmp(x, y) == 0;
}

static int compare_chain_head(const struct nftnl_chain *want, const struct nftnl_chain *got,
                              struct umw_error **err)
{
        const char *name = nftnl_chain_get_str(want, NFTNL_CHAIN_NAME);
        if (!same_str(want, got, NFTNL_CHAIN_TYPE))
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO,
                                "nftables: read back: chain %s is not a filter chain", name);
        if (!same_u32(want, got, NFTNL_CHAIN_HOOKNUM) || !same_u32(want, got, NFTNL_CHAIN_PRIO))
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO,
                                "nftables: read back: chain %s has another hook or priority", name);
        if (!same_u32(want, got, NFTNL_CHAIN_POLICY))
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO,
                                "nftables: read back: chain %s has no drop policy", name);
        return 0;
}

/* The next rule's text, or "" after the last. */
static int next_rule_text(struct nftnl_rule_iter *it, char *buf, size_t len)
{
        struct nftnl_rule *r = nftnl_rule_iter_next(it);
        if (!r) {
                buf[0] = '\0';
                return 0;
        }
        int n = nft_rule_text(r, buf, len);
        /* An empty rule must not pass for the end of the chain. */
        if (n == 0 && !buf[0])
                snprintf(buf, len, "(no expression)");
        return n;
}

static int compare_rule_lists(struct nftnl_rule_iter *want, struct nftnl_rule_iter *got,
                              const char *chain, struct umw_error **err)
{
        _cleanup_free_ char *w = malloc(RULE_TEXT_MAX), *g = malloc(RULE_TEXT_MAX);
        if (!w || !g)
                return umw_fail_sys(err, ENOMEM, "nftables: read back");
        for (unsigned int n = 1;; n++) {
                int r;
                if ((r = next_rule_text(want, w, RULE_TEXT_MAX)) < 0 ||
                    (r = next_rule_text(got, g, RULE_TEXT_MAX)) < 0)
                        return umw_fail_sys(err, -r, "nftables: read back: chain %s rule %u", chain,
                                            n);
                if (strcmp(w, g) != 0)
                        return umw_fail(err, UMW_EXIT_FAILURE, EPROTO,
                                        "nftables: read back: chain %s rule %u is '%s', sent '%s'",
                                        chain, n, g[0] ? g : "(none)", w[0] ? w : "(none)");
                if (!w[0])
                        return 0;
        }
}

static int compare_rules(const struct nftnl_chain *want, const struct nftnl_chain *got,
                         struct umw_error **err)
{
        struct nftnl_rule_iter *wi = nftnl_rule_iter_create(want);
        struct nftnl_rule_iter *gi = nftnl_rule_iter_create(got);
        int r = wi && gi
                    ? compare_rule_lists(wi, gi, nftnl_chain_get_str(want, NFTNL_CHAIN_NAME), err)
                    : umw_fail_sys(err, ENOMEM, "nftables: read back");
        if (wi)
                nftnl_rule_iter_destroy(wi);
        if (gi)
                nftnl_rule_iter_destroy(gi);
        return r;
}

static int compare_table(const struct nft_ruleset *want, const struct nft_ruleset *got,
                         struct umw_error **err)
{
        if (!got->table)
                return differs("no table inet " NFT_TABLE_NAME, err);
        if (nftnl_table_get_u32(got->table, NFTNL_TABLE_FAMILY) != NFPROTO_INET)
                return differs("table " NFT_TABLE_NAME " is not in family inet", err);
        if (nftnl_table_get_u32(got->table, NFTNL_TABLE_FLAGS) !=
            nftnl_table_get_u32(want->table, NFTNL_TABLE_FLAGS))
                return differs("table inet " NFT_TABLE_NAME " has flags (dormant?)", err);
        if (got->n_chains != want->n_chains)
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO,
                                "nftables: read back: %zu chains in table inet %s, sent %zu",
                                got->n_chains, NFT_TABLE_NAME, want->n_chains);
        if (got->n_stray)
                return differs("rules outside the chains of table inet " NFT_TABLE_NAME, err);
        return 0;
}

int nft_ruleset_compare(const struct nft_ruleset *want, const struct nft_ruleset *got,
                        struct umw_error **err)
{
        int r = compare_table(want, got, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < want->n_chains; i++) {
                const char *name = nftnl_chain_get_str(want->chains[i], NFTNL_CHAIN_NAME);
                const struct nftnl_chain *g = find_chain(got, name);
                if (!g)
                        return umw_fail(err, UMW_EXIT_FAILURE, EPROTO,
                                        "nftables: read back: no chain %s", name);
                if ((r = compare_chain_head(want->chains[i], g, err)) < 0 ||
                    (r = compare_rules(want->chains[i], g, err)) < 0)
                        return r;
        }
        return 0;
}
