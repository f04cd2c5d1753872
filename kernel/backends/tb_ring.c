// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the tb backend's data path. One TX and one RX NHI ring per rail in
 * frame mode; the rail ops translate the rail layer's tbr_frame into a
 * ring_frame (DMA-mapped once, at setup), with SOF PDF TBT_PDF_SOF and the
 * frame's code as EOF PDF (a real NHI closes a frame at the first transport
 * packet whose PDF is in the receiver's eof_mask: tb_priv.h). TX completions
 * come from the NHI's ring work (process context) and are handed on with BH
 * disabled; RX runs in
 * poll mode (a tasklet, TBT_POLL_BUDGET frames a run, the interrupt re-armed
 * when the ring is empty). Setup and teardown of a negotiated conn's rails
 * (tb.c negotiates). Runs on Thunderbolt hardware and, in the VM tests, on
 * the stand-in tests/tbsim (docs/thunderbolt.md, docs/testing.md).
 */
#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/slab.h>

#include "tbrdma.h"
#include "compat.h"
#include "backends/tb_priv.h"

/*
 * Test only (tests/vm/tests/tbsim-framing.sh, the negative control): frames
 * with SOF PDF == EOF PDF and RX rings whose sof_mask is their eof_mask, as
 * tbrdma did before wave 3. A real NHI (and the stand-in's strict model)
 * closes such a frame after its first transport packet.
 */
static bool tb_test_sof_eq_eof;
module_param(tb_test_sof_eq_eof, bool, 0444);
MODULE_PARM_DESC(tb_test_sof_eq_eof,
		 "test only: the old framing (SOF PDF = EOF PDF) a real NHI cuts after 256 bytes");

/*
 * Teardown: how long the TX frames already posted get to go out before BYE
 * and before any path is disabled (tbr_tb_conn_quiesce). On hardware they
 * take microseconds; a QEMU TCG guest can be left without CPU for a second
 * and more, so the VM tests give it longer.
 */
static unsigned int tb_tx_drain_ms = 500;
module_param(tb_tx_drain_ms, uint, 0644);
MODULE_PARM_DESC(tb_tx_drain_ms,
		 "teardown: wait this long at most for posted TX frames before BYE (1..60000, default 500)");

static unsigned int tbt_tx_drain_ms(void)
{
	return clamp_val(READ_ONCE(tb_tx_drain_ms), 1, 60000);
}

static u8 tbt_tx_sof(u8 eof)
{
	return tb_test_sof_eq_eof ? eof : TBT_PDF_SOF;
}

/* ---- ring I/O (rail ops) ------------------------------------------------ */

static struct tbt_frame *tbt_frame_of(struct tbt_rail *tr, struct tbr_frame *f)
{
	unsigned long idx = f - tr->rail->frames;

	return idx < tr->nfr ? &tr->fr[idx] : NULL;
}

/*
 * A split frame's head went (or came back canceled): nothing to do, its
 * tail's callback, which the ring runs after it, completes the frame.
 */
static void tbt_head_done(struct tb_ring *ring, struct ring_frame *rf, bool canceled)
{
}

/*
 * TX zero-copy: a split frame's tail, a whole ring frame right behind the
 * head's room, may come from a user's page (docs/protocol.md section 8).
 * The page is DMA-mapped in tbt_tx(), for one send; anything else about the
 * frame found there (another size) and the bytes are copied after all.
 */
static int tbt_tx_attach(struct tbr_rail *rail, struct tbr_frame *f, u32 off,
			 struct page *page, u32 page_off, u32 len)
{
	struct tbt_rail *tr = rail->priv;
	struct tbt_frame *fr = tbt_frame_of(tr, f);

	if (!fr || fr->zc_page || tr->frame_max <= tr->ring_frame ||
	    len != tr->ring_frame || off > tr->frame_max - tr->ring_frame ||
	    page_off + len > PAGE_SIZE)
		return -EOPNOTSUPP;
	get_page(page);
	fr->zc_page = page;
	fr->zc_off = off;
	fr->zc_page_off = page_off;
	fr->zc_len = len;
	return 0;
}

