// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: queue pairs (RC, UC, UD, and QP1: the GSI QP of the MAD layer).
 *
 * The SQ and RQ are rings in the layout of uapi/tbrdma-abi.h. For a user QP
 * the provider produces WQEs in shared memory; post_send reaches the kernel
 * only as a doorbell (no WR list) and post_recv not at all. For a kernel QP
 * tbr_post_send()/tbr_post_recv() write the same rings, so the transport
 * consumes both kinds through one interface:
 *
 *   tbr_sq_fetch()	take (copy + validate) the next SQ WQE
 *   tbr_sq_peek()	whether another SQ WQE is there to take
 *   tbr_sq_retire()	release the oldest taken SQ slot once it completed
 *   tbr_qp_complete_send()  post its CQE (if signaled or failed) + retire
 *   tbr_rq_fetch()	take the next receive WQE (RQ or SRQ); slot released
 *   tbr_cq_post()	post any completion (cq.c)
 *   tbr_qp_set_error()	move the QP to ERROR and flush
 *
 * All of them, and every tbr_xport_ops callback, run under qp->lock
 * (spin_lock_irqsave). Lock order: qp->lock, then srq->lock or cq->lock.
 * Moving to ERROR completes every outstanding WQE with IB_WC_WR_FLUSH_ERR,
 * in queue order: first the transport flushes what it took (ops->flush),
 * then the verbs layer flushes what is still in the rings.
 */
#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "tbrdma.h"
#include "tbr_trace.h"

#define TBR_QP_ACCESS_OK (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

/*
 * Test only (tests/progs/verbs_mw.c): when nonzero, new user QPNs come from
 * the first test_qpn_span numbers (cyclic, as always), so a test can make a
 * destroyed QP's number come back within a few creations. 0: all of them.
 */
static unsigned int test_qpn_span;
module_param(test_qpn_span, uint, 0600);
MODULE_PARM_DESC(test_qpn_span, "test only: allocate user QPNs from the first N (0: all)");

static u32 tbr_send_stride(u32 max_sge, u32 max_inline)
{
	u32 body = max_t(u32, max_t(u32, max_sge, 1) * sizeof(struct tbrdma_sge),
			 max_inline);

	return ALIGN(TBRDMA_SEND_WQE_HDR + body, 64);
}

/* WR opcode valid on this QP? Returns the CQE opcode or -1. */
static int tbr_wr_to_wc_opcode(const struct tbr_qp *qp, u32 op)
{
	enum ib_qp_type type = qp->ibqp.qp_type;

	switch (op) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
		return IB_WC_SEND;
	}
	if (type == IB_QPT_UD || type == IB_QPT_GSI)
		return -1;
	switch (op) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	}
	/*
	 * Fast registration (mr_fast.c): kernel QPs only, for a user ring
	 * cannot be trusted with an MR pointer. Memory windows (mw.c): user
	 * QPs only (the kernel has no ib_alloc_mw). LOCAL_INV: either (a fast
	 * registration MR's key or a type 2 window's rkey).
	 */
	switch (op) {
	case IB_WR_REG_MR:
		return qp->user ? -1 : IB_WC_REG_MR;
	case IB_WR_BIND_MW:
		return qp->user ? IB_WC_BIND_MW : -1;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	}
	if (type != IB_QPT_RC)
		return -1;
	switch (op) {
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_UVERBS_WR_SEND_WITH_INV:
		return IB_WC_SEND;
	}
	return -1;
}

/* ---- lookup ---------------------------------------------------------- */

/* Context: any. Returns the QP with a reference, or NULL. */
struct tbr_qp *tbr_qp_get(struct tbr_dev *tdev, u32 qpn)
{
	struct tbr_qp *qp;
	unsigned long flags;

