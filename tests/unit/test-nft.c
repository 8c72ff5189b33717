/* The default-drop ruleset without a kernel: its shape, each rule as nft
 * itself compiles it (the texts are `nft --debug=netlink` output for the
 * same rule), its batch parsed back, the comparison that refuses a
 * ruleset read back different, and the configs spec_load refuses with it. */
#include "netns/nft_build.h"
#include "runtime/spec.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const v4_10_out =
    "[ meta load nfproto => reg 1 ] [ cmp eq reg 1 0x00000002 ] "
    "[ payload load 4b @ network header + 16 => reg 1 ] "
    "[ bitwise reg 1 = ( reg 1 & 0x000000ff ) ^ 0x00000000 ] [ cmp eq reg 1 0x0000000a ] "
    "[ immediate reg 0 drop ]";
static const char *const v4_172_out =
    "[ meta load nfproto => reg 1 ] [ cmp eq reg 1 0x00000002 ] "
    "[ payload load 4b @ network header + 16 => reg 1 ] "
    "[ bitwise reg 1 = ( reg 1 & 0x0000f0ff ) ^ 0x00000000 ] [ cmp eq reg 1 0x000010ac ] "
    "[ immediate reg 0 drop ]";
static const char *const v4_cgnat_in =
    "[ meta load nfproto => reg 1 ] [ cmp eq reg 1 0x00000002 ] "
    "[ payload load 4b @ network header + 12 => reg 1 ] "
    "[ bitwise reg 1 = ( reg 1 & 0x0000c0ff ) ^ 0x00000000 ] [ cmp eq reg 1 0x00004064 ] "
    "[ immediate reg 0 drop ]";
static const char *const v4_linklocal_out =
    "[ meta load nfproto => reg 1 ] [ cmp eq reg 1 0x00000002 ] "
    "[ payload load 4b @ network header + 16 => reg 1 ] "
    "[ bitwise reg 1 = ( reg 1 & 0x0000ffff ) ^ 0x00000000 ] [ cmp eq reg 1 0x0000fea9 ] "
    "[ immediate reg 0 drop ]";
static const char *const v6_ula_out =
    "[ meta load nfproto => reg 1 ] [ cmp eq reg 1 0x0000000a ] "
    "[ payload load 16b @ network header + 24 => reg 1 ] "
    "[ bitwise reg 1 = ( reg 1 & 0x000000fe 0x00000000 0x00000000 0x00000000 ) ^ 0x00000000 "
    "0x00000000 0x00000000 0x00000000 ] "
    "[ cmp eq reg 1 0x000000fc 0x00000000 0x00000000 0x00000000 ] [ immediate reg 0 drop ]";
static const char *const v6_linklocal_in =
    "[ meta load nfproto => reg 1 ] [ cmp eq reg 1 0x0000000a ] "
    "[ payload load 16b @ network header + 8 => reg 1 ] "
    "[ bitwise reg 1 = ( reg 1 & 0x0000c0ff 0x00000000 0x00000000 0x00000000 ) ^ 0x00000000 "
    "0x00000000 0x00000000 0x00000000 ] "
    "[ cmp eq reg 1 0x000080fe 0x00000000 0x00000000 0x00000000 ] [ immediate reg 0 drop ]";
static const char *const lo_out =
    "[ meta load oif => reg 1 ] [ cmp eq reg 1 0x00000001 ] [ immediate reg 0 accept ]";
static const char *const lo_in =
    "[ meta load iif => reg 1 ] [ cmp eq reg 1 0x00000001 ] [ immediate reg 0 accept ]";

static struct nft_ruleset want, got;

static void build_both(void)
{
        struct umw_error *err = NULL;
        cr_assert_eq(nft_ruleset_build(&want, &err), 0);
        cr_assert_eq(nft_ruleset_build(&got, &err), 0);
}

static void release_both(void)
{
        nft_ruleset_release(&want);
        nft_ruleset_release(&got);
}

