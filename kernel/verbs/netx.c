// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: tbrN's IP packets up to 64 KiB over every rail of a link
 * (docs/protocol.md "IP over the rails").
 *
 * To a neighbour that takes them (TBR_PEER_NET_FRAG), a unicast packet is
 * cut into fragment frames (code TBR_PDF_NETX, struct tbr_netx_hdr ahead of
 * each) which the link layer spreads over the link's up rails as it does
 * the transport's frames. Packets are numbered per link; the receiver
 * reassembles each from its fragments and hands packets up strictly in
 * number order, so no flow sees reordering however the rails skew. The
 * window and the reassembly are core/tbr_netx.c's (OS independent, unit
 * tested and fuzzed). A packet whose missing fragments cannot come any more
 * is given up and those behind it go on: a lost IP packet, which TCP
 * resends, never a lost connection. "Cannot come" follows the rails'
 * delivery (core/tbr_netx.h): every up rail has delivered a fragment of a
 * later packet (rails keep order), or nothing at all for
 * TBR_NETX_SILENT_MS; TBR_NETX_HOLD_MS is the last resort, and a rail cut
 * gives up what was seen before it TBR_NETX_CUT_MS later.
 *
 * Offloads are carried, not done: a TSO super packet travels whole with
 * its MSS, a CHECKSUM_PARTIAL packet with its checksum's place (as
 * virtio-net's header does). The receiver hands the super packet up as a
 * GSO skb with CHECKSUM_PARTIAL, so a packet for this host is checksummed
 * and segmented never, one forwarded elsewhere once, by the device that
 * sends it on (or the stack's software fallback).
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <net/addrconf.h>
#include <net/ndisc.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>

#include "link/rail.h"
#include "verbs/netdev.h"

static_assert(sizeof(struct tbr_netx_hdr) == TBR_NETX_HDR_LEN);
static_assert(TBR_NETX_HDR_LEN == TBR_NETX_HDR_SIZE && TBR_NETX_VERSION == TBR_NETX_VER);
static_assert(TBR_NETX_ETH_HLEN == ETH_HLEN && TBR_LINK_MAX_RAILS <= TBR_NETX_RAILS);
static_assert(DIV_ROUND_UP(TBR_NETX_PKT_MAX, 4096) <= 17);

/*
 * tbrN's fragment frames in flight per up rail of a link, at most: as BQL
 * bounds a NIC's queue, so that IP does not fill the rings and RDMA's
 * frames (and IP's own ACKs) do not wait behind a ring of it.
 */
static unsigned int tbr_netx_inflight = 64;
module_param_named(ip_inflight, tbr_netx_inflight, uint, 0644);
MODULE_PARM_DESC(ip_inflight, "tbrN: fragment frames in flight per rail of a link, at most (default 64)");

static void tbr_netx_count(struct tbr_netdev_priv *priv, enum tbr_netx_cnt c, u64 n)
{
	atomic64_add(n, &priv->cnt[c]);
}

/* Whether @link's peer takes fragments, and we keep its state. Context "any". */
bool tbr_netx_takes(struct tbr_netdev_priv *priv, struct tbr_link *link)
{
	return !link->ops && (tbr_link_peer_feat(link) & TBR_PEER_NET_FRAG) &&
	       xa_load(&priv->netx, link->id);
}

/* ---- checks ---------------------------------------------------------------- */

/*
 * ND options that name a link-layer address (RFC 4861 4.6.1): source (1) in
 * RS, RA and NS, target (2) in NA; each must be @mac (0: none, or all
 * @mac). Redirects (137) name another host's address by design: not
 * checked (the stack takes them from the current router only). Only ND
 * right after the IPv6 header is looked at, as the stack sends it.
 */
static bool tbr_netdev_nd_ok(const u8 *p, u32 len, const u8 *mac)
{
	const struct ipv6hdr *ip6 = (const struct ipv6hdr *)p;
	u32 off;

	if (len < sizeof(*ip6) + 8 || ip6->nexthdr != IPPROTO_ICMPV6)
		return true;
	p += sizeof(*ip6);
	len = min_t(u32, len - sizeof(*ip6), ntohs(ip6->payload_len));
	if (len < 8)
		return true;	/* the stack drops it */
	switch (p[0]) {		/* ICMPv6 type */
	case NDISC_ROUTER_SOLICITATION:
		off = 8;
		break;
	case NDISC_ROUTER_ADVERTISEMENT:
		off = 16;
		break;
	case NDISC_NEIGHBOUR_SOLICITATION:
	case NDISC_NEIGHBOUR_ADVERTISEMENT:
		off = 24;
		break;
	default:
		return true;
	}
	/* options: type, length in units of 8 bytes (0 is invalid), data */
	while (off + 2 <= len && p[off + 1]) {
		if ((p[off] == ND_OPT_SOURCE_LL_ADDR || p[off] == ND_OPT_TARGET_LL_ADDR) &&
		    (off + 2 + ETH_ALEN > len || !ether_addr_equal(p + off + 2, mac)))
			return false;
		off += p[off + 1] * 8;
	}
	return true;
}

/*
 * Whether a frame of @len bytes from host @src may enter tbrN: every tbrN's
 * MAC is the EUI-48 of its node GUID (a peer's unicast goes to the link of
 * the GUID its MAC names, tbr_netdev_xmit), so the Ethernet source must be
 * @src's, and the link-layer addresses the stack learns neighbours from
 * too: an ARP sender's hardware address, ND's source/target link-layer
 * address options. Otherwise a neighbour could make hosts map addresses to
 * another host's MAC, or to one no host has (issue 46). Bridging tbrN,
 * which forwards other MACs, is therefore not possible (as IPoIB's).
 */
bool tbr_netx_src_ok(const u8 *data, u32 len, u64 src)
{
	const struct ethhdr *eth = (const struct ethhdr *)data;
	const struct arphdr *arp;
	__be64 guid;

	addrconf_addr_eui48((u8 *)&guid, eth->h_source);
	if (be64_to_cpu(guid) != src)
		return false;
	data += ETH_HLEN;
	len -= ETH_HLEN;
	switch (eth->h_proto) {
	case htons(ETH_P_ARP):
		/* the stack takes Ethernet ARP only: sender address first */
		arp = (const struct arphdr *)data;
		return len >= sizeof(*arp) + ETH_ALEN && arp->ar_hln == ETH_ALEN &&
		       ether_addr_equal(data + sizeof(*arp), eth->h_source);
	case htons(ETH_P_IPV6):
		return tbr_netdev_nd_ok(data, len, eth->h_source);
	default:
		return true;
	}
}

/* what a frame in priv->rxq carries in skb->cb */
struct tbr_netx_cb {
	u64 src;		/* the sending host */
	bool whole;		/* a NET frame, checked and typed */
};

static struct tbr_netx_cb *tbr_netx_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct tbr_netx_cb) > sizeof(skb->cb));
	return (struct tbr_netx_cb *)skb->cb;
}