	xa_lock_irqsave(&tdev->qp_xa, flags);
	qp = xa_load(&tdev->qp_xa, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_irqrestore(&tdev->qp_xa, flags);
	return qp;
}

void tbr_qp_put(struct tbr_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

/* ---- transport interface (qp->lock held) ------------------------------ */

/* the producer index, or false if userspace broke it */
static bool tbr_sq_prod(struct tbr_qp *qp, u32 *prod)
{
	/* pairs with the provider's release of prod: the WQEs below it are written */
	*prod = smp_load_acquire(&qp->sq.ring->prod);
	return (u32)(*prod - qp->sq.done) <= qp->sq.entries &&
	       (u32)(*prod - qp->sq.kidx) <= (u32)(*prod - qp->sq.done);
}

/*
 * tbr_sq_fetch - take the next send WQE
 * Copies the slot once and validates the copy: wqe->status is
 * IB_WC_SUCCESS, IB_WC_LOC_QP_OP_ERR (opcode invalid for the QP type) or
 * IB_WC_LOC_LEN_ERR (too many SGEs or inline bytes); a failed WQE must be
 * completed with that status (tbr_qp_complete_send) and the QP set to
 * ERROR. The slot stays owned until tbr_sq_retire().
 * Returns 0, -ENOENT (SQ empty) or -EIO (producer index corrupt).
 */
int tbr_sq_fetch(struct tbr_qp *qp, struct tbr_send_wqe *wqe)
{
	const void *slot;
	u32 prod, n;
	int op;

	lockdep_assert_held(&qp->lock);
	if (!tbr_sq_prod(qp, &prod))
		return -EIO;
	if (prod == qp->sq.kidx)
		return -ENOENT;
	slot = tbr_queue_slot(&qp->sq, qp->sq.kidx);
	memcpy(&wqe->hdr, slot, sizeof(wqe->hdr));
	barrier();	/* validate the copy only */
	wqe->status = IB_WC_SUCCESS;
	op = tbr_wr_to_wc_opcode(qp, wqe->hdr.opcode);
	wqe->wc_opcode = op < 0 ? IB_WC_SEND : op;
	if (op < 0) {
		wqe->status = IB_WC_LOC_QP_OP_ERR;
		wqe->hdr.num_sge = 0;
		wqe->hdr.inline_len = 0;
	} else if (wqe->hdr.flags & TBRDMA_WQE_INLINE) {
		n = wqe->hdr.inline_len;
		wqe->hdr.num_sge = 0;
		if (n > qp->max_inline) {
			wqe->status = IB_WC_LOC_LEN_ERR;
			wqe->hdr.inline_len = 0;
		} else {
			memcpy(wqe->inline_data, slot + TBRDMA_SEND_WQE_HDR, n);
		}
	} else {
		n = wqe->hdr.num_sge;
		wqe->hdr.inline_len = 0;
		if (n > qp->max_send_sge) {
			wqe->status = IB_WC_LOC_LEN_ERR;
			wqe->hdr.num_sge = 0;
		} else {
			memcpy(wqe->sge, slot + TBRDMA_SEND_WQE_HDR,
			       n * sizeof(struct tbrdma_sge));
		}
	}
	qp->sq.kidx++;
	return 0;
}

/*
 * Whether the SQ ring holds a WQE past those taken: a hint for chaining
 * posts (tbr_sq_fetch() still reads and checks it, a broken producer index
 * included).
 */
bool tbr_sq_peek(struct tbr_qp *qp)
{
	u32 prod;

	lockdep_assert_held(&qp->lock);
	return tbr_sq_prod(qp, &prod) && prod != qp->sq.kidx;
}

/* Release the oldest taken SQ slot (its completion was posted). */
void tbr_sq_retire(struct tbr_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (qp->sq.done == qp->sq.kidx)
		return;
	qp->sq.done++;
	/* the slot is read before the provider, acquiring cons, may reuse it */
	smp_store_release(&qp->sq.ring->cons, qp->sq.done);
}

/*
 * tbr_sq_set_need_doorbell - tell userspace whether a doorbell is needed
 * A transport that stops polling the SQ sets it and then must call
 * tbr_sq_fetch() once more (the smp_mb() here orders the flag before that
 * read of prod; the provider does the mirror: prod, full barrier, flags).
 */
void tbr_sq_set_need_doorbell(struct tbr_qp *qp, bool need)
{
	u32 f = READ_ONCE(qp->sq.ring->flags);

	lockdep_assert_held(&qp->lock);
	f = need ? f | TBRDMA_RING_NEED_DOORBELL : f & ~TBRDMA_RING_NEED_DOORBELL;
	WRITE_ONCE(qp->sq.ring->flags, f);
	/*
	 * The flag before our next look at prod; pairs with the provider's
	 * full barrier between its prod store and its flags load, so either
	 * it rings the doorbell or we see its WQE.
	 */
	smp_mb();
}

/* Take RQ slot @q->kidx (producer index already checked). */
static void tbr_rq_take(struct tbr_qp *qp, struct tbr_recv_wqe *wqe)
{
	struct tbr_queue *q = &qp->rq;

	tbr_recv_slot_read(q, q->kidx, qp->max_recv_sge, wqe);
	q->kidx++;
	/* the WQE is read before the provider, acquiring cons, may reuse its slot */
	smp_store_release(&q->ring->cons, q->kidx);
}

/*
 * tbr_rq_fetch - take the next receive WQE from the QP's RQ or SRQ
 * The slot is released at once; the caller owns the copy and must complete
 * it (tbr_cq_post), also when flushing. Returns 0 (check wqe->status),
 * -ENOENT (empty: answer RNR) or -EIO (producer index corrupt).
 */
int tbr_rq_fetch(struct tbr_qp *qp, struct tbr_recv_wqe *wqe)
{
	struct tbr_queue *q = &qp->rq;
	u32 prod;

	lockdep_assert_held(&qp->lock);
	if (qp->srq)
		return tbr_srq_fetch(qp->srq, wqe);
	/* pairs with the provider's release of prod: the WQEs below it are written */
	prod = smp_load_acquire(&q->ring->prod);
	if (prod == q->kidx)
		return -ENOENT;
	if (prod - q->kidx > q->entries)
		return -EIO;
	tbr_rq_take(qp, wqe);
	return 0;
}

static void tbr_wc_init(struct ib_wc *wc, struct tbr_qp *qp, u64 wr_id,
			enum ib_wc_status status, enum ib_wc_opcode opcode)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = wr_id;
	wc->status = status;
	wc->opcode = opcode;
	wc->qp = &qp->ibqp;
	wc->port_num = 1;
}

/*
 * tbr_qp_complete_send - complete the oldest taken SQ WQE
 * Posts its CQE when the WQE was signaled (or the QP signals all WRs) or
 * @status is an error, then retires the slot. Returns tbr_cq_post()'s
 * result (0 if no CQE was due).
 */
int tbr_qp_complete_send(struct tbr_qp *qp, const struct tbr_send_wqe *wqe,
			 enum ib_wc_status status)
{
	struct ib_wc wc;
	int err = 0;