TestSuite(nft, .init = build_both, .fini = release_both);

static struct nftnl_chain *chain(const struct nft_ruleset *rs, const char *name)
{
        for (size_t i = 0; i < rs->n_chains; i++)
                if (strcmp(nftnl_chain_get_str(rs->chains[i], NFTNL_CHAIN_NAME), name) == 0)
                        return rs->chains[i];
        cr_assert_fail("no chain %s", name);
        return NULL;
}

/* Rule n (from 1) of a chain; NULL past the end. */
static struct nftnl_rule *rule_at(const struct nftnl_chain *c, unsigned int n)
{
        struct nftnl_rule_iter *it = nftnl_rule_iter_create(c);
        struct nftnl_rule *r = NULL;
        for (unsigned int i = 0; i < n; i++)
                r = nftnl_rule_iter_next(it);
        nftnl_rule_iter_destroy(it);
        return r;
}

static unsigned int rule_count(const struct nftnl_chain *c)
{
        unsigned int n = 0;
        while (rule_at(c, n + 1))
                n++;
        return n;
}

static void expect_rule(const char *c, unsigned int n, const char *text)
{
        char buf[2048];
        struct nftnl_rule *r = rule_at(chain(&want, c), n);
        cr_assert_not_null(r, "chain %s has no rule %u", c, n);
        cr_assert_eq(nft_rule_text(r, buf, sizeof(buf)), 0);
        cr_expect_str_eq(buf, text, "chain %s rule %u", c, n);
}

Test(nft, three_base_chains_with_policy_drop)
{
        static const struct {
                const char *name;
                uint32_t hook;
                unsigned int rules;
        } chains[] = {{"input", NF_INET_LOCAL_IN, 8},
                      {"forward", NF_INET_FORWARD, 0},
                      {"output", NF_INET_LOCAL_OUT, 8}};
        cr_assert_eq(want.n_chains, 3);
        cr_expect_str_eq(nftnl_table_get_str(want.table, NFTNL_TABLE_NAME), "umwelt");
        cr_expect_eq(nftnl_table_get_u32(want.table, NFTNL_TABLE_FAMILY), NFPROTO_INET);
        for (size_t i = 0; i < 3; i++) {
                struct nftnl_chain *c = chain(&want, chains[i].name);
                cr_expect_str_eq(nftnl_chain_get_str(c, NFTNL_CHAIN_TYPE), "filter");
                cr_expect_eq(nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM), chains[i].hook);
                cr_expect_eq(nftnl_chain_get_s32(c, NFTNL_CHAIN_PRIO), 0);
                cr_expect_eq(nftnl_chain_get_u32(c, NFTNL_CHAIN_POLICY), NF_DROP);
                cr_expect_eq(rule_count(c), chains[i].rules, "chain %s", chains[i].name);
        }
}

Test(nft, rules_are_what_nft_compiles)
{
        expect_rule("output", 1, v4_10_out);
        expect_rule("output", 2, v4_172_out);
        expect_rule("input", 4, v4_cgnat_in);
        expect_rule("output", 5, v4_linklocal_out);
        expect_rule("output", 6, v6_ula_out);
        expect_rule("input", 7, v6_linklocal_in);
}

Test(nft, loopback_accept_comes_after_every_drop)
{
        expect_rule("input", 8, lo_in);
        expect_rule("output", 8, lo_out);
        char buf[2048];
        for (unsigned int n = 1; n < 8; n++) {
                cr_assert_eq(nft_rule_text(rule_at(chain(&want, "output"), n), buf, sizeof(buf)),
                             0);
                cr_expect(strstr(buf, "accept") == NULL, "output rule %u accepts: %s", n, buf);
        }
}

Test(nft, same_ruleset_compares_equal)
{
        struct umw_error *err = NULL;
        cr_expect_eq(nft_ruleset_compare(&want, &got, &err), 0, "%s", err ? err->msg : "");
        umw_error_free(err);
}

