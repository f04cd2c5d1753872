// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the eth rail backend. Rails over any Ethernet netdev (virtio NICs
 * between two VMs, veth pairs, thunderbolt-net, a direct cable): every rail
 * frame is one Ethernet frame with tbrdma's own ethertype (TBRDMA_ETH_P,
 * 0x88B5, IEEE 802 "local experimental ethertype 1"). The wire format and
 * the handshake are in docs/eth.md.
 *
 * A *binding* ties one netdev to one tbrdma device (ETH_BIND). On it, each
 * side broadcasts a HELLO every eth_hello_ms (and at once on any change)
 * carrying its device GUID, a random session number, the largest frame its
 * MTU lets it receive, and its period; to every peer it hears it also sends
 * a unicast HELLO saying "I hear you (session S)". A *peer* is a GUID heard
 * on the binding's netdev; its rail (in the link of that GUID, so every
 * netdev reaching the same peer adds a rail to the same link) goes up when
 * both directions work: we hear the peer and the peer says it hears us. It
 * goes down when the peer is not heard for 3.5 periods (its own period), when
 * the peer stops hearing us, when the peer's session changes (it restarted),
 * when the negotiated frame size changes, or when the netdev goes down,
 * loses carrier or unregisters (hot-unplug): the rings stop, every posted
 * frame completes canceled, tbr_rail_down() — the path emu's cut takes, so
 * the transport resends what the lost rail had in flight on the others.
 *
 * Frame size: min(4096, MTU - 24) on each side, the smaller of the two is
 * used both ways (tbr_rail_set_max_frame(); tbr_link_max_frame() gives the
 * transport the link's minimum, so new connections size their frames to
 * it). A peer whose hellos say it reassembles (and eth_fragment) gets the
 * frames above that size in pieces (eth_frag.c), so the rail keeps taking
 * frames up to 4096 bytes: an MTU shrink then only changes the negotiated
 * size, live, and the connections made before it keep their frame size.
 * Without fragmentation a size change cycles the rail (as a restart).
 *
 * Rings: TX frames queue on the rail and a work item turns them into skbs
 * (dev_queue_xmit); a frame completes when its skb is handed to the driver.
 * The TX depth is the rail's credit budget. RX: the packet_type handler
 * (softirq) copies the frame into the first posted RX buffer and runs its
 * callback; no buffer posted: dropped and counted (rx_nobuf).
 *
 * Contexts and locks: tbr_ctl_mutex (process) covers binding and rail
 * state changes; the netdevice notifier runs under RTNL and therefore never
 * takes it (the control plane takes RTNL inside tbr_ctl_mutex): it marks
 * the binding and queues work. The binding's work (hellos, peer state) only
 * trylocks tbr_ctl_mutex and retries, so unbind may cancel it synchronously
 * while holding the mutex. bind->lock (irqsave) protects the peers' hello
 * state; peer->lock (irqsave, nests inside link->lock) protects the rings.
 * Peers are added under RCU (the RX handler looks them up) and freed under
 * tbr_ctl_mutex: dead ones after a grace period (eth_bind_expire), the rest
 * with their binding, after the packet handler is removed.
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/pkt_sched.h>
#include <linux/random.h>
#include <linux/rculist.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/netlink.h>

#include "tbrdma.h"
#include "link/rail.h"
#include "core/tbr_eth_wire.h"
#include "backends/eth.h"
#include "uapi/tbrdma-netlink.h"

#define ETH_TBR_FRAME_MIN	256	/* smallest usable negotiated frame */
#define ETH_TBR_MAX_PEERS	8	/* per binding */
#define ETH_TBR_TX_BUDGET	16	/* frames per TX work run */

static unsigned int eth_hello_ms = 1000;
module_param(eth_hello_ms, uint, 0644);
MODULE_PARM_DESC(eth_hello_ms, "eth rails: hello period in ms (50..10000); a rail goes down after 3.5 periods without a hello");
static unsigned int eth_tx_depth = 128;
module_param(eth_tx_depth, uint, 0444);
MODULE_PARM_DESC(eth_tx_depth, "eth rails: TX descriptors (credits) per rail (8..4096)");
static bool eth_join_backends;
module_param(eth_join_backends, bool, 0644);
MODULE_PARM_DESC(eth_join_backends, "eth rails: a GUID heard on Ethernet may join a link that has rails of another backend (Thunderbolt, emu); default: refused");
static unsigned int eth_peer_expire_s = 60;
module_param(eth_peer_expire_s, uint, 0644);
MODULE_PARM_DESC(eth_peer_expire_s, "eth rails: a peer dead (rail down) this many seconds is forgotten, rail and all (1..86400; at once when the peer table is full)");
bool eth_fragment = true;
module_param(eth_fragment, bool, 0644);
MODULE_PARM_DESC(eth_fragment, "eth rails: send frames above the MTU in fragments to peers that reassemble, reassemble theirs (default on); off: an MTU shrink fails the connections made before it");
static unsigned int eth_rx_depth = 128;
module_param(eth_rx_depth, uint, 0444);
MODULE_PARM_DESC(eth_rx_depth, "eth rails: RX buffers per rail (8..4096)");