	lockdep_assert_held(&qp->lock);
	/* free the slot before the CQE can be polled (see tbr_x_complete_send) */
	tbr_sq_retire(qp);
	if (status != IB_WC_SUCCESS || qp->sig_all ||
	    (wqe->hdr.flags & TBRDMA_WQE_SIGNALED)) {
		tbr_wc_init(&wc, qp, wqe->hdr.wr_id, status, wqe->wc_opcode);
		err = tbr_cq_post(qp->scq, &wc, false);
	}
	return err;
}

/*
 * Complete everything in the rings with IB_WC_WR_FLUSH_ERR, up to the
 * producer indexes read once at the start: userspace may keep advancing
 * them (the slots it gets back come free as we go), and this runs with
 * qp->lock held and interrupts off, so one call does at most one ring's
 * worth of each queue; later WQEs are flushed by the next doorbell
 * (post_send/post_recv in ERROR). A producer index more than a ring ahead
 * is a broken ring: nothing more is flushed from it.
 */
static void tbr_qp_flush_rings(struct tbr_qp *qp)
{
	struct tbrdma_send_wqe *s;
	struct tbr_recv_wqe rwqe;
	struct ib_wc wc;
	u32 prod;
	int op;

	/* SQ: taken-but-unretired WQEs were flushed by the transport */
	if (tbr_sq_prod(qp, &prod)) {
		while (qp->sq.done != prod) {
			if (qp->sq.done == qp->sq.kidx)
				qp->sq.kidx++;
			s = tbr_queue_slot(&qp->sq, qp->sq.done);
			op = tbr_wr_to_wc_opcode(qp, READ_ONCE(s->opcode));
			tbr_wc_init(&wc, qp, READ_ONCE(s->wr_id),
				    IB_WC_WR_FLUSH_ERR, op < 0 ? IB_WC_SEND : op);
			tbr_sq_retire(qp);
			tbr_cq_post(qp->scq, &wc, false);
		}
	} else {
		pr_debug_ratelimited("tbrdma: QP %u: SQ index corrupt\n",
				     qp->ibqp.qp_num);
	}
	/* RQ (WQEs of an SRQ are not flushed by a QP error) */
	if (qp->srq)
		return;
	/* pairs with the provider's release of prod: the WQEs below it are written */
	prod = smp_load_acquire(&qp->rq.ring->prod);
	if (prod - qp->rq.kidx > qp->rq.entries) {
		pr_debug_ratelimited("tbrdma: QP %u: RQ index corrupt\n",
				     qp->ibqp.qp_num);
		return;
	}
	while (qp->rq.kidx != prod) {
		tbr_rq_take(qp, &rwqe);
		tbr_wc_init(&wc, qp, rwqe.wr_id, IB_WC_WR_FLUSH_ERR,
			    IB_WC_RECV);
		tbr_cq_post(qp->rcq, &wc, false);
	}
}

static void tbr_qp_ring_flags(struct tbr_qp *qp, u32 set, u32 clear)
{
	struct tbr_queue *qs[2] = { &qp->sq, qp->srq ? NULL : &qp->rq };
	int i;

	for (i = 0; i < 2; i++)
		if (qs[i])
			WRITE_ONCE(qs[i]->ring->flags,
				   (READ_ONCE(qs[i]->ring->flags) | set) & ~clear);
}

static void tbr_qp_enter_error(struct tbr_qp *qp)
{
	struct tbr_dev *tdev = to_tbr_dev(qp->ibqp.device);

	qp->state = IB_QPS_ERR;
	qp->attr.qp_state = IB_QPS_ERR;
	tbr_qp_ring_flags(qp, TBRDMA_RING_QP_ERROR | TBRDMA_RING_NEED_DOORBELL, 0);
	if (tdev->xport && tdev->xport->flush)
		tdev->xport->flush(qp);
	tbr_qp_flush_rings(qp);
}

/*
 * tbr_qp_set_error - the transport moves the QP to ERROR (e.g. retries
 * exhausted, after posting the failing WQE's completion). Flushes all
 * outstanding WQEs. qp->lock held.
 */
void tbr_qp_set_error(struct tbr_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (qp->state != IB_QPS_ERR && qp->state != IB_QPS_RESET) {
		trace_tbr_qp_state(dev_name(&qp->ibqp.device->dev), qp->ibqp.qp_num,
				   qp->state, IB_QPS_ERR);
		tbr_qp_enter_error(qp);
	}
}

/* RESET: every WQE is discarded without a completion, indexes restart. */
static void tbr_queue_reset(struct tbr_queue *q)
{
	if (!q->ring)
		return;
	WRITE_ONCE(q->ring->prod, 0);
	WRITE_ONCE(q->ring->cons, 0);
	WRITE_ONCE(q->ring->flags, 0);
	q->kidx = 0;
	q->done = 0;
}

/* ---- verbs ------------------------------------------------------------ */

static int tbr_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			 struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tbr_dev(ibqp->device);
	struct tbr_qp *qp = to_tbr_qp(ibqp);
	struct tbrdma_create_qp_resp resp = {};
	struct ib_qp_cap *cap = &init->cap;
	bool ud = init->qp_type == IB_QPT_UD || init->qp_type == IB_QPT_GSI;
	u32 max_sge = ud ? TBR_UD_MAX_SGE : TBR_DEV_MAX_SGE;
	u32 max_inline = ud ? TBR_UD_MAX_INLINE : TBR_DEV_MAX_INLINE;
	u32 qpn, stride;
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:	/* QP1, created by the MAD layer */
		if (udata || init->port_num != 1)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (cap->max_send_wr > TBR_MAX_QP_WR || cap->max_send_sge > max_sge ||
	    cap->max_inline_data > max_inline ||
	    (!init->srq && (cap->max_recv_wr > TBR_MAX_QP_WR ||
			    cap->max_recv_sge > TBR_DEV_MAX_SGE)))
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&tdev->num_qp) > TBR_MAX_QP) {
		err = -ENOMEM;
		goto err_count;
	}

	spin_lock_init(&qp->lock);
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	qp->user = !!udata;
	qp->state = IB_QPS_RESET;
	qp->attr.qp_state = IB_QPS_RESET;
	qp->attr.path_mtu = IB_MTU_1024;
	qp->attr.port_num = 1;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->scq = to_tbr_cq(init->send_cq);
	qp->rcq = to_tbr_cq(init->recv_cq);
	qp->srq = init->srq ? to_tbr_srq(init->srq) : NULL;

	stride = tbr_send_stride(cap->max_send_sge, cap->max_inline_data);
	err = tbr_queue_init(tdev, &qp->sq,
			     roundup_pow_of_two(max_t(u32, cap->max_send_wr, 1)),
			     stride, udata);
	if (err)
		goto err_count;
	qp->max_send_sge = min_t(u32, (stride - TBRDMA_SEND_WQE_HDR) /
				 sizeof(struct tbrdma_sge), max_sge);
	qp->max_inline = min_t(u32, stride - TBRDMA_SEND_WQE_HDR, max_inline);
	qp->sq.ring->flags = TBRDMA_RING_NEED_DOORBELL;
	if (!qp->srq) {
		qp->max_recv_sge = max_t(u32, cap->max_recv_sge, 1);
		err = tbr_queue_init(tdev, &qp->rq,
				     roundup_pow_of_two(max_t(u32, cap->max_recv_wr, 1)),
				     tbr_recv_stride(qp->max_recv_sge), udata);
		if (err)
			goto err_sq;
	}
	cap->max_send_wr = qp->sq.entries;
	cap->max_send_sge = qp->max_send_sge;
	cap->max_inline_data = qp->max_inline;
	if (!qp->srq) {
		cap->max_recv_wr = qp->rq.entries;
		cap->max_recv_sge = qp->max_recv_sge;
	}

	if (init->qp_type == IB_QPT_GSI) {
		qpn = 1;	/* reserved: one GSI QP per device (one port) */
		err = xa_insert_irq(&tdev->qp_xa, qpn, NULL, GFP_KERNEL);
	} else {
		u32 span = READ_ONCE(test_qpn_span), max = TBR_MAX_QPN;

		if (span && span <= TBR_MAX_QPN - TBR_MIN_QPN)
			max = TBR_MIN_QPN + span - 1;
		err = xa_alloc_cyclic_irq(&tdev->qp_xa, &qpn, NULL,
					  XA_LIMIT(TBR_MIN_QPN, max),
					  &tdev->qp_next, GFP_KERNEL);
	}
	if (err < 0)
		goto err_rq;
	ibqp->qp_num = qpn;

	if (tdev->xport && tdev->xport->qp_create) {
		err = tdev->xport->qp_create(qp);
		if (err)
			goto err_xa;
	}
	if (udata) {
		resp.sq_mmap_offset = tbr_queue_mmap_offset(&qp->sq);
		resp.sq_mmap_size = qp->sq.size;
		resp.sq_entries = qp->sq.entries;
		resp.sq_stride = qp->sq.stride;
		if (!qp->srq) {
			resp.rq_mmap_offset = tbr_queue_mmap_offset(&qp->rq);
			resp.rq_mmap_size = qp->rq.size;
			resp.rq_entries = qp->rq.entries;
			resp.rq_stride = qp->rq.stride;
		}
		resp.max_inline = qp->max_inline;
		resp.max_send_sge = qp->max_send_sge;
		resp.max_recv_sge = qp->max_recv_sge;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_xport;
	}
	xa_store_irq(&tdev->qp_xa, qpn, qp, GFP_KERNEL);
	return 0;

