/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: the eth rail backend's bindings and peers, shared by its files:
 * eth.c (bindings, netdev events, genl commands, module glue), eth_peer.c
 * (each peer's rail: handshake state, start, stop, expiry), eth_tx.c (the
 * rail ops, transmit, hellos, module parameters), eth_rx.c (the packet
 * handler, reassembly) and eth_frag.c (the skb of every frame,
 * fragmentation). Calls go down that list, never up.
 * Locks and the handshake: see eth.c. Names: tbe_ (the net core owns eth_).
 */
#ifndef TBRDMA_ETH_H
#define TBRDMA_ETH_H

#include <linux/if_ether.h>
#include <linux/interrupt.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "core/tbr_eth_wire.h"
#include "link/rail.h"

#define TBE_FRAME_MIN	256	/* smallest usable negotiated frame */
#define TBE_MAX_PEERS	8	/* per binding */

struct tbe_bind;

struct tbe_peer {
	struct list_head node;		/* bind->peers (RCU) */
	struct list_head gc;		/* expiry, tbr_ctl_mutex */
	struct tbe_bind *bind;
	u64 guid;
	/* hello state, bind->lock */
	u32 session;			/* 0: not heard yet */
	u32 peer_frame;
	u32 period_ms;
	unsigned long heard_at;		/* any frame from it (also lockless) */
	unsigned int napi_id;		/* NAPI its last frame came in on (lockless) */
	unsigned long hears_at;		/* last "I hear you" from it */
	bool heard;			/* as of the last state pass */
	bool hears_us;
	bool reassembles;		/* its hellos say TBR_ETH_REASSEMBLES */
	bool ack_ride;			/* its hellos say TBR_ETH_ACK_RIDE */
	bool net_frag;			/* its hellos say TBR_ETH_NET_FRAG */
	u32 bundle_max;			/* its hellos' (lockless: late, a drop) */
	bool restart;			/* session or MAC changed: cycle */
	/* authenticated links (fabric key), bind->lock */
	u64 nonce;			/* its hellos' (0: none heard) */
	bool proven;			/* its last unicast hello proved the key */
	/* tbr_ctl_mutex */
	struct tbr_rail *rail;
	/* rings, lock; mac also bind->lock (pinned, see tbe_rx_hello) */
	spinlock_t lock;
	bool running;
	u32 frame;			/* negotiated frame size (MTU) while running */
	u32 tx_max;			/* largest frame tbe_tx takes: > frame: fragmented */
	u32 feat;			/* TBR_PEER_* of its rail while running */
	u16 frag_id;			/* next fragmented frame's id */
	struct tbr_eth_reasm reasm;	/* the peer's fragments; buf from peer start */
	u8 mac[ETH_ALEN];
	struct list_head txq, rxq;
	unsigned int txn, rxn;
	struct tasklet_struct tx_tasklet;	/* the only sender: fragments stay in order */
	struct delayed_work tx_retry;	/* schedules tx_tasklet after a back-off */
	/*
	 * Frames on the wire (TX tasklet; tbe_peer_stop() once it is killed):
	 * handed to the netdev in skbs whose destructor counts them freed
	 * (eth_tx.c). A frame completes once as many of those skbs are freed
	 * as had been handed over up to its own last one (bk_time), so its
	 * descriptor stays busy while a qdisc or the NIC holds its bytes.
	 */
	struct list_head wireq;
	u32 wire_sent;			/* skbs handed over (TX tasklet) */
	atomic_t wire_freed;		/* of those, freed by the netdev */
	refcount_t ref;			/* the owner's, and one per skb on the wire */
};

struct tbe_bind {
	struct list_head node;		/* tbe_binds: tbr_ctl_mutex + tbe_lock */
	struct tbr_dev *tdev;
	const struct tbr_backend *backend;	/* its rails' (eth.c's) */
	u64 guid;			/* tdev's */
	struct net_device *dev;
	netdevice_tracker tracker;
	struct packet_type pt;
	u32 session;
	u32 max_frame;			/* from our MTU, tbr_ctl_mutex */
	bool gone;			/* netdev unregistering (tbe_lock) */
	spinlock_t lock;		/* peers' hello state, npeers, full */
	struct list_head peers;
	unsigned int npeers;
	bool full;			/* a new GUID found no free entry */
	struct delayed_work work;
	atomic64_t hello_tx, hello_rx;
	atomic64_t rx_foreign;		/* frames dropped: not from the peer's MAC */
	atomic64_t auth_refused;	/* unicast hellos without proof of the key */
	/* our hello nonces: [0] current, [1] the one before (bind->lock) */
	u64 nonce[2];
	unsigned long nonce_at;		/* jiffies [0] was drawn */
	u32 speed_mbps;			/* the netdev's (ethtool), 0 unknown; RTNL */
};