/* link->lock held: the frame is back in the pool (sent, refused, aborted) */
static void tbt_tx_release(struct tbr_rail *rail, struct tbr_frame *f)
{
	struct tbt_rail *tr = rail->priv;
	struct tbt_frame *fr = tbt_frame_of(tr, f);

	if (!fr || !fr->zc_page)
		return;
	if (fr->zc_mapped)
		dma_unmap_page(tr->dma_dev, fr->zc_dma, fr->zc_len, DMA_TO_DEVICE);
	fr->zc_mapped = false;
	put_page(fr->zc_page);
	fr->zc_page = NULL;
}

/*
 * The tail of @fr's frame from its attached page, if the frame has the shape
 * attached for (@head bytes before a whole ring frame) and the page maps;
 * otherwise the page's bytes go into the frame's buffer. Returns the tail's
 * DMA address, 0 for the buffer's.
 */
static dma_addr_t tbt_tx_zc_map(struct tbt_rail *tr, struct tbt_frame *fr,
				u32 head)
{
	struct tbr_frame *f = fr->f;
	void *va;

	if (head && head == fr->zc_off && f->size - head == fr->zc_len) {
		fr->zc_dma = dma_map_page(tr->dma_dev, fr->zc_page, fr->zc_page_off,
					  fr->zc_len, DMA_TO_DEVICE);
		if (!dma_mapping_error(tr->dma_dev, fr->zc_dma)) {
			fr->zc_mapped = true;
			return fr->zc_dma;
		}
	}
	if (fr->zc_off + fr->zc_len <= f->size) {
		va = kmap_local_page(fr->zc_page);
		memcpy((u8 *)f->buf + fr->zc_off, (u8 *)va + fr->zc_page_off, fr->zc_len);
		kunmap_local(va);
	}
	return 0;
}

/* A posted TX frame completed, or was not taken after all. Any context. */
static void tbt_tx_put(struct tbt_rail *tr)
{
	if (atomic_dec_and_test(&tr->tx_posted))
		wake_up(&tr->tx_idle);
}

/*
 * Link layer's TX (link->lock held, so the two ring frames of a split frame
 * are queued back to back). When the tail is refused (the ring stopped
 * between the two), the frame goes back to the pool at once: its head is
 * canceled by the stop and tbt_head_done() does not touch the frame.
 */
static int tbt_tx(struct tbr_rail *rail, struct tbr_frame *f)
{
	struct tbt_rail *tr = rail->priv;
	struct tbt_frame *fr = tbt_frame_of(tr, f);
	dma_addr_t tail_dma = 0;
	u32 head;
	int ret;

	if (!fr || !f->size || f->size > tr->frame_max)
		return -EINVAL;
	atomic_inc(&tr->tx_posted);
	/* counted before tx_on is read: tbt_rail_quiesce() clears it, then waits for 0 */
	smp_mb__after_atomic();
	if (!READ_ONCE(tr->tx_on)) {
		ret = -ESHUTDOWN;
		goto out_put;
	}
	head = f->size > tr->ring_frame ? f->size - tr->ring_frame : 0;
	if (fr->zc_page)
		tail_dma = tbt_tx_zc_map(tr, fr, head);
	dma_sync_single_for_device(tr->dma_dev, fr->dma, tail_dma ? head : f->size,
				   DMA_TO_DEVICE);
	if (head) {
		fr->rf_head.buffer_phy = fr->dma;
		fr->rf_head.size = tbr_frame_size_encode(head);
		fr->rf_head.sof = tbt_tx_sof(TBR_PDF_HEAD | f->eof);
		fr->rf_head.eof = TBR_PDF_HEAD | f->eof;
		fr->rf_head.flags = 0;
		fr->rf_head.callback = tbt_head_done;
		ret = tb_ring_tx(tr->tx, &fr->rf_head);
		if (ret)
			goto out_put;
	}
	fr->rf.buffer_phy = tail_dma ? tail_dma : fr->dma + head;
	fr->rf.size = tbr_frame_size_encode(f->size - head);
	fr->rf.eof = head ? TBR_PDF_TAIL : f->eof;
	fr->rf.sof = tbt_tx_sof(fr->rf.eof);
	fr->rf.flags = 0;
	ret = tb_ring_tx(tr->tx, &fr->rf);
	if (ret)
		goto out_put;
	if (tail_dma)
		tbr_rail_count(rail, TBR_CNT_TX_ZEROCOPY, 1);
	return 0;

out_put:
	tbt_tx_put(tr);
	return ret;
}

