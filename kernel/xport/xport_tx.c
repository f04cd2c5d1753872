// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: where a QP's frames go (xport.c's transmit side): the link of a
 * connected QP or of a UD address handle, the core's tx_alloc/tx_send/
 * tx_abort callbacks, multicast copies, and the address block a UD send
 * carries ahead of its payload (docs/protocol.md). Context: qp->lock held,
 * unless a function says otherwise.
 */
#include <linux/etherdevice.h>
#include <net/addrconf.h>

#include "link/link.h"
#include "tbrdma.h"
#include "core/tbr_core.h"
#include "xport/xport.h"

/*
 * The link to the device whose tbrN has MAC @mac: our own loopback link
 * (loop.c) for our own MAC, else the link to the peer whose GUID is the
 * MAC's EUI-64 (a neighbour's, or the routed link to a far host: route.c),
 * or NULL (no route). A reference is taken. Context: any.
 */
static struct tbr_link *tbr_x_link_by_mac(struct tbr_dev *tdev, const u8 *mac)
{
	__be64 guid;

	if (ether_addr_equal(mac, tdev->netdev->dev_addr))
		return tbr_loop_get(tdev);
	addrconf_addr_eui48((u8 *)&guid, mac);
	return tbr_link_get_route(tdev, be64_to_cpu(guid));	/* or routed */
}

struct tbr_link *tbr_x_link(struct tbr_xqp *x)
{
	if (x->ud)	/* set per WR from its address handle */
		return x->link;
	if (x->link && !READ_ONCE(x->link->gone))
		return x->link;
	if (x->link)
		tbr_link_put(x->link);	/* its cable is gone; a new one may exist */
	x->link = tbr_x_link_by_mac(xqp_dev(x), x->qp->av.dmac);
	return x->link;
}

/*
 * The core found no TX room on x->link: wait on the device's list of
 * stalled QPs for that link's tx_ready. Context: qp->lock held.
 */
void tbr_x_stall(struct tbr_xqp *x)
{
	struct tbr_dev *tdev = xqp_dev(x);

	x->stalled = true;
	spin_lock(&tdev->xstall_lock);
	if (list_empty(&x->stall_node))
		list_add_tail(&x->stall_node, &tdev->xstalled);
	spin_unlock(&tdev->xstall_lock);
}

/* Off the stalled list again (the retry got a frame). qp->lock held. */
void tbr_x_unstall(struct tbr_xqp *x)
{
	struct tbr_dev *tdev = xqp_dev(x);

	x->stalled = false;
	spin_lock(&tdev->xstall_lock);
	list_del_init(&x->stall_node);
	spin_unlock(&tdev->xstall_lock);
}

/*
 * A frame that cannot leave because no rail reaches the peer (no link to
 * it, its link went away, or no rail of it is up or carries the frame) is
 * built into txvoid and dropped, as a cable that is unplugged or a network
 * with no route would: UD and UC lose it, RC retransmits it on its timer and
 * completes with RETRY_EXC_ERR once the retry budget is spent (never waits
 * forever). Full rings are no loss: the core stops (tx_ready resumes it).
 */
void *tbr_x_tx_alloc(void *ctx, u32 len)
{
	struct tbr_xqp *x = ctx;
	struct tbr_link *link = tbr_x_link(x);
	void *buf;

	if (!link || READ_ONCE(link->gone))
		return x->txvoid;
	buf = tbr_link_tx_alloc(link, len);
	if (IS_ERR(buf) && PTR_ERR(buf) == -ENOBUFS) {
		/*
		 * On the stalled list before trying again: a tx_ready that
		 * ran since the first try found the ring with room, so this
		 * one gets a frame; if it does not, the link is marked
		 * stalled again and its next tx_ready finds the QP listed.
		 */
		tbr_x_stall(x);
		buf = tbr_link_tx_alloc(link, len);
		if (!IS_ERR(buf) || PTR_ERR(buf) != -ENOBUFS)
			tbr_x_unstall(x);
	}
	if (IS_ERR(buf))
		return PTR_ERR(buf) == -ENOBUFS ? NULL : x->txvoid;
	x->tx_buf = buf;
	return buf;
}

/* a copy of @frame to @link; a full ring or a rail too small loses it (UD) */
static void tbr_x_tx_copy(struct tbr_link *link, const void *frame, u32 len)
{
	void *buf;

	if (READ_ONCE(link->gone) || len > tbr_link_max_frame(link))
		return;
	buf = tbr_link_tx_alloc(link, len);
	if (IS_ERR(buf))
		return;
	memcpy(buf, frame, len);
	tbr_link_tx_send(link, buf, len);
}

/*
 * A multicast datagram (built in txvoid): a copy to every peer the device
 * has a link to and one to the device itself, where it reaches the QPs
 * attached to its group (mcast.c).
 */