/*
 * A packet reassembled from host @src's fragments, offloads set: checked
 * as a frame of one piece is (tbr_netx_src_ok: ARP and ND made linear
 * first, they are small), then up through GRO. Context: tbrN's NAPI poll.
 */
static void tbr_netx_deliver_one(struct net_device *ndev, struct sk_buff *skb)
{
	struct tbr_netdev_priv *priv = tbr_netdev_priv(ndev);
	u64 src = tbr_netx_cb(skb)->src;
	const struct ethhdr *eth;
	u32 len = skb->len;

	if (tbr_netx_cb(skb)->whole) {
		napi_gro_receive(&priv->napi, skb);
		return;
	}

	if (!pskb_may_pull(skb, min_t(u32, len, ETH_HLEN + sizeof(struct ipv6hdr))))
		goto drop;
	eth = (const struct ethhdr *)skb->data;
	if ((eth->h_proto == htons(ETH_P_ARP) ||
	     (eth->h_proto == htons(ETH_P_IPV6) && len >= ETH_HLEN + sizeof(struct ipv6hdr) &&
	      ((const struct ipv6hdr *)(skb->data + ETH_HLEN))->nexthdr == IPPROTO_ICMPV6)) &&
	    skb_linearize(skb))
		goto drop;
	if (!tbr_netx_src_ok(skb->data, skb_headlen(skb), src))
		goto drop;
	skb->protocol = eth_type_trans(skb, ndev);
	if (skb_is_gso(skb))
		atomic64_inc(&priv->cnt[TBR_NETX_RX_GSO]);
	atomic64_inc(&priv->cnt[TBR_NETX_RX_PACKETS]);
	ndev->stats.rx_packets++;
	ndev->stats.rx_bytes += len;
	napi_gro_receive(&priv->napi, skb);
	return;

drop:
	ndev->stats.rx_dropped++;
	kfree_skb(skb);
}

