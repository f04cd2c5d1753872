// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the capture monitor (docs/capture.md). An admin asks for it over
 * genl (CAPTURE_NEW): a netdev tbrmonN (ARPHRD_ETHER, no ARP, no queue, in
 * the namespace of the device's tbrN) that carries nothing of its own.
 * While it is up it is the device's link tap (link.h): every frame a rail of
 * the device sends (as it is posted) or receives (before it is handed up)
 * is rewritten as RoCE v2 (obs/roce.c) into an skb and queued; a work item
 * hands the queue, in order, to dev_queue_xmit() on the monitor, whose
 * packet taps (tcpdump, tshark, tbctl capture) see it; its xmit drops it,
 * as nlmon's does.
 *
 * Order: TX frames are queued under their link's lock as they are posted,
 * RX frames by their rail's receive completion, which a backend runs for one
 * rail at a time; the queue is FIFO and one work item empties it: so each
 * rail's frames reach the taps in that rail's order, each once.
 *
 * Locks: tbr_ctl_mutex for tdev->capdev (new, del, device removal); RTNL
 * for the tap (ndo_open/ndo_stop); the queue's own spinlock (any context).
 * At most TBR_CAP_QLEN frames wait: beyond that a frame is dropped and
 * counted in the monitor's rx_dropped.
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>

#include "tbrdma.h"
#include "link/rail.h"
#include "obs/capture.h"
#include "obs/roce.h"

#define TBR_CAP_QLEN	4096

struct tbr_cap {
	struct tbr_link_tap tap;
	struct tbr_dev *tdev;
	struct net_device *ndev;
	u32 snaplen;			/* 0: whole frames; READ_ONCE */
	struct sk_buff_head q;
	struct work_struct work;
	atomic_long_t dropped;		/* queue full, or no memory */
	atomic64_t shown, shown_bytes;	/* frames the taps saw */
};

/* The frame in an skb, rewritten; NULL without memory. Context "any". */
static struct sk_buff *tbr_cap_skb(struct tbr_cap *cap, struct tbr_rail *rail,
				   bool tx, u8 pdf, const void *buf, u32 len)
{
	struct tbr_cap_ends e;
	struct sk_buff *skb;
	u64 guid = rail->link->peer_guid;
	u8 peer[ETH_ALEN];
	u32 n, snaplen;

	/* the peer's tbrN MAC: the EUI-48 of its GUID (docs/architecture.md) */
	peer[0] = (guid >> 56) ^ 0x02;
	peer[1] = guid >> 48;
	peer[2] = guid >> 40;
	peer[3] = guid >> 16;
	peer[4] = guid >> 8;
	peer[5] = guid;
	if (tx) {
		ether_addr_copy(e.src_mac, cap->tdev->netdev->dev_addr);
		ether_addr_copy(e.dst_mac, peer);
	} else {
		ether_addr_copy(e.src_mac, peer);
		ether_addr_copy(e.dst_mac, cap->tdev->netdev->dev_addr);
	}
	skb = alloc_skb(len + TBR_CAP_OVERHEAD, GFP_ATOMIC);
	if (!skb)
		return NULL;
	n = tbr_cap_rewrite(skb->data, &e, rail->id, tx, pdf, buf, len);
	snaplen = READ_ONCE(cap->snaplen);
	if (snaplen && n > snaplen)
		n = snaplen;
	skb_put(skb, n);
	skb->dev = cap->ndev;
	skb->protocol = eth_hdr(skb)->h_proto;
	return skb;
}

/* Queue @skb (NULL: none) behind every frame before it. Context "any". */
static void tbr_cap_queue(struct tbr_cap *cap, struct sk_buff *skb)
{
	if (!skb || skb_queue_len(&cap->q) >= TBR_CAP_QLEN) {
		kfree_skb(skb);
		atomic_long_inc(&cap->dropped);
		return;
	}
	skb_queue_tail(&cap->q, skb);
	queue_work(system_highpri_wq, &cap->work);
}

static void *tbr_cap_tap_tx(struct tbr_link_tap *tap, struct tbr_rail *rail,
			    u8 pdf, const void *buf, u32 len)
{
	struct tbr_cap *cap = container_of(tap, struct tbr_cap, tap);
	struct sk_buff *skb = tbr_cap_skb(cap, rail, true, pdf, buf, len);

	if (!skb)
		atomic_long_inc(&cap->dropped);
	return skb;
}

/* link->lock held: frames of one rail are queued in the order they went */
static void tbr_cap_tap_tx_done(struct tbr_link_tap *tap, void *cookie, bool sent)
{
	struct tbr_cap *cap = container_of(tap, struct tbr_cap, tap);

	if (sent)
		tbr_cap_queue(cap, cookie);
	else
		kfree_skb(cookie);
}

static void tbr_cap_tap_rx(struct tbr_link_tap *tap, struct tbr_rail *rail,
			   u8 pdf, const void *buf, u32 len)
{
	struct tbr_cap *cap = container_of(tap, struct tbr_cap, tap);

	tbr_cap_queue(cap, tbr_cap_skb(cap, rail, false, pdf, buf, len));
}

/* Process context: the queue to the monitor's packet taps, in order. */
static void tbr_cap_work(struct work_struct *work)
{
	struct tbr_cap *cap = container_of(work, struct tbr_cap, work);
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&cap->q))) {
		dev_queue_xmit(skb);
		cond_resched();
	}
}