err_xport:
	if (tdev->xport && tdev->xport->qp_destroy)
		tdev->xport->qp_destroy(qp);
err_xa:
	xa_erase_irq(&tdev->qp_xa, qpn);
err_rq:
	if (!qp->srq)
		tbr_queue_free(&qp->rq);
err_sq:
	tbr_queue_free(&qp->sq);
err_count:
	atomic_dec(&tdev->num_qp);
	return err;
}

static int tbr_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tbr_dev(ibqp->device);
	struct tbr_qp *qp = to_tbr_qp(ibqp);

	tbr_mcast_qp_gone(qp);
	xa_erase_irq(&tdev->qp_xa, ibqp->qp_num);
	tbr_qp_put(qp);
	wait_for_completion(&qp->released);
	/* no frame can reach the QP now: the transport state may go */
	if (tdev->xport && tdev->xport->qp_destroy)
		tdev->xport->qp_destroy(qp);
	tbr_mw_qp_gone(qp);
	if (!qp->srq)
		tbr_queue_free(&qp->rq);
	tbr_queue_free(&qp->sq);
	atomic_dec(&tdev->num_qp);
	return 0;
}

/* IBTA attribute checks beyond the state table (ib_modify_qp_is_ok) */
static int tbr_check_attr(struct tbr_qp *qp, const struct ib_qp_attr *attr,
			  int mask)
{
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= TBR_MAX_PKEYS)
		return -EINVAL;
	/* QP1's Q_Key is fixed (IBTA 10.2.4.2 / ib_mad sets IB_QP1_QKEY) */
	if ((mask & IB_QP_QKEY) && qp->ibqp.qp_type == IB_QPT_GSI &&
	    attr->qkey != IB_QP1_QKEY)
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~TBR_QP_ACCESS_OK))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > TBR_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > TBR_MAX_RD_ATOM)
		return -EINVAL;
	if (mask & IB_QP_ALT_PATH)	/* no automatic path migration */
		return -EINVAL;
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    attr->path_mig_state != IB_MIG_MIGRATED)
		return -EINVAL;
	if (mask & IB_QP_AV) {
		const struct ib_global_route *grh;

		/* RoCE: every address carries a GRH */
		if (!(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH))
			return -EINVAL;
		if (rdma_ah_get_port_num(&attr->ah_attr) > 1)
			return -EINVAL;
		grh = rdma_ah_read_grh(&attr->ah_attr);
		if (grh->sgid_index >= TBR_PORT_GID_TBL_LEN)
			return -EINVAL;
	}
	return 0;
}

