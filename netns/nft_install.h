/* The default-drop ruleset (nft_build.h) put into a network namespace over
 * netlink with libmnl: no nft binary, no iptables. */
#ifndef UMW_NFT_INSTALL_H
#define UMW_NFT_INSTALL_H

struct umw_error;

/* In the network namespace the calling process is in (it needs
 * CAP_NET_ADMIN over it): sends the ruleset as one batch, checks every ack,
 * reads the table, its chains and rules back and compares them with what was
 * sent. A table inet umwelt that is there already (a namespace shared with
 * another container) is left as it is and accepted only when it is exactly
 * this ruleset. Every failure is one line starting "nftables: "; a ruleset
 * this call made that does not read back right is deleted again. */
int nft_ruleset_install(struct umw_error **err);

#endif