/* eth_tx.c: module parameters, the backend's workqueue */
extern unsigned int tbe_hello_ms, tbe_tx_depth, tbe_rx_depth, tbe_peer_expire_s;
extern bool tbe_join_backends, tbe_fragment, tbe_bundle;
extern struct workqueue_struct *tbe_wq;

static inline unsigned int tbe_period(void)
{
	return clamp(READ_ONCE(tbe_hello_ms), 50U, 10000U);
}

/* Dead after 3.5 periods of the peer's own hello period. */
static inline unsigned long tbe_dead_after(u32 period_ms)
{
	return msecs_to_jiffies(period_ms * 7 / 2) + 1;
}

static inline u32 tbe_dev_max_frame(const struct net_device *dev)
{
	int mtu = READ_ONCE(dev->mtu) - TBR_ETH_HDR_LEN;

	return mtu < 0 ? 0 : min_t(u32, mtu, TBR_FRAME_SIZE_MAX);
}

/* eth_peer.c: tbr_ctl_mutex held */
void tbe_bind_work(struct work_struct *work);
void tbe_peer_stop(struct tbe_peer *peer);

/* eth_tx.c */
extern const struct tbr_rail_ops tbe_rail_ops;
/* RAIL_GET: the netdev and the peer's MAC (struct tbr_backend_ctl.fill_rail) */
int tbe_fill_info(struct tbr_rail *rail, struct sk_buff *msg);
void tbe_tx_tasklet(struct tasklet_struct *t);
void tbe_tx_retry(struct work_struct *work);
/* a new peer's queues and its first reference (the RX handler, bind->lock held) */
void tbe_peer_init(struct tbe_peer *peer);
/* the owner's reference (the peer stopped and off every list), or an skb's */
void tbe_peer_put(struct tbe_peer *peer);
/* the backend's exit: every peer freed (their skbs off the wire) */
void tbe_peers_wait(void);
/* a stopped peer's frames on the wire, completed (tbe_peer_stop(), tasklet killed) */
void tbe_wire_flush(struct tbe_peer *peer);
void tbe_send_hello(struct tbe_bind *bind, const u8 *mac, u64 dst, u32 peer_session,
		    u64 peer_nonce, u8 flags);

/* eth_rx.c: the packet handler */
int tbe_rcv(struct sk_buff *skb, struct net_device *dev, struct packet_type *pt,
	    struct net_device *orig_dev);
#ifdef CONFIG_NET_RX_BUSY_POLL
#define TBE_POLL_BUDGET	8	/* NAPI budget per busy-poll pass */
void tbe_busy_poll(u32 cookie, bool (*end)(void *arg), void *arg);
#endif

/* the largest bundle we take: the MTU, as the hello's u16 carries it */
static inline u32 tbe_dev_bundle_max(const struct net_device *dev)
{
	return min_t(u32, READ_ONCE(dev->mtu), U16_MAX);
}

/* eth_frag.c */
struct sk_buff *tbe_skb(struct tbe_bind *bind, const u8 *dst_mac, u8 type, u64 dst,
			u8 pdf, const void *sub, u32 sublen, const void *data, u32 len,
			gfp_t gfp);
/* frames from this size on go out in their own page, not copied */
#define TBE_TX_PAGE_MIN	1024
struct sk_buff *tbe_frame_skb(struct tbe_bind *bind, const u8 *dst_mac, u64 dst,
			      struct tbr_frame *f);
/* frames a bundle carries behind its first: 2 fragments each at most */
#define TBE_BUNDLE_MAX	7
static_assert(1 + 2 * TBE_BUNDLE_MAX <= MAX_SKB_FRAGS);
/* a bundle copied into one head (no NETIF_F_SG): its head stays within 32 KiB */
#define TBE_BUNDLE_LINEAR_MAX	(28 * 1024)
struct sk_buff *tbe_bundle_skb(struct tbe_bind *bind, const u8 *dst_mac, u64 dst,
			       struct tbr_frame *f, struct list_head *more,
			       unsigned int *sent);
int tbe_frag_skbs(struct tbe_peer *peer, struct tbr_frame *f, const u8 *mac, u32 frame,
		  u16 id, struct sk_buff_head *q);

#endif /* TBRDMA_ETH_H */