static void tbr_apply_attr(struct tbr_qp *qp, const struct ib_qp_attr *attr,
			   int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & 0xffffff;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & 0xffffff;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num & 0xffffff;
	if (mask & IB_QP_PATH_MIG_STATE)
		a->path_mig_state = attr->path_mig_state;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_AV) {
		const struct ib_global_route *grh = rdma_ah_read_grh(&attr->ah_attr);

		qp->av.dgid = grh->dgid;
		qp->av.sgid_index = grh->sgid_index;
		qp->av.hop_limit = grh->hop_limit;
		qp->av.traffic_class = grh->traffic_class;
		qp->av.flow_label = grh->flow_label;
		qp->av.sl = rdma_ah_get_sl(&attr->ah_attr);
		if (attr->ah_attr.type == RDMA_AH_ATTR_TYPE_ROCE)
			memcpy(qp->av.dmac, attr->ah_attr.roce.dmac, ETH_ALEN);
	}
}

static int tbr_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			 int mask, struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tbr_dev(ibqp->device);
	struct tbr_qp *qp = to_tbr_qp(ibqp);
	enum ib_qp_state cur, new;
	unsigned long flags;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&qp->lock, flags);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	err = -EINVAL;
	if (cur != qp->state)
		goto out;
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask))
		goto out;
	err = tbr_check_attr(qp, attr, mask);
	if (err)
		goto out;
	tbr_apply_attr(qp, attr, mask);

	if (new != cur) {
		trace_tbr_qp_state(tbr_dev_name(tdev), ibqp->qp_num, cur, new);
		switch (new) {
		case IB_QPS_RESET:
			tbr_queue_reset(&qp->sq);
			WRITE_ONCE(qp->sq.ring->flags, TBRDMA_RING_NEED_DOORBELL);
			if (!qp->srq)
				tbr_queue_reset(&qp->rq);
			break;
		case IB_QPS_ERR:
			tbr_qp_enter_error(qp);
			break;
		default:
			break;
		}
		qp->state = new;
		qp->attr.qp_state = new;
	}
	if (tdev->xport && tdev->xport->modify)
		tdev->xport->modify(qp, cur, mask);
	err = 0;