static int tbt_rx(struct tbr_rail *rail, struct tbr_frame *f)
{
	struct tbt_rail *tr = rail->priv;
	struct tbt_frame *fr = tbt_frame_of(tr, f);

	if (!fr)
		return -EINVAL;
	if (!READ_ONCE(tr->running))
		return -ESHUTDOWN;
	fr->rf.size = 0;
	fr->rf.flags = 0;
	dma_sync_single_range_for_device(tr->dma_dev, fr->dma, TBT_RX_HEADROOM,
					 TBT_FRAME_MAX, DMA_FROM_DEVICE);
	return tb_ring_rx(tr->rx, &fr->rf);
}

static u32 tbt_poll_cookie(struct tbr_rail *rail);

const struct tbr_rail_ops tbt_rail_ops = {
	.tx = tbt_tx,
	.rx = tbt_rx,
	.poll_cookie = tbt_poll_cookie,
	.tx_attach = tbt_tx_attach,
	.tx_release = tbt_tx_release,
};

/* A ring frame tbr_split_rx() gave back: posted again. */
static void tbt_rx_recycle(struct tbt_rail *tr, void *fr)
{
	if (fr)
		tbr_rail_rx_recycle(tr->rail, ((struct tbt_frame *)fr)->f);
}

/*
 * One received (or canceled) RX frame to the rail layer; BH disabled, in
 * ring order: received ones from the poll tasklet, canceled ones from the
 * ring's work when it stops (which leaves a held head to the teardown).
 * Split frames (core/tbr_split.c): a head is held until the next frame; a
 * tail right behind it gets the head copied in front of it, so the frame is
 * whole in the tail's buffer.
 */
static void tbt_rx_complete(struct tbt_frame *fr, bool canceled)
{
	struct tbt_rail *tr = fr->tr;
	struct tbr_frame *f = fr->f;
	u8 *data = (u8 *)f->buf + TBT_RX_HEADROOM;
	struct tbr_split_out out;
	bool bad;
	u32 size;

	if (canceled) {
		f->flags = TBR_FRAME_CANCELED;
		f->callback(tr->rail, f, true);
		return;
	}
	bad = fr->rf.flags & (RING_DESC_CRC_ERROR | RING_DESC_BUFFER_OVERRUN);
	size = tbr_frame_size_decode(fr->rf.size);
	if (!bad)
		dma_sync_single_range_for_cpu(tr->dma_dev, fr->dma, TBT_RX_HEADROOM,
					      size, DMA_FROM_DEVICE);
	switch (tbr_split_rx(&tr->split, fr, fr->rf.eof, size, bad, &out)) {
	case TBR_SPLIT_BAD:
		f->flags = TBR_FRAME_CRC_ERROR;
		f->size = 0;
		f->callback(tr->rail, f, false);
		break;
	case TBR_SPLIT_HOLD:
		break;
	case TBR_SPLIT_DISCARD:
		tbt_rx_recycle(tr, fr);
		break;
	case TBR_SPLIT_DELIVER:
		tbr_rail_rx_data(tr->rail, f, data, size, fr->rf.eof);
		break;
	case TBR_SPLIT_JOIN:
		data -= out.head_len;
		memcpy(data, (u8 *)((struct tbt_frame *)out.head)->f->buf + TBT_RX_HEADROOM,
		       out.head_len);
		tbt_rx_recycle(tr, out.head);
		tbr_rail_rx_data(tr->rail, f, data, size + out.head_len, out.pdf);
		break;
	}
	tbt_rx_recycle(tr, out.drop);
	if (out.errors)
		tbr_rail_count(tr->rail, TBR_CNT_RX_ERRORS, out.errors);
}

/* NHI ring work (process context): TX completions, canceled RX frames. */
static void tbt_ring_cb(struct tb_ring *ring, struct ring_frame *rf, bool canceled)
{
	struct tbt_frame *fr = container_of(rf, struct tbt_frame, rf);
	struct tbt_rail *tr = fr->tr;
	struct tbr_frame *f = fr->f;

	local_bh_disable();
	if (ring->is_tx) {
		f->flags = canceled ? TBR_FRAME_CANCELED : 0;
		f->callback(tr->rail, f, canceled);
		tbt_tx_put(tr);
	} else {
		tbt_rx_complete(fr, canceled);
	}
	local_bh_enable();
}