static void tbr_x_tx_mcast(struct tbr_xqp *x, const void *frame, u32 len)
{
	struct tbr_dev *tdev = xqp_dev(x);
	struct tbr_link *link;

	rcu_read_lock();
	list_for_each_entry_rcu(link, &tdev->rails.links, node)
		tbr_x_tx_copy(link, frame, len);
	rcu_read_unlock();
	link = tbr_loop_get(tdev);
	if (link) {
		tbr_x_tx_copy(link, frame, len);
		tbr_link_put(link);
	}
}

void tbr_x_tx_send(void *ctx, void *frame, u32 len)
{
	struct tbr_xqp *x = ctx;

	x->tx_buf = NULL;
	if (frame != x->txvoid)
		tbr_link_tx_send(x->link, frame, len);
	else if (x->mcast)
		tbr_x_tx_mcast(x, frame, len);
}

void tbr_x_tx_abort(void *ctx, void *frame)
{
	struct tbr_xqp *x = ctx;

	x->tx_buf = NULL;
	if (frame != x->txvoid)
		tbr_link_tx_abort(x->link, frame);
}

/*
 * UD/GSI: resolve @w's address handle, switch the QP's link to its peer
 * (only when the core holds no WR for the previous one), and put the address
 * block in front of the payload (a pseudo SGE, or the inline bytes @ibuf).
 * Returns 0, TBR_X_HOLD (retry when the core drained) or -IB_WC_* to fail
 * the WQE with.
 */
int tbr_x_ud_route(struct tbr_xqp *x, const struct tbr_send_wqe *w,
		     struct tbr_send_wr *wr, struct tbr_sge *sgl, u8 *ibuf)
{
	struct tbr_qp *qp = x->qp;
	struct tbr_dev *tdev = xqp_dev(x);
	u32 slot = x->sent_head & qp->sq.mask;
	struct tbr_link *link;
	struct tbr_ah_av av;
	u64 len = 0;
	u32 i, qkey;
	bool mcast;
	u8 *b;

	if (tbr_ah_get_av(tdev, w->hdr.ah_num, qp->ibqp.pd, &av))
		return -IB_WC_LOC_QP_OP_ERR;
	if (wr->flags & TBR_WR_INLINE) {
		len = wr->inline_len;
	} else {
		for (i = 0; i < wr->num_sge; i++) {
			if (sgl[i].lkey == TBR_UDA_LKEY)
				return -IB_WC_LOC_PROT_ERR;
			len += sgl[i].length;
		}
		if (wr->num_sge >= TBR_MAX_SGE)
			return -IB_WC_LOC_LEN_ERR;
	}
	if (len + TBR_UD_ADDR_LEN > TBR_XPORT_MTU)
		return -IB_WC_LOC_LEN_ERR;
	/* a multicast group: every link (tbr_x_tx_mcast), no single one */
	mcast = tbr_gid_is_mcast(&av.dgid);
	link = mcast ? NULL : tbr_x_link_by_mac(tdev, av.dmac);	/* ours: loopback */
	/* a datagram larger than the link's frames could never leave */
	if (link && len + TBR_UD_ADDR_LEN + TBR_HDR_MAX > tbr_link_max_frame(link)) {
		tbr_link_put(link);
		return -IB_WC_LOC_LEN_ERR;
	}
	if (link != x->link || !link || mcast != x->mcast) {
		if (x->sent_head != x->sent_tail) {
			if (link)
				tbr_link_put(link);
			return TBR_X_HOLD;
		}
		if (x->link)
			tbr_link_put(x->link);
		x->link = link;
		x->mcast = mcast;
	} else {
		tbr_link_put(link);	/* x->link holds one already */
	}

	b = x->uda[slot];
	memcpy(b, av.sgid.raw, 16);
	memcpy(b + 16, av.dgid.raw, 16);
	b[32] = 0;
	b[33] = (av.flow_label >> 16) & 0x0f;
	b[34] = av.flow_label >> 8;
	b[35] = av.flow_label;
	b[36] = av.traffic_class;
	b[37] = av.hop_limit;
	b[38] = 0;
	b[39] = 0;
	if (wr->flags & TBR_WR_INLINE) {
		memcpy(ibuf, b, TBR_UD_ADDR_LEN);
		if (wr->inline_len)
			memcpy(ibuf + TBR_UD_ADDR_LEN, wr->inline_data,
			       wr->inline_len);
		wr->inline_data = ibuf;
		wr->inline_len += TBR_UD_ADDR_LEN;
	} else {
		memmove(sgl + 1, sgl, wr->num_sge * sizeof(*sgl));
		sgl[0].addr = slot;
		sgl[0].length = TBR_UD_ADDR_LEN;
		sgl[0].lkey = TBR_UDA_LKEY;
		wr->sgl = sgl;
		wr->num_sge++;
	}
	/* IBTA: a Q_Key with the high bit set means the QP's own */
	qkey = w->hdr.remote_qkey;
	if (qkey & 0x80000000u)
		qkey = qp->attr.qkey;
	wr->remote_qkey = qkey;
	wr->remote_qpn = w->hdr.remote_qpn;
	wr->pkey_index = w->hdr.pkey_index;
	return 0;
}