static LIST_HEAD(eth_binds);
static DEFINE_SPINLOCK(eth_lock);	/* eth_binds for the notifier */
static struct workqueue_struct *eth_wq;
static void eth_gc(struct work_struct *work);
static DECLARE_WORK(eth_gc_work, eth_gc);

static unsigned int eth_period(void)
{
	return clamp(READ_ONCE(eth_hello_ms), 50U, 10000U);
}

/* Dead after 3.5 periods of the peer's own hello period. */
static unsigned long eth_dead_after(u32 period_ms)
{
	return msecs_to_jiffies(period_ms * 7 / 2) + 1;
}

static u32 eth_dev_max_frame(const struct net_device *dev)
{
	int mtu = READ_ONCE(dev->mtu) - TBR_ETH_HDR_LEN;

	return mtu < 0 ? 0 : min_t(u32, mtu, TBR_FRAME_SIZE_MAX);
}

/* ---- transmit --------------------------------------------------------- */

static void eth_tx_work(struct work_struct *work)
{
	struct eth_peer *peer = container_of(work, struct eth_peer, tx_work);
	struct eth_bind *bind = peer->bind;
	struct tbr_rail *rail = peer->rail;
	unsigned int budget;
	struct tbr_frame *f;
	struct sk_buff *skb;
	unsigned long flags;
	u8 mac[ETH_ALEN];
	u32 frame;
	u16 id = 0;
	int rc;

	for (budget = ETH_TBR_TX_BUDGET; budget; budget--) {
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
			queue_delayed_work(eth_wq, &peer->tx_retry, 1);
			spin_unlock_irqrestore(&peer->lock, flags);
			return;
		}
		f = list_first_entry(&peer->txq, struct tbr_frame, list);
		list_del(&f->list);
		peer->txn--;
		frame = peer->frame;
		if (f->size > frame)	/* eth_tx took it: the peer reassembles */
			id = peer->frag_id++;
		ether_addr_copy(mac, peer->mac);
		spin_unlock_irqrestore(&peer->lock, flags);

		if (f->size > frame) {
			rc = eth_frag_xmit(peer, f, mac, frame, id);
		} else {
			skb = eth_skb(bind, mac, TBR_ETH_FRAME, peer->guid,
				      (f->sof << 4) | (f->eof & 0xf), NULL, 0,
				      f->buf, f->size, GFP_KERNEL);
			local_bh_disable();
			rc = skb ? dev_queue_xmit(skb) : NET_XMIT_DROP;
			local_bh_enable();
		}
		if (rc != NET_XMIT_SUCCESS && rc != NET_XMIT_CN)
			tbr_rail_count(rail, TBR_CNT_DROPS, 1);
		f->flags = 0;
		local_bh_disable();
		f->callback(rail, f, false);
		local_bh_enable();
		if (rc != NET_XMIT_SUCCESS) {
			/* congested (qdisc or receiver backlog full): back off */
			queue_delayed_work(eth_wq, &peer->tx_retry, 1);
			return;
		}
	}
	queue_work(eth_wq, &peer->tx_work);
}

/* Through tx_work, which never runs twice at once: fragments stay in order. */
static void eth_tx_retry(struct work_struct *work)
{
	struct eth_peer *peer = container_of(to_delayed_work(work),
					     struct eth_peer, tx_retry);

	queue_work(eth_wq, &peer->tx_work);
}

static void eth_send_hello(struct eth_bind *bind, const u8 *mac, u64 dst,
			   u32 peer_session, u8 flags)
{
	u8 hello[TBR_ETH_HELLO_LEN];
	struct sk_buff *skb;

	if (READ_ONCE(eth_fragment))
		flags |= TBR_ETH_REASSEMBLES;
	tbr_eth_hello_build(hello, bind->session, peer_session, bind->max_frame,
			    eth_period(), flags);
	skb = eth_skb(bind, mac, TBR_ETH_HELLO, dst, 0, NULL, 0, hello,
		      sizeof(hello), GFP_KERNEL);
	if (!skb)
		return;
	skb->priority = TC_PRIO_CONTROL;	/* ahead of bulk frames */
	local_bh_disable();
	dev_queue_xmit(skb);
	local_bh_enable();
	atomic64_inc(&bind->hello_tx);
}