/* ---- transmit ------------------------------------------------------------ */

/*
 * Whether another fragment may go to @link (tbr_netx_inflight); if not,
 * the completion that halves what is in flight wakes tbrN (link/tx.c).
 */
static bool tbr_netx_room(struct tbr_link *link)
{
	int limit = max(READ_ONCE(tbr_netx_inflight), 1U) *
		    max(READ_ONCE(link->rails_up), 1U);

	if (atomic_read(&link->net_inflight) < limit)
		return true;
	WRITE_ONCE(link->net_wake_at, limit / 2);
	WRITE_ONCE(link->net_wait, true);
	smp_mb();	/* against tbr_tx_done: its decrement, then net_wait */
	if (atomic_read(&link->net_inflight) >= limit)
		return false;
	WRITE_ONCE(link->net_wait, false);
	return true;
}

/*
 * Send the fragments of the pending packet that are left. TX lock held.
 * Rings full: the queue stops until the link's tx_ready; other errors (no
 * rail up, too large) drop the rest (the receiver gives the packet up).
 */
static void tbr_netx_push(struct net_device *ndev, struct tbr_netdev_priv *priv)
{
	struct tbr_netx_hdr *h = &priv->pend_hdr;
	struct sk_buff *skb = priv->pend;
	u32 fsz = be16_to_cpu(h->frag_size);
	u32 n, off;
	void *buf;

	while (priv->pend_frag < h->nfrags) {
		off = priv->pend_frag * fsz;
		n = min_t(u32, fsz, skb->len - off);
		if (!tbr_netx_room(priv->pend_link)) {
			netif_stop_queue(ndev);
			tbr_netx_count(priv, TBR_NETX_TX_STALLS, 1);
			return;
		}
		buf = tbr_link_tx_alloc_net(priv->pend_link, TBR_NETX_HDR_LEN + n);
		if (IS_ERR(buf)) {
			if (PTR_ERR(buf) == -ENOBUFS) {
				netif_stop_queue(ndev);
				tbr_netx_count(priv, TBR_NETX_TX_STALLS, 1);
				return;
			}
			ndev->stats.tx_errors++;
			goto done;
		}
		h->frag = priv->pend_frag;
		memcpy(buf, h, TBR_NETX_HDR_LEN);
		/* cannot fail: off + n <= skb->len */
		skb_copy_bits(skb, off, buf + TBR_NETX_HDR_LEN, n);
		tbr_link_tx_send_pdf(buf, TBR_PDF_NETX, TBR_NETX_HDR_LEN + n);
		priv->pend_frag++;
	}
	ndev->stats.tx_packets++;
	ndev->stats.tx_bytes += skb->len;
	tbr_netx_count(priv, TBR_NETX_TX_PACKETS, 1);
	tbr_netx_count(priv, TBR_NETX_TX_FRAGS, h->nfrags);
done:
	dev_consume_skb_any(skb);
	tbr_link_put(priv->pend_link);
	priv->pend = NULL;
	priv->pend_link = NULL;
}