static int tbr_cap_open(struct net_device *ndev)
{
	struct tbr_cap *cap = netdev_priv(ndev);

	tbr_link_tap_set(cap->tdev, &cap->tap);
	return 0;
}

static int tbr_cap_stop(struct net_device *ndev)
{
	struct tbr_cap *cap = netdev_priv(ndev);

	tbr_link_tap_set(cap->tdev, NULL);	/* no frame comes after this */
	flush_work(&cap->work);
	skb_queue_purge(&cap->q);
	return 0;
}

/* the taps have seen it: nothing goes anywhere */
static netdev_tx_t tbr_cap_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct tbr_cap *cap = netdev_priv(ndev);

	atomic64_inc(&cap->shown);
	atomic64_add(skb->len, &cap->shown_bytes);
	dev_kfree_skb(skb);
	return NETDEV_TX_OK;
}

static void tbr_cap_get_stats64(struct net_device *ndev,
				struct rtnl_link_stats64 *s)
{
	struct tbr_cap *cap = netdev_priv(ndev);

	s->tx_packets = atomic64_read(&cap->shown);
	s->tx_bytes = atomic64_read(&cap->shown_bytes);
	s->rx_dropped = atomic_long_read(&cap->dropped);
}

static const struct net_device_ops tbr_cap_ops = {
	.ndo_open	= tbr_cap_open,
	.ndo_stop	= tbr_cap_stop,
	.ndo_start_xmit	= tbr_cap_xmit,
	.ndo_get_stats64 = tbr_cap_get_stats64,
};

static void tbr_cap_setup(struct net_device *ndev)
{
	ether_setup(ndev);
	ndev->netdev_ops = &tbr_cap_ops;
	ndev->flags = IFF_NOARP;
	ndev->priv_flags |= IFF_NO_QUEUE;
	ndev->min_mtu = ETH_MIN_MTU;
	ndev->max_mtu = ETH_MAX_MTU;
	ndev->mtu = TBR_FRAME_SIZE_MAX + TBR_CAP_OVERHEAD;
	eth_hw_addr_random(ndev);
}

struct net_device *tbr_cap_new(struct tbr_dev *tdev, u32 snaplen)
{
	const char *ibname = dev_name(&tdev->ibdev.dev);
	char name[IFNAMSIZ] = "tbrmon%d";
	struct net_device *ndev;
	struct tbr_cap *cap;
	int err;

	lockdep_assert_held(&tbr_ctl_mutex);
	if (tdev->capdev) {
		cap = netdev_priv(tdev->capdev);
		WRITE_ONCE(cap->snaplen, snaplen);
		return tdev->capdev;
	}
	if (!strncmp(ibname, "tbrdma", 6) && strlen(ibname) < IFNAMSIZ - 1)
		snprintf(name, sizeof(name), "tbrmon%s", ibname + 6);
	ndev = alloc_netdev(sizeof(*cap), name, NET_NAME_ENUM, tbr_cap_setup);
	if (!ndev)
		return ERR_PTR(-ENOMEM);
	cap = netdev_priv(ndev);
	cap->tdev = tdev;
	cap->ndev = ndev;
	cap->snaplen = snaplen;
	cap->tap.tx = tbr_cap_tap_tx;
	cap->tap.tx_done = tbr_cap_tap_tx_done;
	cap->tap.rx = tbr_cap_tap_rx;
	skb_queue_head_init(&cap->q);
	INIT_WORK(&cap->work, tbr_cap_work);
	dev_net_set(ndev, dev_net(tdev->netdev));
	err = register_netdev(ndev);
	if (err) {
		free_netdev(ndev);
		return ERR_PTR(err);
	}
	tdev->capdev = ndev;
	return ndev;
}

int tbr_cap_del(struct tbr_dev *tdev)
{
	struct net_device *ndev = tdev->capdev;

	lockdep_assert_held(&tbr_ctl_mutex);
	if (!ndev)
		return -ENOENT;
	tdev->capdev = NULL;
	unregister_netdev(ndev);	/* stops it: the tap is gone */
	free_netdev(ndev);
	return 0;
}

static void tbr_cap_dev_event(struct tbr_dev *tdev, enum tbr_obs_event ev)
{
	if (ev == TBR_OBS_DEL)
		tbr_cap_del(tdev);
}

struct tbr_link_observer tbr_cap_observer = {
	.dev_event = tbr_cap_dev_event,
};