out:
	spin_unlock_irqrestore(&qp->lock, flags);
	return err;
}

static int tbr_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			int mask, struct ib_qp_init_attr *init)
{
	struct tbr_qp *qp = to_tbr_qp(ibqp);
	unsigned long flags;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	spin_lock_irqsave(&qp->lock, flags);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->sq_draining = 0;
	spin_unlock_irqrestore(&qp->lock, flags);

	attr->cap.max_send_wr = qp->sq.entries;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_inline_data = qp->max_inline;
	if (!qp->srq) {
		attr->cap.max_recv_wr = qp->rq.entries;
		attr->cap.max_recv_sge = qp->max_recv_sge;
	}
	attr->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr->ah_attr, 1);
	rdma_ah_set_sl(&attr->ah_attr, qp->av.sl);
	rdma_ah_set_grh(&attr->ah_attr, &qp->av.dgid, qp->av.flow_label,
			qp->av.sgid_index, qp->av.hop_limit,
			qp->av.traffic_class);
	memcpy(attr->ah_attr.roce.dmac, qp->av.dmac, ETH_ALEN);

	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

/* kernel QPs: write one send WR into the SQ ring */
static int tbr_post_one_send(struct tbr_qp *qp, const struct ib_send_wr *wr,
			     u32 prod)
{
	void *slot = tbr_queue_slot(&qp->sq, prod);
	struct tbrdma_send_wqe *s = slot;
	struct tbrdma_sge *sge = slot + TBRDMA_SEND_WQE_HDR;
	u32 len = 0;
	int i;

	if (tbr_wr_to_wc_opcode(qp, wr->opcode) < 0)
		return -EINVAL;
	if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	memset(s, 0, TBRDMA_SEND_WQE_HDR);
	s->wr_id = wr->wr_id;
	s->opcode = wr->opcode;
	if (wr->send_flags & IB_SEND_SIGNALED)
		s->flags |= TBRDMA_WQE_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		s->flags |= TBRDMA_WQE_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		s->flags |= TBRDMA_WQE_FENCE;
	s->imm_data = (__force u32)wr->ex.imm_data;
	switch (wr->opcode) {
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		s->imm_data = wr->ex.invalidate_rkey;	/* host order */
		break;
	case IB_WR_REG_MR:
		/* kernel QPs only (tbr_wr_to_wc_opcode): read by xport_mem.c */
		s->remote_addr = (uintptr_t)reg_wr(wr)->mr;
		s->rkey = reg_wr(wr)->key;
		s->compare_add = reg_wr(wr)->access;
		return 0;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		s->remote_addr = rdma_wr(wr)->remote_addr;
		s->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		s->remote_addr = atomic_wr(wr)->remote_addr;
		s->rkey = atomic_wr(wr)->rkey;
		s->compare_add = atomic_wr(wr)->compare_add;
		s->swap = atomic_wr(wr)->swap;
		break;
	default:
		break;
	}
	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
		if (!ud_wr(wr)->ah)
			return -EINVAL;
		s->ah_num = to_tbr_ah(ud_wr(wr)->ah)->num;
		s->remote_qpn = ud_wr(wr)->remote_qpn;
		s->remote_qkey = ud_wr(wr)->remote_qkey;
		if (ud_wr(wr)->pkey_index >= TBR_MAX_PKEYS)
			return -EINVAL;
		s->pkey_index = ud_wr(wr)->pkey_index;
	}
	if ((wr->send_flags & IB_SEND_INLINE) && wr->opcode != IB_WR_RDMA_READ &&
	    wr->opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
	    wr->opcode != IB_WR_ATOMIC_FETCH_AND_ADD) {
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > qp->max_inline)
			return -EINVAL;
		len = 0;
		/* a virtual-DMA device: sge.addr is a kernel virtual address */
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(slot + TBRDMA_SEND_WQE_HDR + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		s->flags |= TBRDMA_WQE_INLINE;
		s->inline_len = len;
		return 0;
	}
	s->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

