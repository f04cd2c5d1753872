// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: eth rails, each peer's rail. The binding's work runs a state pass
 * over its peers (tbe_bind_sync): a rail goes up when both directions work
 * (we hear the peer, the peer says it hears us) and its frame size is
 * usable, is resized or cycled when the MTUs change, goes down when the
 * peer falls silent, restarts or the netdev goes; dead peers expire. Then
 * the hellos go out. Context: process, tbr_ctl_mutex held (the work only
 * trylocks it, see eth.c).
 */
#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "tbrdma.h"
#include "link/rail.h"
#include "backends/eth.h"

/* ---- peer state (process, tbr_ctl_mutex) ----------------------------------- */

/*
 * Stop the rings: the frames on the wire completed (the netdev has them),
 * everything still queued or posted canceled; rail down.
 */
void tbe_peer_stop(struct tbe_peer *peer)
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
	tasklet_kill(&peer->tx_tasklet);
	cancel_delayed_work_sync(&peer->tx_retry);
	tasklet_kill(&peer->tx_tasklet);
	spin_lock_irqsave(&peer->lock, flags);
	list_splice_init(&peer->txq, &tx);
	list_splice_init(&peer->rxq, &rx);
	peer->txn = 0;
	peer->rxn = 0;
	spin_unlock_irqrestore(&peer->lock, flags);

	local_bh_disable();
	tbe_wire_flush(peer);
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
static void tbe_peer_set_frames(struct tbe_peer *peer, u32 frame, u32 tx_max)
{
	unsigned long flags;

	tbr_rail_set_max_frame(peer->rail, frame, tx_max);
	spin_lock_irqsave(&peer->lock, flags);
	peer->frame = frame;
	peer->tx_max = tx_max;
	spin_unlock_irqrestore(&peer->lock, flags);
}

static void tbe_peer_start(struct tbe_peer *peer, u32 frame, u32 tx_max,
			   u32 feat)
{
	struct tbe_bind *bind = peer->bind;
	u32 speed = READ_ONCE(bind->speed_mbps);
	unsigned long flags;

	tbe_peer_set_frames(peer, frame, tx_max);
	tbr_rail_set_peer_feat(peer->rail, feat);
	/* the netdev's speed when it was bound or last changed state */
	tbr_rail_set_speed(peer->rail, bind->dev, speed, speed ? 1 : 0);
	peer->feat = feat;
	if (tx_max == frame && frame < TBR_FRAME_SIZE_MAX)
		pr_info("tbrdma: %s: %s: eth rail to %016llx: %u-byte frames, not fragmented (%s): a later MTU shrink fails the connections made before it\n",
			tbr_dev_name(bind->tdev), bind->dev->name, peer->guid, frame,
			READ_ONCE(tbe_fragment) ? "the peer does not reassemble" :
						  "tbe_fragment=0");
	spin_lock_irqsave(&peer->lock, flags);
	peer->running = true;
	spin_unlock_irqrestore(&peer->lock, flags);
	tbr_rail_up(peer->rail);	/* posts the RX buffers first */
}

/*
 * Free the peers that are dead (not heard for their dead time, so their rail
 * is down) and either dead for tbe_peer_expire_s or in the way of a new GUID
 * (table full), with their rails (and links left without rails). A peer that
 * reloads its module comes back under a new session, or a new GUID, so dead
 * entries would otherwise fill the table for good. tbr_ctl_mutex held.
 */
static void tbe_bind_expire(struct tbe_bind *bind, unsigned long now)
{
	struct tbe_peer *peer, *tmp;
	unsigned long flags;
	unsigned int left;
	unsigned long expire = clamp_t(unsigned int, READ_ONCE(tbe_peer_expire_s), 1, 86400) * HZ;
	bool full;
	LIST_HEAD(gc);

	spin_lock_irqsave(&bind->lock, flags);
	full = bind->full;
	bind->full = false;
	list_for_each_entry_safe(peer, tmp, &bind->peers, node) {
		unsigned long dead = READ_ONCE(peer->heard_at) +
				     tbe_dead_after(peer->period_ms);

		if (peer->running || !time_after_eq(now, dead) ||
		    (!full && time_before(now, dead + expire)))
			continue;
		list_del_rcu(&peer->node);
		bind->npeers--;
		list_add_tail(&peer->gc, &gc);
	}
	left = bind->npeers;
	spin_unlock_irqrestore(&bind->lock, flags);

	if (full && left >= TBE_MAX_PEERS)
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
		tbe_peer_put(peer);
	}
}

