/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: a rail frame rewritten as the packet a RoCE v2 HCA would have put
 * on an Ethernet wire, for the capture monitor (obs/capture.c). The layout
 * and every field's origin are in docs/capture.md.
 */
#ifndef TBRDMA_OBS_ROCE_H
#define TBRDMA_OBS_ROCE_H

#include <linux/if_ether.h>
#include <linux/types.h>

/* the ethertype of frames that are not transport or IP frames */
#define TBR_CAP_ETH_P_RAW	0x88b6
#define TBR_CAP_UDP_DPORT	4791
/* UDP source port: this base | TBR_CAP_SPORT_RETRANS? | rail */
#define TBR_CAP_SPORT_BASE	0xc000
#define TBR_CAP_SPORT_RETRANS	0x0100
/* most bytes the rewrite adds to a frame (headers, pad, ICRC) */
#define TBR_CAP_OVERHEAD	128

/* The two hosts of a frame: its sender and its receiver. */
struct tbr_cap_ends {
	u8 src_mac[ETH_ALEN], dst_mac[ETH_ALEN];
};

/*
 * Write into @out (@len + TBR_CAP_OVERHEAD bytes) the Ethernet frame that
 * shows the rail frame @buf of @len bytes with code @pdf, sent by @e->src on
 * rail @rail: DATA as RoCE v2, NET (tbrN's Ethernet frames) unchanged,
 * anything else (and a DATA frame that does not parse) as ethertype
 * TBR_CAP_ETH_P_RAW. Returns the length written. Context "any"; pure.
 */
u32 tbr_cap_rewrite(u8 *out, const struct tbr_cap_ends *e, u32 rail, bool tx,
		    u8 pdf, const u8 *buf, u32 len);

#endif /* TBRDMA_OBS_ROCE_H */