/* Hard IRQ, NHI locks held: only schedule. */
static void tbt_start_poll(void *data)
{
	struct tbt_rail *tr = data;

	tasklet_schedule(&tr->poll);
}

/*
 * Up to TBT_POLL_BUDGET received frames of @tr's RX ring to the rail layer;
 * returns how many. BH disabled, tr->rx_lock held (the tasklet and a busy
 * poller take frames in ring order, one at a time).
 */
static unsigned int tbt_rx_drain(struct tbt_rail *tr)
{
	struct ring_frame *rf;
	unsigned int n;

	for (n = 0; n < TBT_POLL_BUDGET; n++) {
		rf = tb_ring_poll(tr->rx);
		if (!rf)
			break;
		tbt_rx_complete(container_of(rf, struct tbt_frame, rf), false);
	}
	return n;
}

static void tbt_poll(struct tasklet_struct *t)
{
	struct tbt_rail *tr = from_tasklet(tr, t, poll);
	unsigned int n;

	spin_lock(&tr->rx_lock);
	n = tbt_rx_drain(tr);
	spin_unlock(&tr->rx_lock);
	if (n == TBT_POLL_BUDGET)
		tasklet_schedule(&tr->poll);
	else if (READ_ONCE(tr->polling))
		tb_ring_poll_complete(tr->rx);
}

/*
 * The poll mode (kernel/xport/xport_poll.c, module parameter busy_poll_us):
 * a rail's cookie names it in tbt_poll_ids while its rings run, so a
 * doorbell can take its RX ring's completed frames as soon as the NHI wrote
 * them, instead of waiting for the ring interrupt, which the NHI throttles
 * to one per 128 us (nhi.c nhi_enable_int_throttling), and the tasklet.
 */
static DEFINE_XARRAY_ALLOC1(tbt_poll_ids);

/* rail op poll_cookie: link->lock held */
static u32 tbt_poll_cookie(struct tbr_rail *rail)
{
	struct tbt_rail *tr = rail->priv;

	return READ_ONCE(tr->running) ? tr->poll_id : 0;
}

/* backend busy_poll: process context, no lock held, BH on */
void tbr_tb_busy_poll(u32 cookie, bool (*end)(void *arg), void *arg)
{
	struct tbt_rail *tr;

	do {
		rcu_read_lock();
		tr = xa_load(&tbt_poll_ids, cookie);
		if (tr && READ_ONCE(tr->running)) {
			spin_lock_bh(&tr->rx_lock);
			tbt_rx_drain(tr);
			spin_unlock_bh(&tr->rx_lock);
		}
		rcu_read_unlock();
		if (!tr)
			return;
		/*
		 * As napi_busy_loop(): let what needs this CPU run (the stand-in's
		 * ring work, bound to the CPU that queued our frame), then poll on
		 */
		if (need_resched())
			cond_resched();
		else
			cpu_relax();
	} while (!end(arg));
}

/* ---- rail setup and teardown ---------------------------------------------- */

/*
 * Enable (@on) or disable the DMA paths of @tr. Context: process, conn->lock
 * and tbr_ctl_mutex held, both dropped around the call. The software
 * connection manager takes tb->lock in both (drivers/thunderbolt/tb.c
 * tb_approve_xdomain_paths(), and tb_disconnect_xdomain_paths() unless
 * xd->is_unplugged), and holds tb->lock while it removes an XDomain
 * (tb_handle_hotplug() -> tb_xdomain_remove() -> our tbt_remove(), which
 * takes conn->lock): holding it here would be an ABBA deadlock with an
 * unplug. An XDomain already unplugged gets no new paths.
 */
static int tbt_rail_paths(struct tbt_conn *conn, struct tbt_rail *tr, bool on)
{
	struct tb_xdomain *xd = conn->xd;
	int ret;

	lockdep_assert_held(&conn->lock);
	lockdep_assert_held(&tbr_ctl_mutex);
	mutex_unlock(&tbr_ctl_mutex);
	mutex_unlock(&conn->lock);
	if (!on)
		ret = tb_xdomain_disable_paths(xd, tr->out_hop, tr->tx->hop,
					       tr->in_hop, tr->rx->hop);
	else if (READ_ONCE(xd->is_unplugged))
		ret = -ENODEV;
	else
		ret = tb_xdomain_enable_paths(xd, tr->out_hop, tr->tx->hop,
					      tr->in_hop, tr->rx->hop);
	mutex_lock(&conn->lock);
	mutex_lock(&tbr_ctl_mutex);
	if (!on && ret && !READ_ONCE(xd->is_unplugged))
		dev_warn(&conn->svc->dev, "tbrdma: disabling DMA paths failed: %d\n", ret);
	return ret;
}