/* ---- rail ops ---------------------------------------------------------- */

static int eth_tx(struct tbr_rail *rail, struct tbr_frame *f)
{
	struct eth_peer *peer = rail->priv;
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
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	if (!err)
		queue_work(eth_wq, &peer->tx_work);
	return err;
}

static int eth_rx(struct tbr_rail *rail, struct tbr_frame *f)
{
	struct eth_peer *peer = rail->priv;
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
static int eth_fill_info(struct tbr_rail *rail, struct sk_buff *msg)
{
	struct eth_peer *peer = rail->priv;
	struct eth_bind *bind = peer->bind;
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

static const struct tbr_rail_ops eth_rail_ops = {
	.kind = "eth",
	.tx = eth_tx,
	.rx = eth_rx,
	.fill_info = eth_fill_info,
};

/* ---- receive ------------------------------------------------------------ */

static struct eth_peer *eth_peer_find(struct eth_bind *bind, u64 guid)
{
	struct eth_peer *peer;

	list_for_each_entry_rcu(peer, &bind->peers, node)
		if (peer->guid == guid)
			return peer;
	return NULL;
}

static void eth_rx_hello(struct eth_bind *bind, struct sk_buff *skb,
			 const struct tbr_eth_hdr *h)
{
	const u8 *smac = eth_hdr(skb)->h_source;
	u8 buf[TBR_ETH_HELLO_LEN];
	struct tbr_eth_hello hello;
	struct eth_peer *peer;
	bool changed = false;
	unsigned long flags;
	u32 session, frame;
	const u8 *p;
	u64 src = h->src;
	bool reasm;

	p = skb_header_pointer(skb, TBR_ETH_HDR_LEN, sizeof(buf), buf);
	if (!p || tbr_eth_hello_parse(h, p, sizeof(buf), bind->guid,
				      bind->session, &hello))
		return;
	session = hello.session;
	frame = hello.max_frame;
	reasm = hello.flags & TBR_ETH_REASSEMBLES;
	if (!is_valid_ether_addr(smac)) {
		atomic64_inc(&bind->rx_foreign);
		return;
	}

	spin_lock_irqsave(&bind->lock, flags);
	peer = eth_peer_find(bind, src);
	if (peer && !ether_addr_equal(peer->mac, smac)) {
		/*
		 * The MAC is pinned while the peer lives: another station
		 * claiming its GUID is dropped. Once it is dead (its rail is
		 * down) a new MAC may take the GUID: a replaced NIC, a veth
		 * recreated. The rail restarts then.
		 */
		if (time_before(jiffies, READ_ONCE(peer->heard_at) +
					 eth_dead_after(peer->period_ms))) {
			spin_unlock_irqrestore(&bind->lock, flags);
			atomic64_inc(&bind->rx_foreign);
			return;
		}
		spin_lock(&peer->lock);
		ether_addr_copy(peer->mac, smac);
		spin_unlock(&peer->lock);
		peer->restart = true;
		peer->hears_us = false;
		changed = true;
	}
	if (!peer) {
		if (READ_ONCE(bind->gone)) {
			spin_unlock_irqrestore(&bind->lock, flags);
			return;
		}
		if (bind->npeers >= ETH_TBR_MAX_PEERS) {
			/* the work expires a dead peer; the next hello gets in */
			bind->full = true;
			spin_unlock_irqrestore(&bind->lock, flags);
			mod_delayed_work(eth_wq, &bind->work, 0);
			return;
		}
		peer = kzalloc(sizeof(*peer), GFP_ATOMIC);
		if (peer)
			peer->reasm.buf = kmalloc(TBR_ETH_FRAME_MAX, GFP_ATOMIC);
		if (!peer || !peer->reasm.buf) {
			spin_unlock_irqrestore(&bind->lock, flags);
			kfree(peer);
			return;
		}
		peer->bind = bind;
		peer->guid = src;
		ether_addr_copy(peer->mac, smac);
		spin_lock_init(&peer->lock);
		INIT_LIST_HEAD(&peer->txq);
		INIT_LIST_HEAD(&peer->rxq);
		INIT_WORK(&peer->tx_work, eth_tx_work);
		INIT_DELAYED_WORK(&peer->tx_retry, eth_tx_retry);
		list_add_tail_rcu(&peer->node, &bind->peers);
		bind->npeers++;
		changed = true;
	}
	if (peer->session != session) {
		if (peer->session)
			peer->restart = true;
		peer->session = session;
		peer->hears_us = false;
		changed = true;
	}
	/* a new frame size or capability: the state pass resizes or cycles */
	if (peer->peer_frame != frame || peer->reassembles != reasm) {
		peer->peer_frame = frame;
		peer->reassembles = reasm;
		changed = true;
	}
	peer->period_ms = hello.period_ms;
	WRITE_ONCE(peer->heard_at, jiffies);
	if (!peer->heard)
		changed = true;
	if (hello.unicast) {
		if (hello.hears_us)
			peer->hears_at = jiffies;
		if (hello.hears_us != peer->hears_us)
			changed = true;
		peer->hears_us = hello.hears_us;
	}
	spin_unlock_irqrestore(&bind->lock, flags);
	atomic64_inc(&bind->hello_rx);

	if (changed)
		mod_delayed_work(eth_wq, &bind->work, 0);
}

/*
 * RX (RCU read side): the peer of GUID @src with its lock taken (irqsave,
 * *@flags) if @skb comes from its pinned MAC; NULL otherwise.
 */
struct eth_peer *eth_rx_peer_lock(struct eth_bind *bind, struct sk_buff *skb, u64 src,
				  unsigned long *flags)
{
	struct eth_peer *peer = eth_peer_find(bind, src);

	if (!peer)
		return NULL;
	spin_lock_irqsave(&peer->lock, *flags);
	if (!ether_addr_equal(peer->mac, eth_hdr(skb)->h_source)) {
		spin_unlock_irqrestore(&peer->lock, *flags);
		atomic64_inc(&bind->rx_foreign);
		return NULL;
	}
	/*
	 * A data frame proves the peer hears us too: it sends only on rails
	 * it has up. Hellos lost to congestion then do not flap the rail.
	 */
	WRITE_ONCE(peer->heard_at, jiffies);
	if (READ_ONCE(peer->hears_us))
		WRITE_ONCE(peer->hears_at, jiffies);
	return peer;
}

/* peer->lock held: the first posted RX buffer, NULL if none (or stopped). */
struct tbr_frame *eth_rx_buf_locked(struct eth_peer *peer)
{
	struct tbr_frame *f;

	if (!peer->running)
		return NULL;
	f = list_first_entry_or_null(&peer->rxq, struct tbr_frame, list);
	if (f) {
		list_del(&f->list);
		peer->rxn--;
	}
	return f;
}

static void eth_rx_frame(struct eth_bind *bind, struct sk_buff *skb,
			 const struct tbr_eth_hdr *h)
{
	struct eth_peer *peer;
	struct tbr_rail *rail;
	struct tbr_frame *f;
	unsigned long flags;
	u32 len = h->len;

	if (tbr_eth_frame_check(h, bind->guid))
		return;
	peer = eth_rx_peer_lock(bind, skb, h->src, &flags);
	if (!peer)
		return;
	rail = peer->rail;
	f = eth_rx_buf_locked(peer);
	spin_unlock_irqrestore(&peer->lock, flags);
	if (!f) {
		if (rail)
			tbr_rail_count(rail, TBR_CNT_RX_NOBUF, 1);
		return;
	}
	if (skb_copy_bits(skb, TBR_ETH_HDR_LEN, f->buf, len)) {
		f->flags = TBR_FRAME_CRC_ERROR;
		f->size = 0;
	} else {
		f->flags = 0;
		f->size = len;
	}
	f->sof = h->pdf >> 4;
	f->eof = h->pdf & 0xf;
	f->callback(rail, f, false);
}

/* Softirq (or BH disabled): a frame with our ethertype on a bound netdev. */
static int eth_rcv(struct sk_buff *skb, struct net_device *dev,
		   struct packet_type *pt, struct net_device *orig_dev)
{
	struct eth_bind *bind = container_of(pt, struct eth_bind, pt);
	struct tbr_eth_hdr h;

	if (skb->pkt_type == PACKET_OTHERHOST || skb->pkt_type == PACKET_LOOPBACK)
		goto out;
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		return NET_RX_DROP;
	if (!pskb_may_pull(skb, TBR_ETH_HDR_LEN) ||
	    tbr_eth_hdr_parse(skb->data, skb->len, &h))
		goto out;
	rcu_read_lock();
	if (h.type == TBR_ETH_HELLO)
		eth_rx_hello(bind, skb, &h);
	else if (h.type == TBR_ETH_FRAME)
		eth_rx_frame(bind, skb, &h);
	else if (h.type == TBR_ETH_FRAG)
		eth_rx_frag(bind, skb, &h);
	rcu_read_unlock();
	consume_skb(skb);
	return NET_RX_SUCCESS;
out:
	kfree_skb(skb);
	return NET_RX_DROP;
}

/* ---- peer state (process, tbr_ctl_mutex) ----------------------------------- */

/* Stop the rings, complete everything posted as canceled, rail down. */
static void eth_peer_stop(struct eth_peer *peer)
{
	struct tbr_frame *f, *tmp;
	unsigned long flags;
	LIST_HEAD(tx);
	LIST_HEAD(rx);

	spin_lock_irqsave(&peer->lock, flags);
	peer->running = false;
	tbr_eth_reasm_reset(&peer->reasm);
	spin_unlock_irqrestore(&peer->lock, flags);
	/* nothing re-queues them once running is false (checked under lock) */
	cancel_work_sync(&peer->tx_work);
	cancel_delayed_work_sync(&peer->tx_retry);
	cancel_work_sync(&peer->tx_work);
	spin_lock_irqsave(&peer->lock, flags);
	list_splice_init(&peer->txq, &tx);
	list_splice_init(&peer->rxq, &rx);
	peer->txn = 0;
	peer->rxn = 0;
	spin_unlock_irqrestore(&peer->lock, flags);

	local_bh_disable();
	list_for_each_entry_safe(f, tmp, &tx, list) {
		list_del(&f->list);
		f->flags = TBR_FRAME_CANCELED;
		f->callback(peer->rail, f, true);
	}
	list_for_each_entry_safe(f, tmp, &rx, list) {
		list_del(&f->list);
		f->flags = TBR_FRAME_CANCELED;
		f->callback(peer->rail, f, true);
	}
	local_bh_enable();
	tbr_rail_down(peer->rail);
}

/* Frame sizes: @frame negotiated, @tx_max taken from the link (> @frame: fragmented). */
static void eth_peer_set_frames(struct eth_peer *peer, u32 frame, u32 tx_max)
{
	unsigned long flags;

	tbr_rail_set_max_frame(peer->rail, frame, tx_max);
	spin_lock_irqsave(&peer->lock, flags);
	peer->frame = frame;
	peer->tx_max = tx_max;
	spin_unlock_irqrestore(&peer->lock, flags);
}

static void eth_peer_start(struct eth_peer *peer, u32 frame, u32 tx_max)
{
	struct eth_bind *bind = peer->bind;
	unsigned long flags;

	eth_peer_set_frames(peer, frame, tx_max);
	if (tx_max == frame && frame < TBR_FRAME_SIZE_MAX)
		pr_info("tbrdma: %s: %s: eth rail to %016llx: %u-byte frames, not fragmented (%s): a later MTU shrink fails the connections made before it\n",
			tbr_dev_name(bind->tdev), bind->dev->name, peer->guid, frame,
			READ_ONCE(eth_fragment) ? "the peer does not reassemble" :
						  "eth_fragment=0");
	spin_lock_irqsave(&peer->lock, flags);
	peer->running = true;
	spin_unlock_irqrestore(&peer->lock, flags);
	tbr_rail_up(peer->rail);	/* posts the RX buffers first */
}

static void eth_peer_free(struct eth_peer *peer)
{
	kfree(peer->reasm.buf);
	kfree(peer);
}

/*
 * Free the peers that are dead (not heard for their dead time, so their rail
 * is down) and either dead for eth_peer_expire_s or in the way of a new GUID
 * (table full), with their rails (and links left without rails). A peer that
 * reloads its module comes back under a new session, or a new GUID, so dead
 * entries would otherwise fill the table for good. tbr_ctl_mutex held.
 */
static void eth_bind_expire(struct eth_bind *bind, unsigned long now)
{
	struct eth_peer *peer, *tmp;
	unsigned long flags;
	unsigned int left;
	unsigned long expire = clamp_t(unsigned int, READ_ONCE(eth_peer_expire_s), 1, 86400) * HZ;
	bool full;
	LIST_HEAD(gc);

	spin_lock_irqsave(&bind->lock, flags);
	full = bind->full;
	bind->full = false;
	list_for_each_entry_safe(peer, tmp, &bind->peers, node) {
		unsigned long dead = READ_ONCE(peer->heard_at) +
				     eth_dead_after(peer->period_ms);

		if (peer->running || !time_after_eq(now, dead) ||
		    (!full && time_before(now, dead + expire)))
			continue;
		list_del_rcu(&peer->node);
		bind->npeers--;
		list_add_tail(&peer->gc, &gc);
	}
	left = bind->npeers;
	spin_unlock_irqrestore(&bind->lock, flags);

	if (full && left >= ETH_TBR_MAX_PEERS)
		pr_warn_ratelimited("tbrdma: %s: %s: eth peer table full (%u live peers), new peers ignored\n",
				    tbr_dev_name(bind->tdev), bind->dev->name,
				    left);
	if (list_empty(&gc))
		return;
	synchronize_rcu();	/* the RX handler looks peers up under RCU */
	list_for_each_entry_safe(peer, tmp, &gc, gc) {
		pr_info("tbrdma: %s: %s: eth peer %016llx expired\n",
			tbr_dev_name(bind->tdev), bind->dev->name, peer->guid);
		if (peer->rail)
			tbr_rail_remove(peer->rail);
		eth_peer_free(peer);
	}
}

/* One state pass over the binding's peers, then hellos. tbr_ctl_mutex held. */
static void eth_bind_sync(struct eth_bind *bind)
{
	struct net_device *dev = bind->dev;
	bool oper = netif_running(dev) && netif_carrier_ok(dev) &&
		    !READ_ONCE(bind->gone);
	unsigned long now = jiffies, flags;
	u32 max_frame = eth_dev_max_frame(dev);
	struct eth_peer *peer;

	bind->max_frame = max_frame;
	/* peers are only ever added meanwhile (RX); freed under the mutex */
	list_for_each_entry_rcu(peer, &bind->peers, node,
				lockdep_is_held(&tbr_ctl_mutex)) {
		bool heard, hears, restart, want, frag;
		u32 frame, tx_max;

		spin_lock_irqsave(&bind->lock, flags);
		heard = peer->session &&
			time_before(now, READ_ONCE(peer->heard_at) +
					 eth_dead_after(peer->period_ms));
		hears = heard && peer->hears_us &&
			time_before(now, READ_ONCE(peer->hears_at) +
					 eth_dead_after(peer->period_ms));
		peer->heard = heard;
		if (!hears)
			peer->hears_us = false;
		restart = peer->restart;
		peer->restart = false;
		frame = min(max_frame, peer->peer_frame);
		frag = READ_ONCE(eth_fragment) && peer->reassembles;
		spin_unlock_irqrestore(&bind->lock, flags);

		tx_max = frag ? TBR_FRAME_SIZE_MAX : frame;
		want = oper && hears && frame >= ETH_TBR_FRAME_MIN;
		if (peer->running && want && !restart &&
		    (frame != peer->frame || tx_max != peer->tx_max)) {
			/* an MTU change: live when fragmenting, else a cycle */
			pr_info("tbrdma: %s: %s: eth rail to %016llx: frame %u -> %u%s\n",
				tbr_dev_name(bind->tdev), dev->name, peer->guid,
				peer->frame, frame, frag ? ", larger ones fragmented" :
				", not fragmented: the rail restarts");
			if (frag) {
				eth_peer_set_frames(peer, frame, tx_max);
				continue;
			}
		}
		if (peer->running && (!want || restart || frame != peer->frame ||
				      tx_max != peer->tx_max))
			eth_peer_stop(peer);
		if (!want || peer->running)
			continue;
		if (!peer->rail) {
			struct tbr_rail *rail;

			if (!READ_ONCE(eth_join_backends) &&
			    tbr_link_has_other_backend(bind->tdev, peer->guid,
						       &eth_rail_ops)) {
				pr_warn_ratelimited("tbrdma: %s: %s: %016llx is reached over another backend: no eth rail (eth_join_backends)\n",
						    tbr_dev_name(bind->tdev), dev->name,
						    peer->guid);
				continue;
			}
			rail = tbr_rail_add(bind->tdev, peer->guid, &eth_rail_ops,
					    peer, clamp(eth_tx_depth, 8U, 4096U),
					    clamp(eth_rx_depth, 8U, 4096U));
			if (IS_ERR(rail)) {
				pr_warn_ratelimited("tbrdma: %s: eth rail to %016llx over %s: error %ld\n",
						    tbr_dev_name(bind->tdev), peer->guid,
						    dev->name, PTR_ERR(rail));
				continue;
			}
			peer->rail = rail;
		}
		eth_peer_start(peer, frame, tx_max);
	}
	eth_bind_expire(bind, now);
	if (!oper || max_frame < ETH_TBR_FRAME_MIN)
		return;
	eth_send_hello(bind, dev->broadcast, 0, 0, 0);
	list_for_each_entry_rcu(peer, &bind->peers, node,
				lockdep_is_held(&tbr_ctl_mutex)) {
		u8 mac[ETH_ALEN];
		u32 session;
		bool heard;

		spin_lock_irqsave(&bind->lock, flags);
		heard = peer->heard;
		session = peer->session;
		spin_unlock_irqrestore(&bind->lock, flags);
		if (!heard)
			continue;
		spin_lock_irqsave(&peer->lock, flags);
		ether_addr_copy(mac, peer->mac);
		spin_unlock_irqrestore(&peer->lock, flags);
		eth_send_hello(bind, mac, peer->guid, session, TBR_ETH_HEARS_YOU);
	}
}

static void eth_bind_work(struct work_struct *work)
{
	struct eth_bind *bind = container_of(to_delayed_work(work),
					     struct eth_bind, work);

	/* unbind cancels this work with the mutex held: never wait for it */
	if (!mutex_trylock(&tbr_ctl_mutex)) {
		queue_delayed_work(eth_wq, &bind->work, 1);
		return;
	}
	if (!READ_ONCE(bind->gone)) {
		eth_bind_sync(bind);
		queue_delayed_work(eth_wq, &bind->work,
				   msecs_to_jiffies(eth_period()));
	}
	mutex_unlock(&tbr_ctl_mutex);
}

/* ---- bindings ------------------------------------------------------------ */

/* tbr_ctl_mutex held; @bind is on no list any more. */
static void eth_bind_free(struct eth_bind *bind)
{
	struct eth_peer *peer, *tmp;

	WRITE_ONCE(bind->gone, true);
	dev_remove_pack(&bind->pt);	/* waits for running handlers */
	cancel_delayed_work_sync(&bind->work);
	list_for_each_entry(peer, &bind->peers, node)
		if (peer->running)
			eth_peer_stop(peer);
	list_for_each_entry_safe(peer, tmp, &bind->peers, node) {
		list_del(&peer->node);
		if (peer->rail)
			tbr_rail_remove(peer->rail);
		eth_peer_free(peer);
	}
	netdev_put(bind->dev, &bind->tracker);
	kfree(bind);
}

static void eth_unlist(struct eth_bind *bind)
{
	spin_lock_bh(&eth_lock);
	list_del(&bind->node);
	spin_unlock_bh(&eth_lock);
}

static bool eth_is_tbr_netdev(struct net_device *dev)
{
	struct tbr_dev *tdev;

	list_for_each_entry(tdev, &tbr_devices, rails.node)
		if (tdev->netdev == dev)
			return true;
	return false;
}

int tbr_eth_bind(struct tbr_dev *tdev, struct net *net, const char *ifname,
		 struct netlink_ext_ack *extack)
{
	struct eth_bind *bind, *b;
	struct net_device *dev;
	int err = 0;

	lockdep_assert_held(&tbr_ctl_mutex);
	if (tdev->rails.dying)
		return -ENODEV;
	bind = kzalloc(sizeof(*bind), GFP_KERNEL);
	if (!bind)
		return -ENOMEM;
	rtnl_lock();
	dev = __dev_get_by_name(net, ifname);
	if (!dev || dev->reg_state != NETREG_REGISTERED) {
		NL_SET_ERR_MSG(extack, "no such netdev in this network namespace");
		err = -ENODEV;
	} else if (dev->type != ARPHRD_ETHER || (dev->flags & IFF_LOOPBACK) ||
		   dev->addr_len != ETH_ALEN) {
		NL_SET_ERR_MSG(extack, "not an Ethernet netdev");
		err = -EINVAL;
	} else if (eth_is_tbr_netdev(dev)) {
		NL_SET_ERR_MSG(extack, "a tbrdma netdev cannot carry rails");
		err = -EINVAL;
	} else if (eth_dev_max_frame(dev) < ETH_TBR_FRAME_MIN) {
		NL_SET_ERR_MSG(extack, "netdev MTU too small for tbrdma frames (>= 280 needed)");
		err = -EINVAL;
	} else {
		list_for_each_entry(b, &eth_binds, node) {
			if (b->dev == dev) {
				NL_SET_ERR_MSG(extack, "netdev already bound to a tbrdma device");
				err = -EBUSY;
				break;
			}
		}
	}
	if (err) {
		rtnl_unlock();
		kfree(bind);
		return err;
	}
	bind->tdev = tdev;
	bind->guid = tbr_dev_guid(tdev);
	bind->dev = dev;
	netdev_hold(dev, &bind->tracker, GFP_KERNEL);
	do {
		bind->session = get_random_u32();
	} while (!bind->session);
	bind->max_frame = eth_dev_max_frame(dev);
	spin_lock_init(&bind->lock);
	INIT_LIST_HEAD(&bind->peers);
	INIT_DELAYED_WORK(&bind->work, eth_bind_work);
	bind->pt.type = htons(TBRDMA_ETH_P);
	bind->pt.dev = dev;
	bind->pt.func = eth_rcv;
	/* listed under RTNL: the notifier sees it before any unregister */
	spin_lock_bh(&eth_lock);
	list_add_tail(&bind->node, &eth_binds);
	spin_unlock_bh(&eth_lock);
	rtnl_unlock();
	dev_add_pack(&bind->pt);
	queue_delayed_work(eth_wq, &bind->work, 0);	/* hello at once */
	return 0;
}

int tbr_eth_unbind(struct tbr_dev *tdev, struct net *net, const char *ifname,
		   struct netlink_ext_ack *extack)
{
	struct eth_bind *bind;

	lockdep_assert_held(&tbr_ctl_mutex);
	list_for_each_entry(bind, &eth_binds, node) {
		if (bind->tdev != tdev || strcmp(bind->dev->name, ifname) ||
		    !net_eq(dev_net(bind->dev), net))
			continue;
		eth_unlist(bind);
		eth_bind_free(bind);
		return 0;
	}
	NL_SET_ERR_MSG(extack, "this netdev is not bound to this device");
	return -ENOENT;
}

void tbr_eth_dev_gone(struct tbr_dev *tdev)
{
	struct eth_bind *bind, *tmp;

	lockdep_assert_held(&tbr_ctl_mutex);
	list_for_each_entry_safe(bind, tmp, &eth_binds, node) {
		if (bind->tdev != tdev)
			continue;
		eth_unlist(bind);
		eth_bind_free(bind);
	}
}

int tbr_eth_binding_info(unsigned long skip, struct tbr_eth_info *info)
{
	struct eth_bind *bind;
	unsigned long flags;

	lockdep_assert_held(&tbr_ctl_mutex);
	list_for_each_entry(bind, &eth_binds, node) {
		if (skip--)
			continue;
		info->tdev = bind->tdev;
		strscpy(info->ifname, bind->dev->name, sizeof(info->ifname));
		info->ifindex = bind->dev->ifindex;
		info->oper = netif_running(bind->dev) &&
			     netif_carrier_ok(bind->dev) && !READ_ONCE(bind->gone);
		info->max_frame = eth_dev_max_frame(bind->dev);
		spin_lock_irqsave(&bind->lock, flags);
		info->peers = bind->npeers;
		spin_unlock_irqrestore(&bind->lock, flags);
		info->hello_tx = atomic64_read(&bind->hello_tx);
		info->hello_rx = atomic64_read(&bind->hello_rx);
		info->rx_foreign = atomic64_read(&bind->rx_foreign);
		return 0;
	}
	return -ENOENT;
}

/* Unregistered netdevs: free their bindings (process, takes the mutex). */
static void eth_gc(struct work_struct *work)
{
	struct eth_bind *bind, *tmp;

	mutex_lock(&tbr_ctl_mutex);
	list_for_each_entry_safe(bind, tmp, &eth_binds, node) {
		if (!READ_ONCE(bind->gone))
			continue;
		pr_info("tbrdma: %s: %s unregistered, its eth rails go\n",
			tbr_dev_name(bind->tdev), bind->dev->name);
		eth_unlist(bind);
		eth_bind_free(bind);
	}
	mutex_unlock(&tbr_ctl_mutex);
}

/* RTNL held: never take tbr_ctl_mutex here. */
static int eth_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct eth_bind *bind;

	switch (event) {
	case NETDEV_UP:
	case NETDEV_GOING_DOWN:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
	case NETDEV_UNREGISTER:
		break;
	default:
		return NOTIFY_DONE;
	}
	spin_lock_bh(&eth_lock);
	list_for_each_entry(bind, &eth_binds, node) {
		if (bind->dev != dev)
			continue;
		if (event == NETDEV_UNREGISTER) {
			WRITE_ONCE(bind->gone, true);
			queue_work(eth_wq, &eth_gc_work);
		} else {
			mod_delayed_work(eth_wq, &bind->work, 0);
		}
	}
	spin_unlock_bh(&eth_lock);
	return NOTIFY_DONE;
}

static struct notifier_block eth_notifier = {
	.notifier_call = eth_netdev_event,
};

int tbr_eth_init(void)
{
	int err;

	/*
	 * Normal priority on purpose: a receiver on this machine (veth)
	 * drains its backlog in ksoftirqd under load, which a high-priority
	 * sender would starve.
	 */
	eth_wq = alloc_workqueue("tbrdma_eth", 0, 0);
	if (!eth_wq)
		return -ENOMEM;
	err = register_netdevice_notifier(&eth_notifier);
	if (err)
		destroy_workqueue(eth_wq);
	return err;
}

/* Every binding is gone (tbr_ctl_del_all). */
void tbr_eth_exit(void)
{
	unregister_netdevice_notifier(&eth_notifier);
	cancel_work_sync(&eth_gc_work);
	destroy_workqueue(eth_wq);
}
