/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbr_netx.h - the receive side of tbrN's fragment frames (docs/protocol.md
 * 10): parsing a fragment's header, reassembling packets in a window and
 * handing them up strictly in number order, and the rule that gives up a
 * packet whose fragments will not come. OS independent, so the host unit
 * tests (test_netx) and a fuzzer (tests/fuzz/fuzz_netx.c) run the very
 * code verbs/netx.c runs; the packets themselves (skbs) stay the caller's,
 * reached through struct tbr_netx_ops.
 *
 * The give-up rule (RACK-like: it follows what the rails delivered, not a
 * fixed time). A sender hands out its packets strictly in number order,
 * every fragment of packet S before any of S + 1, and each rail delivers
 * what it carries in the order it was sent. So once a rail has delivered a
 * fragment of a packet newer than S, every fragment of S that went on that
 * rail has arrived or is lost. The oldest incomplete packet S (or a number
 * never seen) is given up as soon as every up rail of the link either
 *   - delivered a fragment of a packet newer than S (since it came up), or
 *   - delivered no frame at all (of any kind: RDMA's count too) for
 *     TBR_NETX_SILENT_MS: nothing of S can be queued on it, or frames ahead
 *     of it would be arriving.
 * A rail that delivers frames but no newer fragment (a fragment queued
 * behind a full ring of RDMA frames on a rate-capped lane: hundreds of ms)
 * is waited for, up to TBR_NETX_HOLD_MS after the first packet seen past
 * the hole: the last resort (a rail whose frames arrive but whose
 * fragments never do, or rails that reorder: loss injection). A rail that
 * goes down is left out at once, and what was seen before it went is given
 * up TBR_NETX_CUT_MS later at most. The rule assumes what real rails do
 * (order per rail, latency under TBR_NETX_SILENT_MS); injected reordering
 * or delay only makes it give up a packet early, which TCP resends, and
 * the fragments that come after are counted late.
 */
#ifndef TBR_NETX_H
#define TBR_NETX_H

#include "tbr_os.h"

#define TBR_NETX_HDR_SIZE	24	/* struct tbr_netx_hdr, tbr_netx_wire.h */
#define TBR_NETX_VER		1
#define TBR_NETX_FRAGS_MAX	64
#define TBR_NETX_ETH_HLEN	14
/* the largest Ethernet frame: a 64 KiB GSO super packet and its headers */
#define TBR_NETX_PKT_MAX	(65536 + TBR_NETX_ETH_HLEN + 64)
/* packets waiting for an earlier one (a reorder window per link) */
#define TBR_NETX_WIN		1024
#define TBR_NETX_RAILS		16	/* TBR_LINK_MAX_RAILS */
/* the rule's last resort, see above */
#define TBR_NETX_HOLD_MS	1000
/* a rail that delivered nothing this long holds nothing */
#define TBR_NETX_SILENT_MS	30
/* a rail went down: the packets seen so far are given up this much later */
#define TBR_NETX_CUT_MS		20

/* One fragment's header, host order (tbr_netx_parse). */
struct tbr_netx_frag {
	u32 seq;		/* the packet's number on the link */
	u32 len;		/* the whole packet (an Ethernet frame) */
	u32 off;		/* this fragment's bytes: at off .. off + n */
	u32 n;
	u16 frag_size;
	u16 csum_start;
	u16 csum_offset;
	u16 gso_size;
	u8 flags;
	u8 frag;
	u8 nfrags;
	u8 gso_type;
};

/*
 * A fragment frame of @len bytes at @buf: 0 and @f filled, or -EINVAL
 * (wrong version, sizes that do not describe a packet of at most
 * TBR_NETX_PKT_MAX bytes in at most TBR_NETX_FRAGS_MAX fragments, or a
 * payload that does not fit its place). Reserved bytes are not looked at.
 */
int tbr_netx_parse(const void *buf, u32 len, struct tbr_netx_frag *f);

/* counters (ethtool -S, verbs/netdev.c names them in this order) */
enum tbr_netx_cnt {
	TBR_NETX_TX_PACKETS,	/* packets sent as fragments */
	TBR_NETX_TX_FRAGS,
	TBR_NETX_TX_STALLS,	/* a fragment waited for TX descriptors */
	TBR_NETX_TX_LEGACY,	/* packets sent as one NET frame */
	TBR_NETX_RX_PACKETS,	/* packets reassembled and handed up */
	TBR_NETX_RX_FRAGS,
	TBR_NETX_RX_GSO,	/* of them, super packets */
	TBR_NETX_RX_REORDERED,	/* completed behind an incomplete earlier one */
	TBR_NETX_RX_GIVEN_UP,	/* incomplete and given up (any reason): dropped */
	TBR_NETX_RX_MISSING,	/* numbers never seen (lost whole), given up */
	TBR_NETX_RX_LATE,	/* fragments of packets handed or given up */
	TBR_NETX_RX_BAD,	/* malformed fragments */
	TBR_NETX_RX_RESYNC,	/* the peer's numbering restarted */
	/* why the oldest waiting packet (given up or missing) went */
	TBR_NETX_RX_GIVEUP_RAILS,	/* the rails moved past it */
	TBR_NETX_RX_GIVEUP_HOLD,	/* TBR_NETX_HOLD_MS */
	TBR_NETX_RX_GIVEUP_CUT,		/* a rail went down */
	TBR_NETX_RX_GIVEUP_WINDOW,	/* pushed out of the window */
	TBR_NETX_RX_HOLD_MS,	/* ms the packets behind those waited, summed */
	TBR_NETX_CNT_MAX
};

/* What the reassembly asks of its caller, which owns the packets. */
struct tbr_netx_ops {
	/* a packet of @len bytes to fill; NULL: none (the packet is given up) */
	void *(*alloc)(void *ctx, u32 len);
	/* @n bytes of @src into @pkt at @off (within its length) */
	void (*copy)(void *ctx, void *pkt, u32 off, const u8 *src, u32 n);
	/* @pkt is whole: apply @f's offloads; nonzero: it is bad (dropped) */
	int (*finish)(void *ctx, void *pkt, const struct tbr_netx_frag *f);
	/* @pkt goes up, after those handed up before */
	void (*deliver)(void *ctx, void *pkt);
	void (*drop)(void *ctx, void *pkt);
	void (*count)(void *ctx, enum tbr_netx_cnt c, u32 n);
};

struct tbr_netx_slot {
	void *pkt;		/* NULL with nfrags set: no memory, or bad */
	u64 have;		/* fragments received, a bit each */
	u64 stamp;		/* ms, its first fragment */
	u32 seq;
	u32 len;
	u16 frag_size;
	u8 nfrags;		/* 0: free */
	u8 got;
};

/* One link's receive window. Callers serialise every call on it. */
struct tbr_netx_win {
	bool synced;		/* next is the peer's */
	bool flushing;		/* a rail went down: give up before flush_hi */
	u32 flush_hi;
	u64 flush_at;		/* ms */
	u32 next;		/* the next packet to hand up */
	u32 hi;			/* one past the newest seen */
	/* the rails as the give-up rule sees them, a bit per rail index */
	u32 rail_up;
	u32 rail_seen;		/* carried a fragment since up: rail_newest valid */
	u32 rail_silent;	/* no frame in TBR_NETX_SILENT_MS, at the last sample */
	u64 sample_at;		/* ms, the last sample (older than
				 * TBR_NETX_SILENT_MS: rail_silent is not used)
				 */
	u32 rail_newest[TBR_NETX_RAILS];	/* newest packet a fragment of which it carried */
	u64 rail_frames[TBR_NETX_RAILS];	/* its frame count at rail_since */
	u64 rail_since[TBR_NETX_RAILS];		/* ms, when that count was first seen */
	struct tbr_netx_slot slot[TBR_NETX_WIN];
};

/* An empty window, no rail known. */
void tbr_netx_win_init(struct tbr_netx_win *w);
/* Every packet dropped, the numbering forgotten (the peer may be new); rails kept. */
void tbr_netx_win_reset(struct tbr_netx_win *w, const struct tbr_netx_ops *ops, void *ctx);

/*
 * Fragment @f (parsed), its payload @data (f->n bytes), arrived on rail
 * @rail at @now (ms): placed, and whatever is complete, or given up by the
 * rule, handed up (ops->deliver) in order.
 */
void tbr_netx_win_rx(struct tbr_netx_win *w, const struct tbr_netx_frag *f, const u8 *data,
		 u32 rail, u64 now, const struct tbr_netx_ops *ops, void *ctx);

/*
 * The rails as the caller sees them at @now: @up, a bit per rail index, and
 * @frames[r], rail r's count of frames received (any kind). Rails that
 * stopped counting for TBR_NETX_SILENT_MS become silent.
 */
void tbr_netx_win_sample(struct tbr_netx_win *w, u32 up, const u64 *frames, u64 now);
/* Rail @rail came up (not seen yet) or went down at @now. */
void tbr_netx_win_rail_up(struct tbr_netx_win *w, u32 rail);
void tbr_netx_win_rail_down(struct tbr_netx_win *w, u32 rail, u64 now);

/*
 * Give up what the rule allows at @now and hand up what follows. Returns
 * when to look again (ms; after a tbr_netx_win_sample), or 0: nothing
 * waits.
 */
u64 tbr_netx_win_tick(struct tbr_netx_win *w, u64 now, const struct tbr_netx_ops *ops, void *ctx);

/* When to look again at @now (as tbr_netx_win_tick returns), without giving up. */
u64 tbr_netx_win_when(const struct tbr_netx_win *w, u64 now);

/* Whether the rails have moved past packet @seq at @now (the rule above, rails only). */
bool tbr_netx_win_past(const struct tbr_netx_win *w, u32 seq, u64 now);

#endif /* TBR_NETX_H */
