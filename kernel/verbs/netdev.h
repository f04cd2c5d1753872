/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: tbrN's private state, shared by verbs/netdev.c (the netdev, legacy
 * frames, ethtool) and verbs/netx.c (IP packets up to 64 KiB as fragment
 * frames striped over a link's rails, docs/protocol.md "IP over the
 * rails").
 */
#ifndef TBRDMA_VERBS_NETDEV_H
#define TBRDMA_VERBS_NETDEV_H

#include <linux/netdevice.h>
#include <linux/xarray.h>

#include "tbrdma.h"

#include "core/tbr_netx.h"
#include "core/tbr_netx_wire.h"

/* a fragment frame: never a tb split frame (a 4096-byte ring frame) */
#define TBR_NETX_FRAME		4096
#define TBR_NETX_MTU_MAX	65535

/*
 * Per rail link with a peer that takes fragments: made at the link's
 * first rail up (process), reset at its last down, freed (RCU) when it
 * goes. The receive window (core/tbr_netx.c: reassembly, order, the rule
 * that gives packets up) is under @lock; tx_seq under tbrN's TX lock.
 */
struct tbr_netx_link {
	struct rcu_head rcu;
	struct net_device *ndev;
	struct tbr_link *link;		/* its rails, sampled by @timer (it outlives us) */
	u64 peer_guid;
	spinlock_t lock;
	struct timer_list timer;	/* gives incomplete packets up */
	bool dead;
	u32 tx_seq;			/* our next packet (never reset) */
	struct tbr_netx_win win;
};

struct tbr_netdev_priv {
	struct tbr_dev *tdev;		/* set once the ib_device exists */
	/*
	 * frames to hand up, in the order their links' windows released
	 * them, through one NAPI (GRO): per-CPU queues would reorder them
	 */
	struct napi_struct napi;
	struct sk_buff_head rxq;
	struct xarray netx;		/* link id -> struct tbr_netx_link */
	/* the packet whose fragments wait for TX descriptors (TX lock) */
	struct sk_buff *pend;
	struct tbr_link *pend_link;	/* a reference */
	struct tbr_netx_hdr pend_hdr;
	u32 pend_frag;
	u32 mbps;			/* the port's rate (ethtool) */
	atomic64_t cnt[TBR_NETX_CNT_MAX];
};

static inline struct tbr_netdev_priv *tbr_netdev_priv(struct net_device *ndev)
{
	return netdev_priv(ndev);
}

/* netx.c */
bool tbr_netx_takes(struct tbr_netdev_priv *priv, struct tbr_link *link);
void tbr_netx_xmit(struct net_device *ndev, struct tbr_link *link,
		   struct sk_buff *skb);
void tbr_netx_rx(struct net_device *ndev, struct tbr_link *link, u32 rail, u64 src,
		 const void *data, u32 len);
void tbr_netx_tx_ready(struct net_device *ndev, struct tbr_link *link);
void tbr_netx_link_event(struct net_device *ndev, struct tbr_link *link,
			 enum tbr_obs_event ev);
void tbr_netx_rail_event(struct net_device *ndev, struct tbr_link *link, u32 rail,
			 bool up);
void tbr_netx_init(struct net_device *ndev);
void tbr_netx_fini(struct net_device *ndev);
int tbr_netx_open(struct net_device *ndev);
int tbr_netx_stop(struct net_device *ndev);
/* hand up @skb, a frame eth_type_trans() took, after those queued before. "bh" */
void tbr_netx_rx_one(struct net_device *ndev, struct sk_buff *skb);
/* whether an Ethernet frame from host @src may enter tbrN (netx.c) */
bool tbr_netx_src_ok(const u8 *data, u32 len, u64 src);

#endif /* TBRDMA_VERBS_NETDEV_H */
