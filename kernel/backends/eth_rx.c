// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: eth rails, receive. The packet handler of every binding (softirq,
 * RCU read side): a HELLO updates the sender's handshake state (and makes
 * it a peer) and wakes the binding's work (eth_peer.c) on any change; a
 * FRAME from a peer's pinned MAC (and each FRAME bundled behind it) takes
 * the first RX buffer posted on its rail (none posted: dropped, counted
 * rx_nobuf) and is read in the skb (in its head or in one of its pages),
 * or copied into that buffer when the skb is cloned or the frame spans two
 * pieces; a FRAG joins the reassembly of the frame it is a piece of.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/rculist.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/busy_poll.h>

#include "tbrdma.h"
#include "link/rail.h"
#include "backends/eth.h"

/* ---- receive ------------------------------------------------------------ */

static struct tbe_peer *tbe_peer_find(struct tbe_bind *bind, u64 guid)
{
	struct tbe_peer *peer;

	list_for_each_entry_rcu(peer, &bind->peers, node)
		if (peer->guid == guid)
			return peer;
	return NULL;
}

/*
 * With a fabric key: whether the unicast @hello (payload @p, @plen bytes)
 * from @smac proves its sender holds the key, answering one of our last two
 * nonces (docs/eth.md "Authenticated links"). A hello that does not is
 * refused and counted; one without a MAC or with a wrong one also takes the
 * peer of that GUID and MAC (if any) out of "hears us", so a rail that came
 * up before (a peer that lost the key at a rotation) goes down even while
 * data keeps it fresh. An old nonce (-ESTALE) only costs that hello.
 * Softirq, RCU read side; takes bind->lock.
 */
static bool tbe_rx_hello_proven(struct tbe_bind *bind, const u8 *smac,
				const struct tbr_eth_hdr *h, const u8 *p,
				u32 plen, const struct tbr_eth_hello *hello)
{
	struct tbe_peer *peer;
	struct tbr_auth a;
	unsigned long flags;
	bool cut = false;
	u64 cur, prev;
	int err;

	spin_lock_irqsave(&bind->lock, flags);
	cur = bind->nonce[0];
	prev = bind->nonce[1];
	spin_unlock_irqrestore(&bind->lock, flags);
	tbr_link_auth_get(bind->tdev, &a);
	err = tbr_eth_hello_verify(&a, smac, h, p, plen, hello, cur, prev);
	if (!err)
		return true;
	atomic64_inc(&bind->auth_refused);
	tbr_link_auth_refused(bind->tdev);
	pr_warn_ratelimited("tbrdma: %s: %s: refused a hello from %016llx (%pM): %s\n",
			    tbr_dev_name(bind->tdev), bind->dev->name, h->src, smac,
			    err == -ENOKEY ? "no fabric key" :
			    err == -ESTALE ? "answers an old nonce (replayed)" :
			    "wrong fabric key");
	if (err == -ESTALE)
		return false;
	spin_lock_irqsave(&bind->lock, flags);
	peer = tbe_peer_find(bind, h->src);
	if (peer && ether_addr_equal(peer->mac, smac) &&
	    (peer->hears_us || peer->proven)) {
		peer->hears_us = false;
		peer->proven = false;
		cut = true;
	}
	spin_unlock_irqrestore(&bind->lock, flags);
	if (cut)
		mod_delayed_work(tbe_wq, &bind->work, 0);
	return false;
}

