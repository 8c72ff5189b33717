/* The default-drop ruleset as libnftnl objects, and what is needed to check
 * it without a kernel: its netlink batch, a canonical text of each rule and
 * the comparison of a ruleset read back with the one that was sent.
 *
 * table inet umwelt
 *   chain input   (filter hook input priority 0, policy drop):
 *     ip saddr / ip6 saddr in each blocked prefix: drop; iif lo: accept
 *   chain forward (filter hook forward priority 0, policy drop): no rule
 *   chain output  (filter hook output priority 0, policy drop):
 *     ip daddr / ip6 daddr in each blocked prefix: drop; oif lo: accept
 *
 * The blocked prefixes (RFC 1918, CGNAT, link-local with the metadata
 * address, ULA, IPv6 link-local) come before any accept, so an accept added
 * later for another interface can never reach them. lo is matched by its
 * ifindex, 1 in every network namespace: no rename can move it, and a
 * loopback-only namespace needs no conntrack at all. */
#ifndef UMW_NFT_BUILD_H
#define UMW_NFT_BUILD_H

#include <stddef.h>
#include <stdint.h>

struct nftnl_table;
struct nftnl_chain;
struct nftnl_rule;
struct nlmsghdr;
struct umw_error;

#define NFT_TABLE_NAME "umwelt"
/* More chains than this in a table read back is a mismatch in itself. */
#define NFT_CHAINS_MAX 8

/* A table with its chains, each chain holding its rules in order. Both the
 * ruleset to send and the one read back. */
struct nft_ruleset {
        struct nftnl_table *table;
        struct nftnl_chain *chains[NFT_CHAINS_MAX];
        size_t n_chains;
        size_t n_stray; /* rules read back for a chain that was not */
};

/* The default-drop ruleset. */
int nft_ruleset_build(struct nft_ruleset *rs, struct umw_error **err);
void nft_ruleset_release(struct nft_ruleset *rs);

/* For a ruleset being read back: each takes ownership of its argument, even
 * on failure. A rule goes to the chain it names. */
int nft_ruleset_add_chain(struct nft_ruleset *rs, struct nftnl_chain *chain,
                          struct umw_error **err);
void nft_ruleset_add_rule(struct nft_ruleset *rs, struct nftnl_rule *rule);
/* One NFT_MSG_NEWTABLE, NEWCHAIN or NEWRULE message (as the kernel answers
 * a GET) into rs. */
int nft_ruleset_read(struct nft_ruleset *rs, const struct nlmsghdr *nlh, struct umw_error **err);

/* Writes into buf (size bytes, NFT_BATCH_SIZE is ample) one batch
 * (NFNL_MSG_BATCH_BEGIN ... END) that creates rs in one transaction: every
 * message but the two bounds asks for an ack; sequence numbers run from
 * first_seq; the table is created with NLM_F_EXCL, so an existing one fails
 * the whole batch with EEXIST. *len: the bytes written; *n_acked: the
 * messages that ask for an ack (the table's is the first, first_seq + 1). */
#define NFT_BATCH_SIZE (64u << 10)
int nft_ruleset_batch(const struct nft_ruleset *rs, uint32_t first_seq, void *buf, size_t size,
                      size_t *len, size_t *n_acked, struct umw_error **err);

/* The rule's expressions as libnftnl prints them, "[ meta load oif => reg 1 ]
 * [ cmp eq reg 1 0x00000001 ] [ immediate reg 0 accept ]": the same text for
 * a rule as sent and as the kernel reports it. -ENOSPC when len is short. */
int nft_rule_text(const struct nftnl_rule *rule, char *buf, size_t len);

/* 0 when got is want: the table (family, name, no flags: a dormant table
 * filters nothing), the same chains (name, type, hook, priority, policy) and
 * in each the same rules in the same order. Otherwise an error "nftables:
 * read back: ..." naming the first difference. */
int nft_ruleset_compare(const struct nft_ruleset *want, const struct nft_ruleset *got,
                        struct umw_error **err);

#endif