/*
 * Send @skb to @link as fragments; @link's reference is taken over.
 * tbrN's TX lock held (ndo_start_xmit), no packet pending.
 */
void tbr_netx_xmit(struct net_device *ndev, struct tbr_link *link,
		   struct sk_buff *skb)
{
	struct tbr_netdev_priv *priv = tbr_netdev_priv(ndev);
	struct tbr_netx_hdr *h = &priv->pend_hdr;
	struct skb_shared_info *sh = skb_shinfo(skb);
	struct tbr_netx_link *nl;
	u32 frame, fsz;

	nl = xa_load(&priv->netx, link->id);
	frame = min_t(u32, tbr_link_max_frame(link), TBR_NETX_FRAME);
	if (!nl || skb->len > TBR_NETX_PKT_MAX || frame <= TBR_NETX_HDR_LEN)
		goto drop;
	fsz = frame - TBR_NETX_HDR_LEN;
	if (DIV_ROUND_UP(skb->len, fsz) > TBR_NETX_FRAGS_MAX)
		goto drop;	/* a link of frames under 1 KiB: none seen */
	memset(h, 0, sizeof(*h));
	h->version = TBR_NETX_VERSION;
	h->nfrags = DIV_ROUND_UP(skb->len, fsz);
	h->seq = cpu_to_be32(nl->tx_seq++);
	h->len = cpu_to_be32(skb->len);
	h->frag_size = cpu_to_be16(fsz);
	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		h->flags |= TBR_NETX_F_CSUM;
		h->csum_start = cpu_to_be16(skb_checksum_start_offset(skb));
		h->csum_offset = cpu_to_be16(skb->csum_offset);
	}
	if (skb_is_gso(skb)) {
		if (!(h->flags & TBR_NETX_F_CSUM))
			goto drop;
		if (sh->gso_type & SKB_GSO_TCPV4)
			h->gso_type = TBR_NETX_GSO_TCPV4;
		else if (sh->gso_type & SKB_GSO_TCPV6)
			h->gso_type = TBR_NETX_GSO_TCPV6;
		else
			goto drop;	/* not offered (tbr_netdev_setup) */
		if (sh->gso_type & SKB_GSO_TCP_ECN)
			h->gso_type |= TBR_NETX_GSO_ECN;
		h->gso_size = cpu_to_be16(sh->gso_size);
	}
	priv->pend = skb;
	priv->pend_link = link;
	priv->pend_frag = 0;
	tbr_netx_push(ndev, priv);
	return;

drop:
	ndev->stats.tx_dropped++;
	dev_kfree_skb_any(skb);
	tbr_link_put(link);
}

/*
 * TX descriptors came free on @link: the pending packet goes on, and the
 * queue wakes once it is out. Context "bh".
 */
void tbr_netx_tx_ready(struct net_device *ndev, struct tbr_link *link)
{
	struct tbr_netdev_priv *priv = tbr_netdev_priv(ndev);
	struct netdev_queue *txq = netdev_get_tx_queue(ndev, 0);

	if (!netif_running(ndev) || !netif_queue_stopped(ndev))
		return;
	__netif_tx_lock(txq, smp_processor_id());
	if (priv->pend && priv->pend_link == link)
		tbr_netx_push(ndev, priv);
	if (!priv->pend)
		netif_wake_queue(ndev);
	__netif_tx_unlock(txq);
}

/* ---- receive ------------------------------------------------------------- */

/* A packet of @len bytes: linear when small, else in whole pages. */
static struct sk_buff *tbr_netx_skb_alloc(struct net_device *ndev, u32 len)
{
	struct sk_buff *skb;
	struct page *page;
	u32 i, n;

