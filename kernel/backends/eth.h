/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: the eth rail backend's bindings and peers, shared by eth.c (the
 * handshake, rings and bindings) and eth_frag.c (fragmentation of frames
 * larger than the MTU and their reassembly). Locks: see eth.c.
 */
#ifndef TBRDMA_ETH_H
#define TBRDMA_ETH_H

#include <linux/if_ether.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "core/tbr_eth_wire.h"

struct eth_bind;
struct tbr_frame;
struct tbr_rail;

struct eth_peer {
	struct list_head node;		/* bind->peers (RCU) */
	struct list_head gc;		/* expiry, tbr_ctl_mutex */
	struct eth_bind *bind;
	u64 guid;
	/* hello state, bind->lock */
	u32 session;			/* 0: not heard yet */
	u32 peer_frame;
	u32 period_ms;
	unsigned long heard_at;		/* any frame from it (also lockless) */
	unsigned long hears_at;		/* last "I hear you" from it */
	bool heard;			/* as of the last state pass */
	bool hears_us;
	bool reassembles;		/* its hellos say TBR_ETH_REASSEMBLES */
	bool restart;			/* session or MAC changed: cycle */
	/* tbr_ctl_mutex */
	struct tbr_rail *rail;
	/* rings, lock; mac also bind->lock (pinned, see eth_rx_hello) */
	spinlock_t lock;
	bool running;
	u32 frame;			/* negotiated frame size (MTU) while running */
	u32 tx_max;			/* largest frame eth_tx takes: > frame: fragmented */
	u16 frag_id;			/* next fragmented frame's id */
	struct tbr_eth_reasm reasm;	/* the peer's fragments; buf from peer start */
	u8 mac[ETH_ALEN];
	struct list_head txq, rxq;
	unsigned int txn, rxn;
	struct work_struct tx_work;	/* the only sender: fragments stay in order */
	struct delayed_work tx_retry;	/* queues tx_work after a back-off */
};

struct eth_bind {
	struct list_head node;		/* eth_binds: tbr_ctl_mutex + eth_lock */
	struct tbr_dev *tdev;
	u64 guid;			/* tdev's */
	struct net_device *dev;
	netdevice_tracker tracker;
	struct packet_type pt;
	u32 session;
	u32 max_frame;			/* from our MTU, tbr_ctl_mutex */
	bool gone;			/* netdev unregistering (eth_lock) */
	spinlock_t lock;		/* peers' hello state, npeers, full */
	struct list_head peers;
	unsigned int npeers;
	bool full;			/* a new GUID found no free entry */
	struct delayed_work work;
	atomic64_t hello_tx, hello_rx;
	atomic64_t rx_foreign;		/* frames dropped: not from the peer's MAC */
};

/* eth.c */
extern bool eth_fragment;
struct sk_buff *eth_skb(struct eth_bind *bind, const u8 *dst_mac, u8 type, u64 dst,
			u8 pdf, const void *sub, u32 sublen, const void *data, u32 len,
			gfp_t gfp);
struct eth_peer *eth_rx_peer_lock(struct eth_bind *bind, struct sk_buff *skb, u64 src,
				  unsigned long *flags);
struct tbr_frame *eth_rx_buf_locked(struct eth_peer *peer);

/* eth_frag.c */
int eth_frag_xmit(struct eth_peer *peer, struct tbr_frame *f, const u8 *mac, u32 frame,
		  u16 id);
void eth_rx_frag(struct eth_bind *bind, struct sk_buff *skb, const struct tbr_eth_hdr *h);

#endif /* TBRDMA_ETH_H */
