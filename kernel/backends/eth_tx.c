// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: eth rails, transmit. The rail ops (a posted TX frame queues on its
 * peer, a posted RX buffer waits for eth_rx.c), the peer's TX tasklet that
 * turns queued frames into skbs, several into one where the peer takes
 * bundles (dev_queue_xmit), the frames on the wire (a frame completes when
 * the netdev frees the skbs that carry it: sent by the NIC, or dropped; so
 * the TX depth is the rail's credit budget up to the wire, a qdisc's or
 * NIC's queue included, and the drain rate striping measures is the
 * NIC's), the peers' lifetime (an skb on the wire holds its peer) and the
 * hellos of the handshake (eth.c). The lowest of the backend's files
 * (eth_frag.c aside): the module parameters live here.
 */
#include <linux/etherdevice.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/pkt_sched.h>
#include <linux/refcount.h>
#include <linux/skbuff.h>
#include <linux/wait.h>
#include <net/busy_poll.h>
#include <net/netlink.h>

#include "tbrdma.h"
#include "link/rail.h"
#include "backends/eth.h"
#include "uapi/tbrdma-netlink.h"

#define TBE_TX_BUDGET	16	/* frames per TX tasklet run */

/* The backend's module parameters and workqueue (made by eth.c's init). */
unsigned int tbe_hello_ms = 1000;
module_param_named(eth_hello_ms, tbe_hello_ms, uint, 0644);
MODULE_PARM_DESC(eth_hello_ms, "eth rails: hello period in ms (50..10000); a rail goes down after 3.5 periods without a hello");
unsigned int tbe_tx_depth = 128;
module_param_named(eth_tx_depth, tbe_tx_depth, uint, 0444);
MODULE_PARM_DESC(eth_tx_depth, "eth rails: TX descriptors (credits) per rail (8..4096)");
bool tbe_join_backends;
module_param_named(eth_join_backends, tbe_join_backends, bool, 0644);
MODULE_PARM_DESC(eth_join_backends, "eth rails: a GUID heard on Ethernet may join a link that has rails of another backend (Thunderbolt, emu); default: refused");
unsigned int tbe_peer_expire_s = 60;
module_param_named(eth_peer_expire_s, tbe_peer_expire_s, uint, 0644);
MODULE_PARM_DESC(eth_peer_expire_s, "eth rails: a peer dead (rail down) this many seconds is forgotten, rail and all (1..86400; at once when the peer table is full)");
bool tbe_fragment = true;
module_param_named(eth_fragment, tbe_fragment, bool, 0644);
MODULE_PARM_DESC(eth_fragment, "eth rails: send frames above the MTU in fragments to peers that reassemble, reassemble theirs (default on); off: an MTU shrink fails the connections made before it");
bool tbe_bundle = true;
module_param_named(eth_bundle, tbe_bundle, bool, 0644);
MODULE_PARM_DESC(eth_bundle, "eth rails: send frames queued together in one packet (up to 8, within both MTUs) to peers that take bundles (default on; receiving them is always on)");
unsigned int tbe_rx_depth = 128;
module_param_named(eth_rx_depth, tbe_rx_depth, uint, 0444);
MODULE_PARM_DESC(eth_rx_depth, "eth rails: RX buffers per rail (8..4096)");
struct workqueue_struct *tbe_wq;

/* ---- peers' lifetime and the frames on the wire ------------------------- */

/* Peers not yet freed, for the backend's exit: an skb on the wire holds one. */
static atomic_t tbe_peers_live = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(tbe_peers_gone);

void tbe_peer_init(struct tbe_peer *peer)
{
	spin_lock_init(&peer->lock);
	INIT_LIST_HEAD(&peer->txq);
	INIT_LIST_HEAD(&peer->rxq);
	INIT_LIST_HEAD(&peer->wireq);
	tasklet_setup(&peer->tx_tasklet, tbe_tx_tasklet);
	INIT_DELAYED_WORK(&peer->tx_retry, tbe_tx_retry);
	refcount_set(&peer->ref, 1);
	atomic_inc(&tbe_peers_live);
}

void tbe_peer_put(struct tbe_peer *peer)
{
	if (!refcount_dec_and_test(&peer->ref))
		return;
	kfree(peer->reasm.buf);
	kfree(peer);
	if (atomic_dec_and_test(&tbe_peers_live))
		wake_up(&tbe_peers_gone);
}

/*
 * Every binding is gone, so every owner let go: wait for the skbs a qdisc or
 * NIC still holds (a netdev frees them when it sends, drops or closes), then
 * for their destructors to return (each runs in an RCU read-side section).
 * Process context.
 */
void tbe_peers_wait(void)
{
	while (!wait_event_timeout(tbe_peers_gone, !atomic_read(&tbe_peers_live), 10 * HZ))
		pr_warn("tbrdma: eth: %d peers wait for frames a network device still holds\n",
			atomic_read(&tbe_peers_live));
	synchronize_rcu();
}

/*
 * The destructor of an skb that carries rail frames (tbe_skb_wire()): the
 * netdev is done with it. The TX tasklet completes the frames (their
 * callbacks want BH context); a stopped peer's were completed by
 * tbe_peer_stop(). Context: softirq or process, never hard IRQ (the net
 * core defers those frees); no lock of ours held.
 */
static void tbe_skb_freed(struct sk_buff *skb)
{
	struct tbe_peer *peer = skb_shinfo(skb)->destructor_arg;
	unsigned long flags;

	rcu_read_lock();
	atomic_inc(&peer->wire_freed);
	spin_lock_irqsave(&peer->lock, flags);
	if (peer->running)	/* under the lock: tbe_peer_stop() kills it once !running */
		tasklet_schedule(&peer->tx_tasklet);
	spin_unlock_irqrestore(&peer->lock, flags);
	tbe_peer_put(peer);
	rcu_read_unlock();
}

/*
 * @skb carries frames of @peer: when the netdev frees it, it counts off the
 * wire. Its shared info's destructor_arg is free for that: the net core
 * reads it only for zerocopy skbs (SKBFL_ZEROCOPY_ENABLE), which ours are
 * not. TX tasklet.
 */
static void tbe_skb_wire(struct tbe_peer *peer, struct sk_buff *skb)
{
	refcount_inc(&peer->ref);
	skb_shinfo(skb)->destructor_arg = peer;
	skb->destructor = tbe_skb_freed;
	peer->wire_sent++;
}

/* @f went out in the skbs handed over so far (or none: dropped). TX tasklet. */
static void tbe_wire_add(struct tbe_peer *peer, struct tbr_frame *f)
{
	f->bk_time = peer->wire_sent;
	list_add_tail(&f->list, &peer->wireq);
}

/*
 * Complete, in order, the frames whose skbs are all freed (TX tasklet), or
 * with @all every frame still on the wire: a peer being stopped (not
 * canceled: the netdev has them and may yet send them; their skbs keep the
 * peer until freed; the TX tasklet is killed, BH disabled).
 */
static void tbe_wire_complete(struct tbe_peer *peer, bool all)
{
	u32 freed = atomic_read(&peer->wire_freed);
	struct tbr_frame *f, *next;

	list_for_each_entry_safe(f, next, &peer->wireq, list) {
		if (!all && (s32)((u32)f->bk_time - freed) > 0)
			break;
		list_del(&f->list);
		f->flags = 0;
		f->callback(peer->rail, f, false);
	}
}

void tbe_wire_flush(struct tbe_peer *peer)
{
	tbe_wire_complete(peer, true);
}

/*
 * @f's fragments (f->size > @frame) to @mac as frame number @id, in one run:
 * the first refused ends it (the rest is dropped; the receiver drops the
 * partial frame). The last dev_queue_xmit() result, NET_XMIT_DROP without
 * memory. TX tasklet.
 */
static int tbe_tx_frag(struct tbe_peer *peer, struct tbr_frame *f, const u8 *mac,
		       u32 frame, u16 id)
{
	int rc = NET_XMIT_SUCCESS;
	struct sk_buff_head q;
	struct sk_buff *skb;
	u32 sent = 0;

	if (tbe_frag_skbs(peer, f, mac, frame, id, &q))
		return NET_XMIT_DROP;
	while ((skb = __skb_dequeue(&q))) {
		tbe_skb_wire(peer, skb);
		rc = dev_queue_xmit(skb);
		if (rc != NET_XMIT_SUCCESS && rc != NET_XMIT_CN)
			break;
		sent++;
	}
	__skb_queue_purge(&q);
	tbr_rail_count(peer->rail, TBR_CNT_FRAG_TX, sent);
	return rc;
}

/* ---- transmit --------------------------------------------------------- */

/*
 * peer->lock held, @f just taken off the queue and not fragmented: move to
 * @more the queued frames that follow it in its packet (a bundle,
 * docs/eth.md): at most TBE_BUNDLE_MAX, none fragmented, all records within
 * @room bytes. Returns how many.
 */
static unsigned int tbe_tx_bundle(struct tbe_peer *peer, const struct tbr_frame *f,
				  u32 room, struct list_head *more)
{
	u32 used = TBR_ETH_HDR_LEN + f->size;
	struct tbr_frame *g, *next;
	unsigned int n = 0;

	list_for_each_entry_safe(g, next, &peer->txq, list) {
		if (n == TBE_BUNDLE_MAX || g->size > peer->frame ||
		    used + TBR_ETH_HDR_LEN + g->size > room)
			break;
		used += TBR_ETH_HDR_LEN + g->size;
		list_move_tail(&g->list, more);
		peer->txn--;
		n++;
	}
	return n;
}

/* The bundle size toward @peer: what both ends take; 0: one frame per packet. */
static u32 tbe_tx_room(const struct tbe_peer *peer, const struct net_device *dev)
{
	u32 room = min(READ_ONCE(peer->bundle_max), tbe_dev_bundle_max(dev));

	if (!READ_ONCE(tbe_bundle))
		return 0;
	return dev->features & NETIF_F_SG ? room : min_t(u32, room, TBE_BUNDLE_LINEAR_MAX);
}

/* Up to TBE_TX_BUDGET queued frames into skbs, onto the wire. TX tasklet. */
static void tbe_tx_send(struct tbe_peer *peer)
{
	struct tbe_bind *bind = peer->bind;
	struct tbr_rail *rail = peer->rail;
	struct tbr_frame *f, *g, *next;
	unsigned int budget, n = 0, sent;
	struct sk_buff *skb;
	unsigned long flags;
	u8 mac[ETH_ALEN];
	LIST_HEAD(more);
	u32 frame;
	u16 id = 0;
	int rc;

	for (budget = TBE_TX_BUDGET; budget; budget -= min(budget, 1 + n)) {
		spin_lock_irqsave(&peer->lock, flags);
		if (!peer->running || list_empty(&peer->txq)) {
			spin_unlock_irqrestore(&peer->lock, flags);
			return;
		}
		/*
		 * The driver's ring is full: leave the frames queued (their
		 * descriptors stay busy, so the transport runs out of
		 * credits) and look again shortly.
		 */
		if (netif_xmit_frozen_or_stopped(netdev_get_tx_queue(bind->dev, 0))) {
			queue_delayed_work(tbe_wq, &peer->tx_retry, 1);
			spin_unlock_irqrestore(&peer->lock, flags);
			return;
		}
		f = list_first_entry(&peer->txq, struct tbr_frame, list);
		list_del(&f->list);
		peer->txn--;
		frame = peer->frame;
		n = 0;
		if (f->size > frame)	/* tbe_tx took it: the peer reassembles */
			id = peer->frag_id++;
		else if (!list_empty(&peer->txq))
			n = tbe_tx_bundle(peer, f, tbe_tx_room(peer, bind->dev), &more);
		ether_addr_copy(mac, peer->mac);
		spin_unlock_irqrestore(&peer->lock, flags);

		/*
		 * Closed (unplugged, or set down) before the notifier's work
		 * took the rail down: drop, the transport resends elsewhere.
		 */
		sent = 0;
		if (unlikely(!netif_running(bind->dev))) {
			rc = NET_XMIT_DROP;
		} else if (f->size > frame) {
			rc = tbe_tx_frag(peer, f, mac, frame, id);
		} else {
			skb = n ? tbe_bundle_skb(bind, mac, peer->guid, f, &more, &sent) :
				  tbe_frame_skb(bind, mac, peer->guid, f);
			rc = NET_XMIT_DROP;
			if (skb) {
				tbe_skb_wire(peer, skb);
				rc = dev_queue_xmit(skb);
			}
		}
		if (rc != NET_XMIT_SUCCESS && rc != NET_XMIT_CN) {
			tbr_rail_count(rail, TBR_CNT_DROPS, 1 + n);
		} else {
			if (n > sent)	/* no memory for the rest of the bundle */
				tbr_rail_count(rail, TBR_CNT_DROPS, n - sent);
			if (sent)
				tbr_rail_count(rail, TBR_CNT_BUNDLED, sent);
		}
		tbe_wire_add(peer, f);
		list_for_each_entry_safe(g, next, &more, list) {
			list_del(&g->list);
			tbe_wire_add(peer, g);
		}
		if (rc != NET_XMIT_SUCCESS) {
			/* congested (qdisc or receiver backlog full): back off */
			queue_delayed_work(tbe_wq, &peer->tx_retry, 1);
			return;
		}
	}
	/* budget spent: let other softirq work in, then go on */
	tasklet_schedule(&peer->tx_tasklet);
}

/*
 * The peer's TX tasklet, its only sender (fragments stay in order): completes
 * the frames the netdev is done with, turns up to TBE_TX_BUDGET queued
 * frames into skbs, then runs again. Frames queued together go out in one
 * skb to a peer that takes bundles. A tasklet, not a work item, because the
 * latency path goes through it: tbe_tx() schedules it with the transport's
 * locks held (IRQs off), and it runs as soon as the poster's context
 * enables BH again. The user doorbell (tbr_post_send) and the RX and timer
 * paths are all in or around BH, so a frame reaches dev_queue_xmit() (and,
 * over a veth, the peer's receive softirq) without a context switch; from
 * plain process context it runs in ksoftirqd. Context: softirq; takes no
 * tbrdma lock around the driver.
 */
void tbe_tx_tasklet(struct tasklet_struct *t)
{
	struct tbe_peer *peer = from_tasklet(peer, t, tx_tasklet);

	tbe_wire_complete(peer, false);
	tbe_tx_send(peer);
	tbe_wire_complete(peer, false);
}

/* After a back-off: the tasklet again (it checks peer->running itself). */
void tbe_tx_retry(struct work_struct *work)
{
	struct tbe_peer *peer = container_of(to_delayed_work(work),
					     struct tbe_peer, tx_retry);

	tasklet_schedule(&peer->tx_tasklet);
}

/*
 * A hello to @mac (@dst 0: broadcast). With a fabric key it carries the
 * auth part: our current nonce, the peer's @peer_nonce it answers and the
 * MAC (docs/eth.md "Authenticated links"). tbr_ctl_mutex held (the work).
 */
void tbe_send_hello(struct tbe_bind *bind, const u8 *mac, u64 dst, u32 peer_session,
		    u64 peer_nonce, u8 flags)
{
	u8 hello[TBR_ETH_HELLO_AUTH_LEN];
	u32 len = TBR_ETH_HELLO_LEN;
	struct sk_buff *skb;
	struct tbr_auth a;
	unsigned long irq;
	u64 nonce;

	if (!netif_running(bind->dev))	/* closed: nobody to greet */
		return;
	if (READ_ONCE(tbe_fragment))
		flags |= TBR_ETH_REASSEMBLES;
	flags |= TBR_ETH_ACK_RIDE;	/* the transport takes TBR_F_ACK frames */
	flags |= TBR_ETH_NET_FRAG;	/* tbrN takes TBR_PDF_NETX */
	tbr_eth_hello_build(hello, bind->session, peer_session, bind->max_frame,
			    tbe_period(), tbe_dev_bundle_max(bind->dev), flags);
	if (tbr_link_auth_keyed(bind->tdev)) {
		spin_lock_irqsave(&bind->lock, irq);
		nonce = bind->nonce[0];
		spin_unlock_irqrestore(&bind->lock, irq);
		tbr_eth_hello_auth_build(hello, nonce, dst ? peer_nonce : 0,
					 TBR_ETH_AUTH_MAC);
		tbr_link_auth_get(bind->tdev, &a);
		if (!tbr_eth_hello_sign(&a, bind->dev->dev_addr, bind->guid, dst,
					hello))
			len = TBR_ETH_HELLO_AUTH_LEN;
	}
	skb = tbe_skb(bind, mac, TBR_ETH_HELLO, dst, 0, NULL, 0, hello,
		      len, GFP_KERNEL);
	if (!skb)
		return;
	skb->priority = TC_PRIO_CONTROL;	/* ahead of bulk frames */
	local_bh_disable();
	dev_queue_xmit(skb);
	local_bh_enable();
	atomic64_inc(&bind->hello_tx);
}

/* ---- rail ops ---------------------------------------------------------- */

static int tbe_tx(struct tbr_rail *rail, struct tbr_frame *f)
{
	struct tbe_peer *peer = rail->priv;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&peer->lock, flags);
	if (!peer->running)
		err = -ESHUTDOWN;
	else if (!f->size || f->size > peer->tx_max)
		err = -EMSGSIZE;
	else if (peer->txn >= rail->tx_depth)
		err = -ENOBUFS;
	if (!err) {
		list_add_tail(&f->list, &peer->txq);
		peer->txn++;
		/* under the lock: tbe_peer_stop() kills it once !running */
		tasklet_schedule(&peer->tx_tasklet);
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return err;
}

static int tbe_rx(struct tbr_rail *rail, struct tbr_frame *f)
{
	struct tbe_peer *peer = rail->priv;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&peer->lock, flags);
	if (!peer->running) {
		err = -ESHUTDOWN;
	} else if (peer->rxn >= rail->rx_depth) {
		err = -ENOBUFS;
	} else {
		list_add_tail(&f->list, &peer->rxq);
		peer->rxn++;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return err;
}

/* tbr_ctl_mutex held: the binding and its netdev are alive. */
int tbe_fill_info(struct tbr_rail *rail, struct sk_buff *msg)
{
	struct tbe_peer *peer = rail->priv;
	struct tbe_bind *bind = peer->bind;
	u8 mac[ETH_ALEN];
	unsigned long flags;

	spin_lock_irqsave(&peer->lock, flags);
	ether_addr_copy(mac, peer->mac);
	spin_unlock_irqrestore(&peer->lock, flags);
	if (nla_put_string(msg, TBRDMA_ATTR_ETH_IFNAME, bind->dev->name) ||
	    nla_put_u32(msg, TBRDMA_ATTR_ETH_IFINDEX, bind->dev->ifindex) ||
	    nla_put(msg, TBRDMA_ATTR_ETH_PEER_MAC, ETH_ALEN, mac))
		return -EMSGSIZE;
	return 0;
}

#ifdef CONFIG_NET_RX_BUSY_POLL
/*
 * The poll mode (xport/xport_poll.c): the NAPI the peer's frames came in on
 * last (eth_rx.c notes it), if its NIC has one (veth has none).
 */
static u32 tbe_poll_cookie(struct tbr_rail *rail)
{
	struct tbe_peer *peer = rail->priv;
	unsigned int id = READ_ONCE(peer->napi_id);

	return id >= MIN_NAPI_ID ? id : 0;
}
#endif

const struct tbr_rail_ops tbe_rail_ops = {
	.tx = tbe_tx,
	.rx = tbe_rx,
#ifdef CONFIG_NET_RX_BUSY_POLL
	.poll_cookie = tbe_poll_cookie,
#endif
};