static void tbr_qp_kick_sq(struct tbr_qp *qp)
{
	struct tbr_dev *tdev = to_tbr_dev(qp->ibqp.device);

	if (qp->state == IB_QPS_ERR)
		tbr_qp_flush_rings(qp);
	else if (tdev->xport && tdev->xport->sq_doorbell)
		tdev->xport->sq_doorbell(qp);
}

static int tbr_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			 const struct ib_send_wr **bad_wr)
{
	struct tbr_qp *qp = to_tbr_qp(ibqp);
	struct tbr_dev *tdev = to_tbr_dev(ibqp->device);
	struct tbr_queue *q = &qp->sq;
	unsigned long flags;
	int err = 0;
	u32 prod;

	if (qp->user) {
		/*
		 * The provider wrote the SQ: this is its doorbell (a syscall,
		 * process context, IRQs on). BH stays off around the QP lock
		 * so that the backend's transmit (a tasklet the kick
		 * schedules) and whatever it makes the link receive run here,
		 * at local_bh_enable(), instead of waking ksoftirqd: the
		 * latency path has no context switch.
		 */
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		local_bh_disable();
		spin_lock_irqsave(&qp->lock, flags);
		if (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD ||
		    qp->state == IB_QPS_ERR)
			tbr_qp_kick_sq(qp);
		spin_unlock_irqrestore(&qp->lock, flags);
		local_bh_enable();
		if (tdev->xport && tdev->xport->busy_poll)
			tdev->xport->busy_poll(qp);
		return 0;
	}
	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD &&
	    qp->state != IB_QPS_ERR) {
		err = -EINVAL;
		goto out;
	}
	prod = q->ring->prod;
	for (; wr; wr = wr->next) {
		if (prod - q->done >= q->entries) {
			err = -ENOMEM;
			break;
		}
		err = tbr_post_one_send(qp, wr, prod);
		if (err)
			break;
		prod++;
		/* the WQE is written before a reader acquiring prod sees it */
		smp_store_release(&q->ring->prod, prod);
	}
	tbr_qp_kick_sq(qp);
out:
	spin_unlock_irqrestore(&qp->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

static int tbr_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr)
{
	struct tbr_dev *tdev = to_tbr_dev(ibqp->device);
	struct tbr_qp *qp = to_tbr_qp(ibqp);
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->srq || qp->state == IB_QPS_RESET || (qp->user && wr)) {
		err = -EINVAL;
		goto out;
	}
	if (!qp->user)
		err = tbr_recv_post(&qp->rq, qp->max_recv_sge, &wr);
	/* kernel post, or a user RQ doorbell (needed only in ERROR) */
	if (qp->state == IB_QPS_ERR)
		tbr_qp_flush_rings(qp);
	else if (tdev->xport && tdev->xport->rq_posted)
		tdev->xport->rq_posted(qp);
out:
	spin_unlock_irqrestore(&qp->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

const struct ib_device_ops tbr_qp_ops = {
	.create_qp = tbr_create_qp,
	.modify_qp = tbr_modify_qp,
	.query_qp = tbr_query_qp,
	.destroy_qp = tbr_destroy_qp,
	.post_send = tbr_post_send,
	.post_recv = tbr_post_recv,
	INIT_RDMA_OBJ_SIZE(ib_qp, tbr_qp, ibqp),
};