	if (len <= 256) {
		skb = netdev_alloc_skb_ip_align(ndev, len);
		if (skb)
			skb_put(skb, len);
		return skb;
	}
	skb = netdev_alloc_skb(ndev, 256);
	if (!skb)
		return NULL;
	for (i = 0; i * PAGE_SIZE < len; i++) {
		page = dev_alloc_page();
		if (!page) {
			kfree_skb(skb);
			return NULL;
		}
		n = min_t(u32, PAGE_SIZE, len - i * PAGE_SIZE);
		skb_fill_page_desc(skb, i, page, 0, n);
		skb->truesize += PAGE_SIZE;
	}
	skb->len = len;
	skb->data_len = len;
	return skb;
}

static void tbr_netx_copy(struct sk_buff *skb, u32 off, const u8 *src, u32 n)
{
	const skb_frag_t *f;
	u32 po, c;

	if (!skb_is_nonlinear(skb)) {
		memcpy(skb->data + off, src, n);
		return;
	}
	while (n) {		/* the head is empty, frag i is page i */
		f = &skb_shinfo(skb)->frags[off / PAGE_SIZE];
		po = off % PAGE_SIZE;
		c = min_t(u32, n, PAGE_SIZE - po);
		memcpy(page_address(skb_frag_page(f)) + po, src, c);
		off += c;
		src += c;
		n -= c;
	}
}

/* The offloads of @h onto @skb (an Ethernet frame at skb->data): 0 or -EINVAL. */
static int tbr_netx_offloads(struct sk_buff *skb, const struct tbr_netx_frag *h)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	u32 start = h->csum_start;
	u32 off = h->csum_offset;
	u32 type = h->gso_type & ~TBR_NETX_GSO_ECN;

	if (h->flags & TBR_NETX_F_CSUM) {
		if (start + off + sizeof(__sum16) > skb->len ||
		    !pskb_may_pull(skb, start + off + sizeof(__sum16)) ||
		    !skb_partial_csum_set(skb, start, off))
			return -EINVAL;
	}
	if (!h->gso_size)
		return 0;
	if (!(h->flags & TBR_NETX_F_CSUM) ||
	    (type != TBR_NETX_GSO_TCPV4 && type != TBR_NETX_GSO_TCPV6))
		return -EINVAL;
	sh->gso_size = h->gso_size;
	sh->gso_type = (type == TBR_NETX_GSO_TCPV4 ? SKB_GSO_TCPV4 : SKB_GSO_TCPV6) |
		       (h->gso_type & TBR_NETX_GSO_ECN ? SKB_GSO_TCP_ECN : 0) |
		       SKB_GSO_DODGY;	/* the stack checks the headers */
	sh->gso_segs = 0;
	return 0;
}

static int tbr_netx_poll(struct napi_struct *napi, int budget)
{
	struct tbr_netdev_priv *priv = container_of(napi, struct tbr_netdev_priv, napi);
	struct sk_buff *skb;
	int done = 0;

	while (done < budget && (skb = skb_dequeue(&priv->rxq))) {
		tbr_netx_deliver_one(napi->dev, skb);
		done++;
	}
	if (done < budget)
		napi_complete_done(napi, done);
	return done;
}

/*
 * The packets @nl's window released (@q) after those released before:
 * nl->lock held, so the order is the window's.
 */
static void tbr_netx_release(struct tbr_netdev_priv *priv, struct tbr_netx_link *nl,
			     struct sk_buff_head *q)
{
	struct sk_buff *skb;

	if (skb_queue_empty(q))
		return;
	skb_queue_walk(q, skb) {
		tbr_netx_cb(skb)->src = nl->peer_guid;
		tbr_netx_cb(skb)->whole = false;
	}
	spin_lock(&priv->rxq.lock);
	skb_queue_splice_tail_init(q, &priv->rxq);
	spin_unlock(&priv->rxq.lock);
}