static void expect_differs(const char *needle)
{
        struct umw_error *err = NULL;
        cr_assert_lt(nft_ruleset_compare(&want, &got, &err), 0);
        cr_assert_not_null(err);
        cr_expect(strncmp(err->msg, "nftables: ", 10) == 0, "%s", err->msg);
        cr_expect(strstr(err->msg, needle) != NULL, "'%s' not in: %s", needle, err->msg);
        umw_error_free(err);
}

Test(nft, accept_policy_differs)
{
        nftnl_chain_set_u32(chain(&got, "forward"), NFTNL_CHAIN_POLICY, NF_ACCEPT);
        expect_differs("chain forward has no drop policy");
}

Test(nft, other_hook_differs)
{
        nftnl_chain_set_u32(chain(&got, "output"), NFTNL_CHAIN_HOOKNUM, NF_INET_POST_ROUTING);
        expect_differs("chain output has another hook");
}

Test(nft, dormant_table_differs)
{
        nftnl_table_set_u32(got.table, NFTNL_TABLE_FLAGS, NFT_TABLE_F_DORMANT);
        expect_differs("dormant");
}

Test(nft, missing_rule_differs)
{
        struct nftnl_rule *last = rule_at(chain(&got, "output"), 8);
        nftnl_chain_rule_del(last);
        nftnl_rule_free(last);
        expect_differs("chain output rule 8 is '(none)'");
}

/* An empty rule read back for the named chain. */
static void add_empty_rule(const char *chain_name)
{
        struct nftnl_rule *r = nftnl_rule_alloc();
        nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain_name);
        nft_ruleset_add_rule(&got, r);
}

Test(nft, extra_rule_differs)
{
        add_empty_rule("input");
        expect_differs("chain input rule 9 is '(no expression)', sent '(none)'");
}

/* The lo accept moved before the drops is not the ruleset. */
Test(nft, accept_first_differs)
{
        struct nftnl_chain *c = chain(&got, "input");
        struct nftnl_rule *last = rule_at(c, 8);
        nftnl_chain_rule_del(last);
        nftnl_chain_rule_add(last, c);
        expect_differs("chain input rule 1");
}

Test(nft, rule_for_unknown_chain_differs)
{
        add_empty_rule("postrouting");
        expect_differs("rules outside the chains");
}

Test(nft, missing_table_or_chain_differs)
{
        struct nft_ruleset empty = {0};
        struct umw_error *err = NULL;
        cr_expect_lt(nft_ruleset_compare(&want, &empty, &err), 0);
        cr_expect(err && strstr(err->msg, "no table inet umwelt"), "%s", err ? err->msg : "");
        umw_error_free(err);
        nftnl_chain_free(got.chains[--got.n_chains]);
        expect_differs("2 chains in table inet umwelt, sent 3");
}

/* Every message of the batch parsed back as the kernel would: the same
 * ruleset, with the bounds and flags the kernel needs. */
Test(nft, batch_parses_back_to_the_ruleset)
{
        struct umw_error *err = NULL;
        size_t size = NFT_BATCH_SIZE, len = 0, acked = 0;
        char *buf = malloc(size);
        cr_assert_eq(nft_ruleset_batch(&want, 100, buf, size, &len, &acked, &err), 0);
        cr_expect_eq(acked, 1 + 3 + 16);
        struct nft_ruleset parsed = {0};
        unsigned int n = 0, begin = 0, end = 0;
        int left = (int)len;
        for (const struct nlmsghdr *nlh = (void *)buf; mnl_nlmsg_ok(nlh, left);
             nlh = mnl_nlmsg_next(nlh, &left), n++) {
                cr_expect_eq(nlh->nlmsg_seq, 100 + n);
                uint16_t type = nlh->nlmsg_type;
                bool acks = nlh->nlmsg_flags & NLM_F_ACK;
                if (type == NFNL_MSG_BATCH_BEGIN || type == NFNL_MSG_BATCH_END) {
                        *(type == NFNL_MSG_BATCH_BEGIN ? &begin : &end) = n;
                        cr_expect(!acks);
                        continue;
                }
                cr_expect(acks, "message %u asks for no ack", n);
                uint16_t flags = nlh->nlmsg_flags;
                if ((type & 0xff) == NFT_MSG_NEWTABLE)
                        cr_expect(flags & NLM_F_EXCL, "the table is made with NLM_F_EXCL");
                if ((type & 0xff) == NFT_MSG_NEWRULE)
                        cr_expect(flags & NLM_F_APPEND, "rule %u is not appended", n);
                cr_assert_eq(nft_ruleset_read(&parsed, nlh, &err), 0, "%s", err ? err->msg : "");
        }
        cr_expect_eq(begin, 0);
        cr_expect_eq(end, n - 1);
        cr_expect_eq(n, 22);
        cr_expect_eq(nft_ruleset_compare(&want, &parsed, &err), 0, "%s", err ? err->msg : "");
        nft_ruleset_release(&parsed);
        free(buf);
}

