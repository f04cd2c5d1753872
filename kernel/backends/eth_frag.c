// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: eth rails, the frames on the wire: the skb every eth frame is
 * built in (a rail frame's page given to it, not copied), the bundles
 * (more frames behind the first in one packet, to a peer that takes them),
 * and fragmentation of rail frames larger than the MTU (their reassembly
 * is eth_rx.c's).
 *
 * A rail negotiates its frame size from both MTUs (eth.c). The connections
 * made on a link keep the frame size they got at RTR (the transport ties a
 * packet's PSN to its offset, so a retransmission cannot be cut smaller),
 * so after an MTU shrink a rail keeps taking frames up to 4096 bytes
 * (rail->tx_max) if the peer reassembles (TBR_ETH_REASSEMBLES in its
 * hellos): a frame above the negotiated size goes out as FRAG frames of at
 * most that size, back to back and in order from the rail's one TX tasklet.
 * The receiver reassembles one frame at a time per peer
 * (tbr_eth_reasm_add(), kernel/core/tbr_eth_wire.c); a gap or an
 * inconsistent piece drops the partial frame (counted in frag_drops) and
 * the transport resends it. Wire format: docs/protocol.md, docs/eth.md.
 *
 * Context: tbe_frame_skb(), tbe_bundle_skb() and tbe_frag_skbs() run
 * from the peer's TX tasklet (softirq).
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>

#include "tbrdma.h"
#include "link/rail.h"
#include "backends/eth.h"

/* The frame code of rail frame @f, as our header carries it: in both nibbles (docs/eth.md). */
static u8 tbe_pdf(const struct tbr_frame *f)
{
	return (f->eof << 4) | (f->eof & 0xf);
}

/* Our header at @p: from @bind's device to @dst, announcing @len bytes. */
static void tbe_hdr(u8 *p, struct tbe_bind *bind, u8 type, u64 dst, u8 pdf, u32 len)
{
	struct tbr_eth_hdr h = {
		.version = TBR_ETH_VERSION,
		.type = type,
		.pdf = pdf,
		.len = len,
		.src = bind->guid,
		.dst = dst,
	};

	tbr_eth_hdr_build(p, &h);
}

/*
 * An skb to @dst_mac: our header announcing @sublen + @len bytes, @sublen
 * bytes of @sub (or none), and room for @room more bytes in its head.
 */
static struct sk_buff *tbe_skb_head(struct tbe_bind *bind, const u8 *dst_mac, u8 type,
				    u64 dst, u8 pdf, const void *sub, u32 sublen, u32 len,
				    u32 room, gfp_t gfp)
{
	struct net_device *dev = bind->dev;
	struct sk_buff *skb;

	skb = alloc_skb(LL_RESERVED_SPACE(dev) + TBR_ETH_HDR_LEN + sublen + room +
			dev->needed_tailroom, gfp);
	if (!skb)
		return NULL;
	skb_reserve(skb, LL_RESERVED_SPACE(dev));
	skb_reset_network_header(skb);
	tbe_hdr(skb_put(skb, TBR_ETH_HDR_LEN), bind, type, dst, pdf, sublen + len);
	if (sublen)
		skb_put_data(skb, sub, sublen);
	skb->dev = dev;
	skb->protocol = htons(TBR_ETH_P);
	if (dev_hard_header(skb, dev, TBR_ETH_P, dst_mac, NULL, sublen + len) < 0) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/* An skb to @dst_mac: our header, @sublen bytes of @sub (or none), @data. */
struct sk_buff *tbe_skb(struct tbe_bind *bind, const u8 *dst_mac, u8 type, u64 dst,
			u8 pdf, const void *sub, u32 sublen, const void *data, u32 len,
			gfp_t gfp)
{
	struct sk_buff *skb;

	skb = tbe_skb_head(bind, dst_mac, type, dst, pdf, sub, sublen, len, len, gfp);
	if (skb)
		skb_put_data(skb, data, len);
	return skb;
}

/*
 * The skb of rail frame @f (at most the negotiated frame size) to @dst_mac.
 * A frame of TBE_TX_PAGE_MIN bytes or more is not copied: its page becomes
 * the skb's one fragment, and a new page takes its place in the frame
 * (tbr_rail_frame_give_page()), so the frame may be reused at once while
 * the skb goes its way. Smaller frames, a device that cannot gather, or no
 * free page: copied into the skb's head. Context: softirq (TX tasklet).
 */
struct sk_buff *tbe_frame_skb(struct tbe_bind *bind, const u8 *dst_mac, u64 dst,
			      struct tbr_frame *f)
{
	u8 pdf = tbe_pdf(f);
	struct page *page = NULL;
	struct sk_buff *skb;

	if (f->size >= TBE_TX_PAGE_MIN && (bind->dev->features & NETIF_F_SG))
		page = tbr_frame_page_alloc(GFP_ATOMIC | __GFP_NOWARN);
	if (!page)
		return tbe_skb(bind, dst_mac, TBR_ETH_FRAME, dst, pdf, NULL, 0, f->buf,
			       f->size, GFP_ATOMIC);
	skb = tbe_skb_head(bind, dst_mac, TBR_ETH_FRAME, dst, pdf, NULL, 0, f->size, 0,
			   GFP_ATOMIC);
	if (!skb) {
		put_page(page);
		return NULL;
	}
	skb_fill_page_desc(skb, 0, virt_to_page(f->buf), offset_in_page(f->buf), f->size);
	skb->len += f->size;
	skb->data_len += f->size;
	skb->truesize += PAGE_SIZE << TBR_FRAME_ORDER;
	tbr_rail_frame_give_page(f, page);
	return skb;
}

/*
 * Append frame @f to the bundle @skb in fragments: its header in a page
 * fragment of its own, followed there by a frame under TBE_TX_PAGE_MIN
 * bytes (copied); a larger frame's page is given to the skb as
 * tbe_frame_skb() does. False without memory.
 */
static bool tbe_bundle_frag(struct sk_buff *skb, struct tbe_bind *bind, u64 dst,
			    struct tbr_frame *f)
{
	u32 copy = f->size < TBE_TX_PAGE_MIN ? f->size : 0;
	struct page *page = NULL, *hpage;
	u8 *p;

	if (!copy) {
		page = tbr_frame_page_alloc(GFP_ATOMIC | __GFP_NOWARN);
		if (!page)
			return false;
	}
	p = netdev_alloc_frag(TBR_ETH_HDR_LEN + copy);
	if (!p) {
		if (page)
			put_page(page);
		return false;
	}
	tbe_hdr(p, bind, TBR_ETH_FRAME, dst, tbe_pdf(f), f->size);
	memcpy(p + TBR_ETH_HDR_LEN, f->buf, copy);
	hpage = virt_to_head_page(p);
	skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, hpage, p - (u8 *)page_address(hpage),
			TBR_ETH_HDR_LEN + copy, SKB_DATA_ALIGN(TBR_ETH_HDR_LEN + copy));
	if (page) {
		skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, virt_to_page(f->buf),
				offset_in_page(f->buf), f->size, PAGE_SIZE << TBR_FRAME_ORDER);
		tbr_rail_frame_give_page(f, page);
	}
	return true;
}

/*
 * The skb of a bundle to @dst_mac: frame @f, then the frames of @more (at
 * most TBE_BUNDLE_MAX, none above the negotiated frame size, all records
 * within the bundle size both ends take and, for a netdev that cannot
 * gather, TBE_BUNDLE_LINEAR_MAX), in their order. A netdev that gathers
 * gets them in fragments (tbe_bundle_frag()); any other, all copied into
 * one head. *@sent: how many of @more went in; the first that found no
 * memory ends the bundle (the caller counts the rest as drops). NULL: not
 * even @f's skb. The frames stay on @more, the caller's to complete.
 * Context: softirq (TX tasklet).
 */
struct sk_buff *tbe_bundle_skb(struct tbe_bind *bind, const u8 *dst_mac, u64 dst,
			       struct tbr_frame *f, struct list_head *more,
			       unsigned int *sent)
{
	struct sk_buff *skb;
	struct tbr_frame *g;
	u32 rest = 0;

	*sent = 0;
	if (bind->dev->features & NETIF_F_SG) {
		skb = tbe_frame_skb(bind, dst_mac, dst, f);
		if (!skb)
			return NULL;
		list_for_each_entry(g, more, list) {
			if (!tbe_bundle_frag(skb, bind, dst, g))
				break;
			(*sent)++;
		}
		return skb;
	}
	list_for_each_entry(g, more, list)
		rest += TBR_ETH_HDR_LEN + g->size;
	skb = tbe_skb_head(bind, dst_mac, TBR_ETH_FRAME, dst, tbe_pdf(f), NULL, 0, f->size,
			   f->size + rest, GFP_ATOMIC | __GFP_NOWARN);
	if (!skb)	/* no head that large: @f alone */
		return tbe_frame_skb(bind, dst_mac, dst, f);
	skb_put_data(skb, f->buf, f->size);
	list_for_each_entry(g, more, list) {
		tbe_hdr(skb_put(skb, TBR_ETH_HDR_LEN), bind, TBR_ETH_FRAME, dst, tbe_pdf(g),
			g->size);
		skb_put_data(skb, g->buf, g->size);
		(*sent)++;
	}
	return skb;
}

/*
 * The skbs of @f (f->size > @frame) to @mac in pieces of at most @frame
 * bytes with their fragment header, as frame number @id, queued on @q in
 * order: all are built before the first goes out (eth_tx.c sends them in
 * one run, softirq: no receive runs in between, so they reach the
 * receiver's backlog back to back). 0, or -ENOMEM with @q empty.
 */
int tbe_frag_skbs(struct tbe_peer *peer, struct tbr_frame *f, const u8 *mac, u32 frame,
		  u16 id, struct sk_buff_head *q)
{
	struct tbr_eth_frag fr = { .id = id, .total = f->size };
	u32 chunk = frame - TBR_ETH_FRAG_HDR_LEN, off;
	u8 pdf = tbe_pdf(f);
	u8 fh[TBR_ETH_FRAG_HDR_LEN];
	struct sk_buff *skb;

	__skb_queue_head_init(q);
	for (off = 0; off < f->size; off += chunk) {
		fr.offset = off;
		tbr_eth_frag_build(fh, &fr);
		skb = tbe_skb(peer->bind, mac, TBR_ETH_FRAG, peer->guid, pdf, fh, sizeof(fh),
			      f->buf + off, min(chunk, f->size - off), GFP_ATOMIC);
		if (!skb) {
			__skb_queue_purge(q);
			return -ENOMEM;
		}
		__skb_queue_tail(q, skb);
	}
	return 0;
}