void tbr_netx_rx_one(struct net_device *ndev, struct sk_buff *skb)
{
	struct tbr_netdev_priv *priv = tbr_netdev_priv(ndev);

	tbr_netx_cb(skb)->whole = true;
	skb_queue_tail(&priv->rxq, skb);
	napi_schedule(&priv->napi);
}

/* what the core's reassembly calls back, for one link under its lock */
struct tbr_netx_ctx {
	struct net_device *ndev;
	struct tbr_netdev_priv *priv;
	struct sk_buff_head q;		/* packets handed up, in order */
};

static void *tbr_netx_op_alloc(void *ctx, u32 len)
{
	struct tbr_netx_ctx *c = ctx;
	struct sk_buff *skb = tbr_netx_skb_alloc(c->ndev, len);

	if (!skb)
		c->ndev->stats.rx_dropped++;	/* given up later */
	return skb;
}

static void tbr_netx_op_copy(void *ctx, void *pkt, u32 off, const u8 *src, u32 n)
{
	tbr_netx_copy(pkt, off, src, n);
}

static int tbr_netx_op_finish(void *ctx, void *pkt, const struct tbr_netx_frag *f)
{
	return tbr_netx_offloads(pkt, f);
}

static void tbr_netx_op_deliver(void *ctx, void *pkt)
{
	__skb_queue_tail(&((struct tbr_netx_ctx *)ctx)->q, pkt);
}

static void tbr_netx_op_drop(void *ctx, void *pkt)
{
	kfree_skb(pkt);
}

static void tbr_netx_op_count(void *ctx, enum tbr_netx_cnt c, u32 n)
{
	tbr_netx_count(((struct tbr_netx_ctx *)ctx)->priv, c, n);
}

static const struct tbr_netx_ops tbr_netx_ops = {
	.alloc = tbr_netx_op_alloc,
	.copy = tbr_netx_op_copy,
	.finish = tbr_netx_op_finish,
	.deliver = tbr_netx_op_deliver,
	.drop = tbr_netx_op_drop,
	.count = tbr_netx_op_count,
};

static void tbr_netx_ctx_init(struct tbr_netx_ctx *c, struct net_device *ndev)
{
	c->ndev = ndev;
	c->priv = tbr_netdev_priv(ndev);
	__skb_queue_head_init(&c->q);
}

/* the core's clock: ms */
static u64 tbr_netx_now(void)
{
	return jiffies64_to_msecs(get_jiffies_64());
}

/* Look at @nl again at @when (ms; 0: nothing waits). nl->lock held. */
static void tbr_netx_arm(struct tbr_netx_link *nl, u64 when, u64 now)
{
	if (!when)
		return;
	mod_timer(&nl->timer, jiffies + max_t(unsigned long, 1,
					      msecs_to_jiffies(when - now)));
}

/* Which rails of @link are up and how many frames each received. Any context. */
static u32 tbr_netx_rails_read(struct tbr_link *link, u64 *frames)
{
	struct tbr_rail *rail;
	unsigned long flags;
	u32 r, up = 0;

	spin_lock_irqsave(&link->lock, flags);
	for (r = 0; r < TBR_LINK_MAX_RAILS; r++) {
		rail = link->rails[r];
		frames[r] = 0;
		if (!rail || !rail->up)
			continue;
		up |= 1U << r;
		frames[r] = atomic64_read(&rail->cnt[TBR_CNT_RX_FRAMES]);
	}
	spin_unlock_irqrestore(&link->lock, flags);
	return up;
}

/*
 * The rails sampled (a rail silent since the last look), then what the
 * rule gives up now is given up. Context: timer (softirq).
 */