Test(nft, batch_too_small_is_an_error)
{
        struct umw_error *err = NULL;
        char buf[1024];
        size_t len, acked;
        cr_expect_lt(nft_ruleset_batch(&want, 1, buf, sizeof(buf), &len, &acked, &err), 0);
        cr_expect(err && strstr(err->msg, "does not fit"), "%s", err ? err->msg : "");
        umw_error_free(err);
}

/* spec_load refuses what the wall cannot hold, as bad config (exit 3). */
static int load_walled(const char *value, const char *namespaces, const char *caps,
                       struct umw_error **err)
{
        char text[1024];
        snprintf(text, sizeof(text),
                 "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
                 "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\",\"user\":{\"uid\":0,\"gid\":0},"
                 "\"capabilities\":{%s}},\"annotations\":{\"run.umwelt.net\":\"%s\"},"
                 "\"linux\":{\"namespaces\":[%s]}}",
                 caps, value, namespaces);
        struct spec *spec = NULL;
        int r = spec_load(text, "config.json", &spec, err);
        spec_free(spec);
        return r;
}

static void expect_refused(int r, struct umw_error *err, const char *needle)
{
        cr_assert_lt(r, 0);
        cr_expect_eq(err->kind, UMW_EXIT_CONFIG);
        cr_expect(strstr(err->msg, needle) != NULL, "'%s' not in: %s", needle, err->msg);
        umw_error_free(err);
}

static const char both_ns[] = "{\"type\":\"mount\"},{\"type\":\"network\"}";

Test(netwall, default_drop_loads)
{
        struct umw_error *err = NULL;
        cr_expect_eq(load_walled("default-drop", both_ns, "\"bounding\":[\"CAP_NET_RAW\"]", &err),
                     0, "%s", err ? err->msg : "");
        umw_error_free(err);
}

Test(netwall, unknown_value_is_refused)
{
        struct umw_error *err = NULL;
        int r = load_walled("open", both_ns, "", &err);
        expect_refused(
            r, err,
            "config.json: .annotations[\"run.umwelt.net\"]: expected \"default-drop\", got "
            "\"open\"");
}

Test(netwall, net_admin_in_any_set_is_refused)
{
        static const char *const sets[] = {"bounding", "effective", "inheritable", "permitted",
                                           "ambient"};
        for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
                char caps[64];
                struct umw_error *err = NULL;
                snprintf(caps, sizeof(caps), "\"%s\":[\"CAP_NET_ADMIN\"]", sets[i]);
                int r = load_walled("default-drop", both_ns, caps, &err);
                expect_refused(r, err,
                               "config.json: .process.capabilities: CAP_NET_ADMIN is refused");
        }
}

Test(netwall, no_network_namespace_is_refused)
{
        struct umw_error *err = NULL;
        int r = load_walled("default-drop", "{\"type\":\"mount\"}", "", &err);
        expect_refused(r, err, "default-drop needs a network namespace");
}