/*
 * tbr_ctl_mutex held. The scheduler stops using the rail (the transport
 * resends what it left unacknowledged on the other rails) and tx takes no
 * new frame; frames already posted still complete. RX buffers are still
 * posted while the rings run: a receiver that stopped taking the peer's
 * frames would stall the peer's transport and, through its E2E credits,
 * our own TX drain.
 */
static void tbt_rail_quiesce(struct tbt_rail *tr)
{
	if (tr->rail) {
		tbr_rail_down(tr->rail);
		if (READ_ONCE(tr->running))
			tbr_rail_post_rx(tr->rail);
	}
	WRITE_ONCE(tr->tx_on, false);
	smp_mb();	/* pairs with tbt_tx(): it counts a frame, then reads tx_on */
}

/*
 * tbr_ctl_mutex held; the paths are disabled (or were never enabled).
 * Reverse of tbr_tb_rail_setup(), for any partial state.
 */
static void tbt_rail_teardown(struct tbt_conn *conn, struct tbt_rail *tr)
{
	struct tb_xdomain *xd = conn->xd;
	unsigned int i;

	tbt_rail_quiesce(tr);
	WRITE_ONCE(tr->running, false);
	/*
	 * The poll tasklet before the rings: once polling is off and a run
	 * that read it on is over, no run re-arms the interrupt
	 * (tb_ring_poll_complete() unmasks it even on a stopped ring, nhi.c).
	 * Frames the RX ring still holds come back canceled from its stop.
	 */
	WRITE_ONCE(tr->polling, false);
	if (tr->poll_id) {
		xa_erase(&tbt_poll_ids, tr->poll_id);
		synchronize_rcu();	/* no busy poller left on the rings */
		tr->poll_id = 0;
	}
	if (tr->rx)
		tasklet_kill(&tr->poll);
	if (tr->started) {
		tb_ring_stop(tr->rx);	/* posted frames come back canceled */
		tb_ring_stop(tr->tx);
		tr->started = false;
	}
	/* a run the last interrupt scheduled: over before the split state goes */
	if (tr->rx)
		tasklet_kill(&tr->poll);
	/* a head whose tail never came: the tasklet is stopped */
	local_bh_disable();
	tbt_rx_recycle(tr, tr->split.held);
	tr->split.held = NULL;
	local_bh_enable();
	for (i = 0; tr->fr && i < tr->nfr; i++)
		if (tr->fr[i].mapped)
			dma_unmap_single(tr->dma_dev, tr->fr[i].dma, tr->fr[i].map_len,
					 tr->fr[i].is_tx ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
	if (tr->rail)
		tbr_rail_remove(tr->rail);
	tr->rail = NULL;
	kfree(tr->fr);
	tr->fr = NULL;
	if (tr->rx)
		tb_ring_free(tr->rx);
	if (tr->tx)
		tb_ring_free(tr->tx);
	tr->rx = tr->tx = NULL;
	if (tr->in_hop_held)
		tb_xdomain_release_in_hopid(xd, tr->in_hop);
	tr->in_hop_held = false;
}

/*
 * conn->lock and tbr_ctl_mutex held (dropped while the paths are enabled:
 * tbt_rail_paths()). Rings, input HopID, rail, DMA mappings; rings started
 * and RX buffers posted; then the DMA paths. The rail (of @backend, tb.c's)
 * stays down.
 */
int tbr_tb_rail_setup(struct tbt_conn *conn, unsigned int i,
		      const struct tbr_backend *backend)
{
	const struct tbr_nego_result *res = &conn->res;
	struct tbt_rail *tr = &conn->rails[i];
	struct tb_xdomain *xd = conn->xd;
	unsigned int flags = RING_FLAG_FRAME, n;
	struct tbr_rail *rail;
	int ret;

	memset(tr, 0, sizeof(*tr));
	tr->conn = conn;
	tr->out_hop = conn->out_hop[i];
	tr->in_hop = conn->remote.hopid[i];
	init_waitqueue_head(&tr->tx_idle);
	/*
	 * E2E on both rings (as thunderbolt-net does when the peer has it):
	 * the RX ring grants credits through our TX HopID, the TX ring's flow
	 * control sends nothing the peer's RX ring has no buffer for.
	 */
	if (res->e2e)
		flags |= RING_FLAG_E2E;
	tr->tx = tb_ring_alloc_tx(xd->tb->nhi, -1, res->tx_ring, flags);
	if (!tr->tx)
		return -ENOMEM;
	tr->rx = tb_ring_alloc_rx(xd->tb->nhi, -1, res->rx_ring, flags,
				  tr->tx->hop,
				  tb_test_sof_eq_eof ? TBR_PDF_RX_MASK : BIT(TBT_PDF_SOF),
				  TBR_PDF_RX_MASK,
				  tbt_start_poll, tr);
	if (!tr->rx) {
		ret = -ENOMEM;
		goto err;
	}
	tasklet_setup(&tr->poll, tbt_poll);
	spin_lock_init(&tr->rx_lock);
	tr->dma_dev = tb_ring_dma_device(tr->tx);
	ret = tb_xdomain_alloc_in_hopid(xd, tr->in_hop);
	if (ret != tr->in_hop) {
		if (ret >= 0)
			tb_xdomain_release_in_hopid(xd, ret);
		ret = -EBUSY;
		goto err;
	}
	tr->in_hop_held = true;

	rail = tbr_rail_add(conn->tdev, conn->peer_guid, backend, tr,
			    res->tx_ring, res->rx_ring);
	if (IS_ERR(rail)) {
		ret = PTR_ERR(rail);
		goto err;
	}
	tr->rail = rail;
	/* the agreed ring frame, and a header more when both split frames */
	tr->ring_frame = res->frame_size;
	tr->frame_max = res->split ?
		min_t(u32, res->frame_size + TBR_HDR_MAX, TBR_FRAME_SIZE_MAX) :
		res->frame_size;
	tbr_rail_set_max_frame(rail, tr->frame_max, tr->frame_max);
	tbr_rail_set_peer_feat(rail, (res->ack_ride ? TBR_PEER_ACK_RIDE : 0) |
			       (res->net_frag ? TBR_PEER_NET_FRAG : 0));
	/* the XDomain's link as trained (Gb/s per lane), shared by its rails */
	tbr_rail_set_speed(rail, xd, xd->link_speed * 1000, tbr_tb_lanes(xd->link_width));
	/* link/link.c: frames[0, tx_depth) are the TX pool, the rest RX buffers */
	tr->nfr = rail->tx_depth + rail->rx_depth;
	tr->fr = kcalloc(tr->nfr, sizeof(*tr->fr), GFP_KERNEL);
	if (!tr->fr) {
		ret = -ENOMEM;
		goto err;
	}
	BUILD_BUG_ON(TBT_RX_HEADROOM + TBT_FRAME_MAX > PAGE_SIZE << TBR_FRAME_ORDER);
	for (n = 0; n < tr->nfr; n++) {
		struct tbt_frame *fr = &tr->fr[n];
		bool is_tx = n < rail->tx_depth;

		fr->f = &rail->frames[n];
		fr->tr = tr;
		fr->is_tx = is_tx;
		fr->rf.callback = tbt_ring_cb;
		fr->map_len = is_tx ? TBR_FRAME_SIZE_MAX : TBT_RX_HEADROOM + TBT_FRAME_MAX;
		fr->dma = dma_map_single(tr->dma_dev, fr->f->buf, fr->map_len,
					 is_tx ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
		if (dma_mapping_error(tr->dma_dev, fr->dma)) {
			ret = -ENOMEM;
			goto err;
		}
		/* TX: set per frame (tbt_tx); RX: behind the room for a head */
		fr->rf.buffer_phy = fr->dma + (is_tx ? 0 : TBT_RX_HEADROOM);
		fr->mapped = true;
	}

	tb_ring_start(tr->tx);
	tb_ring_start(tr->rx);
	tr->started = true;
	WRITE_ONCE(tr->polling, true);
	WRITE_ONCE(tr->running, true);
	WRITE_ONCE(tr->tx_on, true);
	/* without an id the poll mode passes this rail by */
	if (xa_alloc(&tbt_poll_ids, &tr->poll_id, tr, xa_limit_32b, GFP_KERNEL))
		tr->poll_id = 0;
	tbr_rail_post_rx(rail);
	ret = tbt_rail_paths(conn, tr, true);
	if (ret)
		goto err;
	tr->paths_on = true;
	/* removed, suspended or shut down while the locks were dropped */
	if (conn->stopping || conn->suspended) {
		ret = -ESHUTDOWN;
		goto err_paths;
	}
	return 0;

err_paths:
	tbt_rail_quiesce(tr);
	WRITE_ONCE(tr->running, false);
	tbt_rail_paths(conn, tr, false);
	tr->paths_on = false;
err:
	tbt_rail_teardown(conn, tr);
	return ret;
}

/*
 * conn->lock and tbr_ctl_mutex held (dropped while paths are disabled):
 * rails @n.. down and gone, last first, each as tbr_tb_conn_teardown()
 * takes a rail down (quiesced, posted TX drained, paths disabled). They
 * never went up: the peer has fewer. Never under the firmware CM's one
 * tunnel (it has one rail at most): its disable_paths would take every path
 * of the XDomain down.
 */
void tbr_tb_rails_trim(struct tbt_conn *conn, unsigned int n)
{
	struct tbt_rail *tr;

	while (conn->nrails > n) {
		tr = &conn->rails[--conn->nrails];
		tbt_rail_quiesce(tr);
		if (!READ_ONCE(conn->xd->is_unplugged))
			wait_event_timeout(tr->tx_idle, !atomic_read(&tr->tx_posted),
					   msecs_to_jiffies(tbt_tx_drain_ms()));
		if (tr->paths_on)
			tbt_rail_paths(conn, tr, false);
		tr->paths_on = false;
		tbt_rail_teardown(conn, tr);
	}
}

/* conn->lock held: see tb_priv.h. Takes tbr_ctl_mutex. */
void tbr_tb_conn_quiesce(struct tbt_conn *conn)
{
	unsigned long left = msecs_to_jiffies(tbt_tx_drain_ms());
	struct tbt_rail *tr;
	unsigned int i;

	lockdep_assert_held(&conn->lock);
	conn->need_ready = false;
	if (!conn->nrails)
		return;
	mutex_lock(&tbr_ctl_mutex);
	for (i = 0; i < conn->nrails; i++)
		tbt_rail_quiesce(&conn->rails[i]);
	mutex_unlock(&tbr_ctl_mutex);
	conn->rails_up = false;
	/*
	 * A transmitter streaming into the peer's disabled ingress hop can
	 * wedge its router (docs/thunderbolt.md, "Teardown"): what was posted
	 * goes out before BYE and before any path is disabled. Unplugged:
	 * nothing can go out, and there is no peer to protect.
	 */
	for (i = 0; i < conn->nrails && left; i++) {
		tr = &conn->rails[i];
		if (READ_ONCE(conn->xd->is_unplugged))
			break;
		left = wait_event_timeout(tr->tx_idle, !atomic_read(&tr->tx_posted), left);
		if (!left)
			dev_warn(&conn->svc->dev,
				 "tbrdma: rail %u: %d TX frame(s) not sent after %u ms, stopping anyway\n",
				 i, atomic_read(&tr->tx_posted), tbt_tx_drain_ms());
	}
}

/* conn->lock held (dropped while paths are disabled): every rail down and gone. */
void tbr_tb_conn_teardown(struct tbt_conn *conn)
{
	struct tbt_rail *tr;
	unsigned int i;

	lockdep_assert_held(&conn->lock);
	tbr_tb_conn_quiesce(conn);
	if (conn->nrails) {
		mutex_lock(&tbr_ctl_mutex);
		for (i = conn->nrails; i-- > 0;) {
			tr = &conn->rails[i];
			if (tr->paths_on)
				tbt_rail_paths(conn, tr, false);
			tr->paths_on = false;
			tbt_rail_teardown(conn, tr);
		}
		mutex_unlock(&tbr_ctl_mutex);
		dev_info(&conn->svc->dev, "tbrdma: %u rail(s) to %016llx down\n",
			 conn->nrails, conn->peer_guid);
	}
	conn->nrails = 0;
	conn->connected = false;
	conn->rails_up = false;
	conn->hello_sent = false;
	conn->hello_rcvd = false;
	conn->peer_ready = false;
	conn->need_ready = false;
	conn->retries = 0;
}