static void tbr_netx_timer(struct timer_list *t)
{
	struct tbr_netx_link *nl = from_timer(nl, t, timer);
	u64 frames[TBR_NETX_RAILS] = { 0 };
	struct tbr_netx_ctx c;
	u64 now;
	u32 up;

	/* nl->link lives until after tbr_netx_link_free() stops this timer */
	up = tbr_netx_rails_read(nl->link, frames);
	tbr_netx_ctx_init(&c, nl->ndev);
	spin_lock_bh(&nl->lock);
	if (!nl->dead) {
		now = tbr_netx_now();
		tbr_netx_win_sample(&nl->win, up, frames, now);
		tbr_netx_arm(nl, tbr_netx_win_tick(&nl->win, now, &tbr_netx_ops, &c), now);
		tbr_netx_release(c.priv, nl, &c.q);
	}
	spin_unlock_bh(&nl->lock);
	napi_schedule(&c.priv->napi);
}

/*
 * A fragment frame (@data, @len bytes) from @src arrived on rail index
 * @rail of @link. Context "bh"; @data is valid only during the call.
 */
void tbr_netx_rx(struct net_device *ndev, struct tbr_link *link, u32 rail, u64 src,
		 const void *data, u32 len)
{
	struct tbr_netdev_priv *priv = tbr_netdev_priv(ndev);
	struct tbr_netx_link *nl;
	struct tbr_netx_frag f;
	struct tbr_netx_ctx c;
	u64 now;

	nl = xa_load(&priv->netx, link->id);
	if (!nl || src != link->peer_guid || tbr_netx_parse(data, len, &f)) {
		tbr_netx_count(priv, TBR_NETX_RX_BAD, 1);
		ndev->stats.rx_errors++;
		return;
	}
	tbr_netx_ctx_init(&c, ndev);
	spin_lock(&nl->lock);
	if (!nl->dead) {
		now = tbr_netx_now();
		tbr_netx_win_rx(&nl->win, &f, (const u8 *)data + TBR_NETX_HDR_LEN, rail, now,
				&tbr_netx_ops, &c);
		if (!timer_pending(&nl->timer))
			tbr_netx_arm(nl, tbr_netx_win_when(&nl->win, now), now);
		tbr_netx_release(priv, nl, &c.q);
	}
	spin_unlock(&nl->lock);
	napi_schedule(&priv->napi);
}

/* ---- per link state ------------------------------------------------------ */

/* The pending packet, if to @link (NULL: any), is dropped. Context "process". */
static void tbr_netx_tx_flush(struct net_device *ndev, struct tbr_link *link)
{
	struct tbr_netdev_priv *priv = tbr_netdev_priv(ndev);

	netif_tx_lock_bh(ndev);
	if (priv->pend && (!link || priv->pend_link == link)) {
		ndev->stats.tx_dropped++;
		dev_kfree_skb_any(priv->pend);
		tbr_link_put(priv->pend_link);
		priv->pend = NULL;
		priv->pend_link = NULL;
	}
	if (!priv->pend && netif_running(ndev))
		netif_wake_queue(ndev);
	netif_tx_unlock_bh(ndev);
}

/* Every packet of @nl's window dropped. nl->lock held. */
static void tbr_netx_reset_locked(struct tbr_netx_link *nl)
{
	struct tbr_netx_ctx c;

	tbr_netx_ctx_init(&c, nl->ndev);
	tbr_netx_win_reset(&nl->win, &tbr_netx_ops, &c);
}

static void tbr_netx_link_free(struct tbr_netx_link *nl)
{
	spin_lock_bh(&nl->lock);
	nl->dead = true;
	tbr_netx_reset_locked(nl);
	spin_unlock_bh(&nl->lock);
	del_timer_sync(&nl->timer);
	kvfree_rcu(nl, rcu);
}

/*
 * A rail link came up (its first rail), went down (its last) or goes.
 * Context "process", tbr_ctl_mutex held.
 */
void tbr_netx_link_event(struct net_device *ndev, struct tbr_link *link,
			 enum tbr_obs_event ev)
{
	struct tbr_netdev_priv *priv = tbr_netdev_priv(ndev);
	struct tbr_netx_link *nl = xa_load(&priv->netx, link->id);
	u64 frames[TBR_NETX_RAILS];
	u32 up;