/* One state pass over the binding's peers, then hellos. tbr_ctl_mutex held. */
static void tbe_bind_sync(struct tbe_bind *bind)
{
	struct net_device *dev = bind->dev;
	bool oper = netif_running(dev) && netif_carrier_ok(dev) &&
		    !READ_ONCE(bind->gone);
	unsigned long now = jiffies, flags;
	u32 max_frame = tbe_dev_max_frame(dev);
	bool keyed = tbr_link_auth_keyed(bind->tdev);
	struct tbe_peer *peer;

	bind->max_frame = max_frame;
	/* a new hello nonce every TBR_ETH_NONCE_MS; the one before still answers */
	spin_lock_irqsave(&bind->lock, flags);
	if (!bind->nonce[0] ||
	    time_after_eq(now, bind->nonce_at + msecs_to_jiffies(TBR_ETH_NONCE_MS))) {
		bind->nonce[1] = bind->nonce[0];
		bind->nonce[0] = get_random_u64() | 1;
		bind->nonce_at = now;
	}
	spin_unlock_irqrestore(&bind->lock, flags);
	/* peers are only ever added meanwhile (RX); freed under the mutex */
	list_for_each_entry_rcu(peer, &bind->peers, node,
				lockdep_is_held(&tbr_ctl_mutex)) {
		bool heard, hears, restart, want, frag, proven;
		u32 frame, tx_max, feat;

		spin_lock_irqsave(&bind->lock, flags);
		heard = peer->session &&
			time_before(now, READ_ONCE(peer->heard_at) +
					 tbe_dead_after(peer->period_ms));
		/* with a fabric key, only a peer that proved it hears us */
		proven = peer->proven;
		hears = heard && peer->hears_us && (!keyed || proven) &&
			time_before(now, READ_ONCE(peer->hears_at) +
					 tbe_dead_after(peer->period_ms));
		peer->heard = heard;
		if (!hears)
			peer->hears_us = false;
		restart = peer->restart;
		peer->restart = false;
		frame = min(max_frame, peer->peer_frame);
		frag = READ_ONCE(tbe_fragment) && peer->reassembles;
		feat = (peer->ack_ride ? TBR_PEER_ACK_RIDE : 0) |
		       (peer->net_frag ? TBR_PEER_NET_FRAG : 0);
		spin_unlock_irqrestore(&bind->lock, flags);

		tx_max = frag ? TBR_FRAME_SIZE_MAX : frame;
		want = oper && hears && frame >= TBE_FRAME_MIN;
		if (peer->running && want && !restart &&
		    (frame != peer->frame || tx_max != peer->tx_max)) {
			/* an MTU change: live when fragmenting, else a cycle */
			pr_info("tbrdma: %s: %s: eth rail to %016llx: frame %u -> %u%s\n",
				tbr_dev_name(bind->tdev), dev->name, peer->guid,
				peer->frame, frame, frag ? ", larger ones fragmented" :
				", not fragmented: the rail restarts");
			if (frag) {
				tbe_peer_set_frames(peer, frame, tx_max);
				continue;
			}
		}
		if (peer->running && (!want || restart || frame != peer->frame ||
				      tx_max != peer->tx_max || feat != peer->feat))
			tbe_peer_stop(peer);
		if (!want || peer->running)
			continue;
		if (!peer->rail) {
			struct tbr_rail *rail;

			if (!READ_ONCE(tbe_join_backends) &&
			    tbr_link_has_other_backend(bind->tdev, peer->guid,
						       bind->backend)) {
				pr_warn_ratelimited("tbrdma: %s: %s: %016llx is reached over another backend: no eth rail (tbe_join_backends)\n",
						    tbr_dev_name(bind->tdev), dev->name,
						    peer->guid);
				continue;
			}
			rail = tbr_rail_add(bind->tdev, peer->guid, bind->backend,
					    peer, clamp(tbe_tx_depth, 8U, 4096U),
					    clamp(tbe_rx_depth, 8U, 4096U));
			if (IS_ERR(rail)) {
				pr_warn_ratelimited("tbrdma: %s: eth rail to %016llx over %s: error %ld\n",
						    tbr_dev_name(bind->tdev), peer->guid,
						    dev->name, PTR_ERR(rail));
				continue;
			}
			peer->rail = rail;
		}
		/* its GUID is the key holder's: never held (link.c) */
		peer->rail->auth = keyed && proven;
		tbe_peer_start(peer, frame, tx_max, feat);
	}
	tbe_bind_expire(bind, now);
	if (!oper || max_frame < TBE_FRAME_MIN)
		return;
	tbe_send_hello(bind, dev->broadcast, 0, 0, 0, 0);
	list_for_each_entry_rcu(peer, &bind->peers, node,
				lockdep_is_held(&tbr_ctl_mutex)) {
		u8 mac[ETH_ALEN], hears_you;
		u64 nonce;
		u32 session;
		bool heard;

		spin_lock_irqsave(&bind->lock, flags);
		heard = peer->heard;
		session = peer->session;
		nonce = peer->nonce;
		/* "I hear you" only to a peer that proved the key, if we have one */
		hears_you = !keyed || peer->proven ? TBR_ETH_HEARS_YOU : 0;
		spin_unlock_irqrestore(&bind->lock, flags);
		if (!heard)
			continue;
		spin_lock_irqsave(&peer->lock, flags);
		ether_addr_copy(mac, peer->mac);
		spin_unlock_irqrestore(&peer->lock, flags);
		tbe_send_hello(bind, mac, peer->guid, session, nonce, hears_you);
	}
}

void tbe_bind_work(struct work_struct *work)
{
	struct tbe_bind *bind = container_of(to_delayed_work(work),
					     struct tbe_bind, work);

	/* unbind cancels this work with the mutex held: never wait for it */
	if (!mutex_trylock(&tbr_ctl_mutex)) {
		queue_delayed_work(tbe_wq, &bind->work, 1);
		return;
	}
	if (!READ_ONCE(bind->gone)) {
		tbe_bind_sync(bind);
		queue_delayed_work(tbe_wq, &bind->work,
				   msecs_to_jiffies(tbe_period()));
	}
	mutex_unlock(&tbr_ctl_mutex);
}