static void tbe_rx_hello(struct tbe_bind *bind, struct sk_buff *skb,
			 const struct tbr_eth_hdr *h)
{
	const u8 *smac = eth_hdr(skb)->h_source;
	u8 buf[TBR_ETH_HELLO_AUTH_LEN];
	struct tbr_eth_hello hello;
	struct tbe_peer *peer;
	bool changed = false, keyed, proven = false;
	unsigned long flags;
	u32 session, frame, plen;
	const u8 *p;
	u64 src = h->src;
	bool reasm, ride, net;

	/* the auth part when it is there; older peers send 16 bytes */
	plen = min_t(u32, h->len, sizeof(buf));
	if (plen < TBR_ETH_HELLO_LEN)
		return;
	p = skb_header_pointer(skb, TBR_ETH_HDR_LEN, plen, buf);
	if (!p || tbr_eth_hello_parse(h, p, plen, bind->guid,
				      bind->session, &hello))
		return;
	keyed = tbr_link_auth_keyed(bind->tdev);
	if (keyed && hello.unicast) {
		/* a unicast hello that does not prove the key changes nothing */
		proven = tbe_rx_hello_proven(bind, smac, h, p, plen, &hello);
		if (!proven)
			return;
	}
	session = hello.session;
	frame = hello.max_frame;
	reasm = hello.flags & TBR_ETH_REASSEMBLES;
	ride = hello.flags & TBR_ETH_ACK_RIDE;
	net = hello.flags & TBR_ETH_NET_FRAG;
	if (!is_valid_ether_addr(smac)) {
		atomic64_inc(&bind->rx_foreign);
		return;
	}

	spin_lock_irqsave(&bind->lock, flags);
	peer = tbe_peer_find(bind, src);
	if (peer && !ether_addr_equal(peer->mac, smac)) {
		/*
		 * The MAC is pinned while the peer lives: another station
		 * claiming its GUID is dropped. Once it is dead (its rail is
		 * down) a new MAC may take the GUID: a replaced NIC, a veth
		 * recreated. The rail restarts then.
		 */
		if (time_before(jiffies, READ_ONCE(peer->heard_at) +
					 tbe_dead_after(peer->period_ms))) {
			spin_unlock_irqrestore(&bind->lock, flags);
			atomic64_inc(&bind->rx_foreign);
			return;
		}
		spin_lock(&peer->lock);
		ether_addr_copy(peer->mac, smac);
		spin_unlock(&peer->lock);
		peer->restart = true;
		peer->hears_us = false;
		peer->proven = false;
		changed = true;
	}
	if (!peer) {
		if (READ_ONCE(bind->gone)) {
			spin_unlock_irqrestore(&bind->lock, flags);
			return;
		}
		if (bind->npeers >= TBE_MAX_PEERS) {
			/* the work expires a dead peer; the next hello gets in */
			bind->full = true;
			spin_unlock_irqrestore(&bind->lock, flags);
			mod_delayed_work(tbe_wq, &bind->work, 0);
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
		tbe_peer_init(peer);
		list_add_tail_rcu(&peer->node, &bind->peers);
		bind->npeers++;
		changed = true;
	}
	if (peer->session != session) {
		if (peer->session)
			peer->restart = true;
		peer->session = session;
		peer->hears_us = false;
		peer->proven = false;
		changed = true;
	}
	if (hello.auth)
		peer->nonce = hello.nonce;	/* what our unicast hellos answer */
	if (keyed && hello.unicast && proven != peer->proven) {
		peer->proven = proven;
		changed = true;
	}
	/* a new frame size or capability: the state pass resizes or cycles */
	if (peer->peer_frame != frame || peer->reassembles != reasm ||
	    peer->ack_ride != ride || peer->net_frag != net) {
		peer->peer_frame = frame;
		peer->reassembles = reasm;
		peer->ack_ride = ride;
		peer->net_frag = net;
		changed = true;
	}
	peer->period_ms = hello.period_ms;
	WRITE_ONCE(peer->bundle_max, hello.bundle_max);
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
		mod_delayed_work(tbe_wq, &bind->work, 0);
}

/*
 * RX (RCU read side): the peer of GUID @src with its lock taken (irqsave,
 * *@flags) if @skb comes from its pinned MAC; NULL otherwise.
 */
static struct tbe_peer *tbe_rx_peer_lock(struct tbe_bind *bind, struct sk_buff *skb,
					 u64 src, unsigned long *flags)
{
	struct tbe_peer *peer = tbe_peer_find(bind, src);

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
static struct tbr_frame *tbe_rx_buf_locked(struct tbe_peer *peer)
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

/* ---- poll mode (xport_poll.c): busy polling the NIC's NAPI -------------- */

#ifdef CONFIG_NET_RX_BUSY_POLL
static void tbe_note_napi(struct tbe_peer *peer, struct sk_buff *skb)
{
	if (READ_ONCE(peer->napi_id) != skb->napi_id)
		WRITE_ONCE(peer->napi_id, skb->napi_id);
}

struct tbe_poll {
	bool (*end)(void *arg);
	void *arg;
};

static bool tbe_poll_end(void *data, unsigned long start_time)
{
	struct tbe_poll *p = data;

	return p->end(p->arg);
}

/* tbr_backend.busy_poll: the NIC's NAPI poll, frames to tbe_rcv as always */
void tbe_busy_poll(u32 cookie, bool (*end)(void *arg), void *arg)
{
	struct tbe_poll p = { .end = end, .arg = arg };

	napi_busy_loop(cookie, tbe_poll_end, &p, false, TBE_POLL_BUDGET);
}
#else
static void tbe_note_napi(struct tbe_peer *peer, struct sk_buff *skb)
{
}
#endif

/*
 * Where the @len bytes at @off of @skb can be read (and written) in place:
 * an skb that is ours alone (not cloned) holding them whole in its head (a
 * small frame from a NIC) or in one of its page fragments (a veth peer's
 * skb, tbe_frame_skb(); a virtio NIC's receive buffer) that no one else
 * may write (not a shared fragment: a page of a file or of a user's
 * buffer, skb_has_shared_frag(), as the stack checks before writing one).
 * NULL: copy them.
 */
static void *tbe_rx_inplace(struct sk_buff *skb, u32 off, u32 len)
{
	u32 pos = skb_headlen(skb), size;
	const skb_frag_t *frag;
	unsigned int i;

	if (skb_cloned(skb))
		return NULL;
	if (off + len <= pos)
		return skb->data + off;
	if (skb_has_shared_frag(skb))
		return NULL;
	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++, pos += size) {
		frag = &skb_shinfo(skb)->frags[i];
		size = skb_frag_size(frag);
		if (off >= pos + size)
			continue;
		if (off < pos || off + len > pos + size ||
		    PageHighMem(skb_frag_page(frag)))
			return NULL;
		return skb_frag_address(frag) + (off - pos);
	}
	return NULL;
}

/* The FRAME with header @h whose payload is at @off of @skb. */
static void tbe_rx_frame(struct tbe_bind *bind, struct sk_buff *skb, u32 off,
			 const struct tbr_eth_hdr *h)
{
	struct tbe_peer *peer;
	struct tbr_rail *rail;
	struct tbr_frame *f;
	unsigned long flags;
	u32 len = h->len;
	void *data;

	if (tbr_eth_frame_check(h, bind->guid))
		return;
	peer = tbe_rx_peer_lock(bind, skb, h->src, &flags);
	if (!peer)
		return;
	tbe_note_napi(peer, skb);
	rail = peer->rail;
	f = tbe_rx_buf_locked(peer);
	spin_unlock_irqrestore(&peer->lock, flags);
	if (!f) {
		if (rail)
			tbr_rail_count(rail, TBR_CNT_RX_NOBUF, 1);
		return;
	}
	data = tbe_rx_inplace(skb, off, len);
	if (data) {
		tbr_rail_rx_data(rail, f, data, len, h->pdf & 0xf);
		return;
	}
	if (skb_copy_bits(skb, off, f->buf, len)) {
		f->flags = TBR_FRAME_CRC_ERROR;
		f->size = 0;
	} else {
		f->flags = 0;
		f->size = len;
	}
	f->eof = h->pdf & 0xf;
	f->callback(rail, f, false);
}

/*
 * The FRAMEs of a packet: the one at its start (header @h, pulled into the
 * head), then each bundled behind it (docs/eth.md "Bundles"). A record that
 * is not a FRAME or is cut short ends the packet (what came before it is
 * delivered; the transport resends the rest).
 */
static void tbe_rx_frames(struct tbe_bind *bind, struct sk_buff *skb, struct tbr_eth_hdr *h)
{
	u8 buf[TBR_ETH_HDR_LEN];
	u32 off = 0, left;
	const u8 *p;

	do {
		tbe_rx_frame(bind, skb, off + TBR_ETH_HDR_LEN, h);
		off += TBR_ETH_HDR_LEN + h->len;
		left = skb->len - off;
		p = skb_header_pointer(skb, off, min_t(u32, left, TBR_ETH_HDR_LEN), buf);
	} while (p && !tbr_eth_next_frame(p, left, h));
}

/*
 * A FRAG: its piece joins the peer's reassembly (one frame at a time per
 * peer, tbr_eth_reasm_add()); a completed frame is delivered as a FRAME's.
 * A gap or an inconsistent piece drops the partial frame (frag_drops), the
 * transport resends it; so does a piece that arrives while we do not
 * reassemble (eth_fragment=0). peer->lock protects the reassembly state.
 */
static void tbe_rx_frag(struct tbe_bind *bind, struct sk_buff *skb, const struct tbr_eth_hdr *h)
{
	const u32 data_off = TBR_ETH_HDR_LEN + TBR_ETH_FRAG_HDR_LEN;
	struct tbr_frame *f = NULL;
	struct tbr_eth_frag fr;
	struct tbe_peer *peer;
	struct tbr_rail *rail;
	unsigned long flags;
	u32 dropped = 0;
	int rc = -EINVAL;

	/* a piece is at most one MTU: make it linear */
	if (!pskb_may_pull(skb, TBR_ETH_HDR_LEN + h->len) ||
	    tbr_eth_frag_parse(h, skb->data + TBR_ETH_HDR_LEN, h->len, bind->guid, &fr))
		return;
	peer = tbe_rx_peer_lock(bind, skb, h->src, &flags);
	if (!peer)
		return;
	rail = peer->rail;
	if (peer->running && READ_ONCE(tbe_fragment))
		rc = tbr_eth_reasm_add(&peer->reasm, &fr, skb->data + data_off, &dropped);
	else
		dropped = 1;	/* we do not reassemble now: the peer learns it */
	if (rc == TBR_ETH_REASM_DONE) {
		f = tbe_rx_buf_locked(peer);
		if (f) {
			memcpy(f->buf, peer->reasm.buf, peer->reasm.total);
			f->size = peer->reasm.total;
			f->eof = peer->reasm.pdf & 0xf;
			f->flags = 0;
		}
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	if (!rail)
		return;
	if (dropped)
		tbr_rail_count(rail, TBR_CNT_FRAG_DROPS, dropped);
	if (rc != TBR_ETH_REASM_DONE)
		return;
	if (!f) {
		tbr_rail_count(rail, TBR_CNT_RX_NOBUF, 1);
		return;
	}
	tbr_rail_count(rail, TBR_CNT_FRAG_RX, 1);
	f->callback(rail, f, false);
}

/* Softirq (or BH disabled): a frame with our ethertype on a bound netdev. */
int tbe_rcv(struct sk_buff *skb, struct net_device *dev, struct packet_type *pt,
	    struct net_device *orig_dev)
{
	struct tbe_bind *bind = container_of(pt, struct tbe_bind, pt);
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
		tbe_rx_hello(bind, skb, &h);
	else if (h.type == TBR_ETH_FRAME)
		tbe_rx_frames(bind, skb, &h);
	else if (h.type == TBR_ETH_FRAG)
		tbe_rx_frag(bind, skb, &h);
	rcu_read_unlock();
	consume_skb(skb);
	return NET_RX_SUCCESS;
out:
	kfree_skb(skb);
	return NET_RX_DROP;
}