	switch (ev) {
	case TBR_OBS_UP:
		if (nl)
			break;
		nl = kvzalloc(sizeof(*nl), GFP_KERNEL);
		if (!nl)
			break;	/* the link carries one frame per packet */
		nl->ndev = ndev;
		nl->link = link;
		nl->peer_guid = link->peer_guid;
		tbr_netx_win_init(&nl->win);
		/* the rails up before us (the first one's rail event came first) */
		up = tbr_netx_rails_read(link, frames);
		tbr_netx_win_sample(&nl->win, up, frames, tbr_netx_now());
		spin_lock_init(&nl->lock);
		timer_setup(&nl->timer, tbr_netx_timer, 0);
		if (xa_err(xa_store(&priv->netx, link->id, nl, GFP_KERNEL)))
			kvfree(nl);
		break;
	case TBR_OBS_DOWN:
		if (nl) {	/* the peer may be a new one next time */
			spin_lock_bh(&nl->lock);
			tbr_netx_reset_locked(nl);
			spin_unlock_bh(&nl->lock);
		}
		tbr_netx_tx_flush(ndev, link);
		break;
	case TBR_OBS_DEL:
		tbr_netx_tx_flush(ndev, link);
		nl = xa_erase(&priv->netx, link->id);
		if (nl)
			tbr_netx_link_free(nl);
		break;
	default:
		break;
	}
}

/*
 * Rail index @rail of @link came up or went down. Down: what was in flight
 * on it is lost, so the packets seen so far that are still incomplete
 * TBR_NETX_CUT_MS from now are given up then (sooner if the other rails
 * moved past them). Context "process".
 */
void tbr_netx_rail_event(struct net_device *ndev, struct tbr_link *link, u32 rail,
			 bool up)
{
	struct tbr_netx_link *nl = xa_load(&tbr_netdev_priv(ndev)->netx, link->id);
	u64 now;

	if (!nl)
		return;
	spin_lock_bh(&nl->lock);
	if (!nl->dead) {
		now = tbr_netx_now();
		if (up) {
			tbr_netx_win_rail_up(&nl->win, rail);
		} else {
			tbr_netx_win_rail_down(&nl->win, rail, now);
			tbr_netx_arm(nl, tbr_netx_win_when(&nl->win, now), now);
		}
	}
	spin_unlock_bh(&nl->lock);
}

void tbr_netx_init(struct net_device *ndev)
{
	struct tbr_netdev_priv *priv = tbr_netdev_priv(ndev);

	xa_init(&priv->netx);
	skb_queue_head_init(&priv->rxq);
	netif_napi_add(ndev, &priv->napi, tbr_netx_poll);
}

/* ndo_open, ndo_stop (RTNL) */
int tbr_netx_open(struct net_device *ndev)
{
	napi_enable(&tbr_netdev_priv(ndev)->napi);
	netif_start_queue(ndev);
	return 0;
}

int tbr_netx_stop(struct net_device *ndev)
{
	struct tbr_netdev_priv *priv = tbr_netdev_priv(ndev);

	netif_stop_queue(ndev);
	tbr_netx_tx_flush(ndev, NULL);	/* not running: the queue stays stopped */
	napi_disable(&priv->napi);
	skb_queue_purge(&priv->rxq);
	return 0;
}

/* Context "process": tbrN is unregistered. */
void tbr_netx_fini(struct net_device *ndev)
{
	struct tbr_netdev_priv *priv = tbr_netdev_priv(ndev);
	struct tbr_netx_link *nl;
	unsigned long id;

	tbr_netx_tx_flush(ndev, NULL);
	xa_for_each(&priv->netx, id, nl) {
		xa_erase(&priv->netx, id);
		tbr_netx_link_free(nl);
	}
	xa_destroy(&priv->netx);
	netif_napi_del(&priv->napi);
	skb_queue_purge(&priv->rxq);
}
