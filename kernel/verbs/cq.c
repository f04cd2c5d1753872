// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: completion queues.
 *
 * The CQ is a ring of struct tbrdma_cqe shared with userspace (the provider
 * polls it without a system call) or, for kernel consumers, read by
 * tbr_poll_cq(). The kernel is the only producer: tbr_cq_post() is the one
 * place completions enter a CQ (transport, flush path, tests), so it is
 * where a user CQ created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION gets
 * its completion timestamps (struct tbrdma_cqe_ts, tbrdma-abi.h).
 */
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "compat.h"
#include "tbrdma.h"

static u32 tbr_wc_flags_to_user(int f)
{
	u32 u = 0;

	if (f & IB_WC_GRH)
		u |= TBRDMA_WC_GRH;
	if (f & IB_WC_WITH_IMM)
		u |= TBRDMA_WC_WITH_IMM;
	if (f & IB_WC_WITH_INVALIDATE)
		u |= TBRDMA_WC_WITH_INV;
	return u;
}

/* the CQE's sl: a UD receive's network header type (tbrdma-abi.h), else the wc's sl */
static u8 tbr_wc_sl_to_user(const struct ib_wc *wc)
{
	if (!(wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE))
		return wc->sl;
	return TBRDMA_CQE_SL_ROCE_V2 | (wc->network_hdr_type == RDMA_NETWORK_IPV4 ?
					TBRDMA_CQE_SL_IPV4 : TBRDMA_CQE_SL_IPV6);
}

static int tbr_wc_flags_from_user(u32 u)
{
	int f = 0;

	if (u & TBRDMA_WC_GRH)
		f |= IB_WC_GRH;
	if (u & TBRDMA_WC_WITH_IMM)
		f |= IB_WC_WITH_IMM;
	if (u & TBRDMA_WC_WITH_INV)
		f |= IB_WC_WITH_INVALIDATE;
	return f;
}

static struct tbrdma_cqe *tbr_cq_slot(struct tbr_queue *q, u32 idx)
{
	return q->slots + (size_t)(idx & q->mask) * q->stride;
}

/* the CQ's arm word says a completion event is due: consume the arm */
static bool tbr_cq_take_arm(struct tbr_cq *cq, bool solicited)
{
	u32 *arm = &cq->q.ring->arm;
	u32 old = READ_ONCE(*arm), prev;

	for (;;) {
		if (!(old & TBRDMA_CQ_ARM_NEXT) &&
		    !((old & TBRDMA_CQ_ARM_SOLICITED) && solicited))
			return false;
		prev = cmpxchg(arm, old, 0);
		if (prev == old)
			return true;
		old = prev;
	}
}

static void tbr_cq_error_event(struct tbr_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/*
 * The completion's time, in the CQE a timestamp CQ's consumer reads: both
 * clocks are read under cq->lock, so ts_ns is in ring order. A CQ without
 * timestamps pays one test of cq->ts.
 */
static void tbr_cqe_stamp(struct tbrdma_cqe *cqe)
{
	struct tbrdma_cqe_ts *t = container_of(cqe, struct tbrdma_cqe_ts, cqe);

	t->ts_ns = ktime_get_ns();
	t->wall_ns = ktime_get_real_ns();
}

/*
 * tbr_cq_post - add one completion to @cq.
 * @wc: the completion; wc->qp must be set. @solicited: the message asked
 * for a solicited event (error completions always count as solicited).
 * Context: any; takes cq->lock with IRQs disabled. The completion event
 * (ibcq->comp_handler) or the overflow event is raised after cq->lock is
 * dropped; callers may hold their QP lock (uverbs and ib_cq handlers only
 * queue work) but no other tbrdma lock.
 * Returns 0, or -ENOSPC when the CQ is full or broken (the CQE is dropped).
 */
int tbr_cq_post(struct tbr_cq *cq, const struct ib_wc *wc, bool solicited)
{
	struct tbr_queue *q;
	struct tbrdma_cqe *cqe;
	unsigned long flags;
	bool notify = false, overflow = false;
	u32 prod, cons;

	spin_lock_irqsave(&cq->lock, flags);
	q = &cq->q;
	if (cq->overflow)
		goto out_drop;
	prod = q->kidx;
	/*
	 * pairs with the provider's store_release of cons (provider/cq.c): it
	 * read the CQEs below cons, so their slots may be written again
	 */
	cons = cq->user ? smp_load_acquire(&q->ring->cons) : q->done;
	if ((u32)(prod - cons) >= q->entries) {	/* full, or a bogus cons */
		cq->overflow = true;
		overflow = true;
		WRITE_ONCE(q->ring->flags,
			   READ_ONCE(q->ring->flags) | TBRDMA_RING_OVERFLOW);
		goto out_drop;
	}
	cqe = tbr_cq_slot(q, prod);
	*cqe = (struct tbrdma_cqe){
		.wr_id = wc->wr_id,
		.status = wc->status,
		.opcode = wc->opcode,
		.vendor_err = wc->vendor_err,
		.byte_len = wc->byte_len,
		.imm_data = (wc->wc_flags & IB_WC_WITH_INVALIDATE) ?
			wc->ex.invalidate_rkey : (__force u32)wc->ex.imm_data,
		.qp_num = wc->qp ? wc->qp->qp_num : 0,
		.src_qp = wc->src_qp,
		.wc_flags = tbr_wc_flags_to_user(wc->wc_flags),
		.pkey_index = wc->pkey_index,
		.slid = wc->slid,
		.sl = tbr_wc_sl_to_user(wc),
		.dlid_path_bits = wc->dlid_path_bits,
	};
	if (cq->ts)
		tbr_cqe_stamp(cqe);
	if (cq->wc_qp)
		cq->wc_qp[prod & q->mask] = wc->qp;
	q->kidx = prod + 1;
	/*
	 * pairs with the provider's load_acquire of prod (provider/cq.c): the
	 * CQE is written before it is seen; a kernel CQ is polled under
	 * cq->lock from q->kidx (tbr_poll_cq)
	 */
	smp_store_release(&q->ring->prod, prod + 1);
	notify = tbr_cq_take_arm(cq, solicited || wc->status != IB_WC_SUCCESS);
	spin_unlock_irqrestore(&cq->lock, flags);

	if (notify && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return 0;

out_drop:
	spin_unlock_irqrestore(&cq->lock, flags);
	if (overflow) {
		pr_debug_ratelimited("tbrdma: CQ %p overflow\n", cq);
		tbr_cq_error_event(cq);
	}
	return -ENOSPC;
}

static u32 tbr_cq_entries(int cqe)
{
	return roundup_pow_of_two(max(cqe, 1));
}

static int tbr_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			 TBR_CREATE_CQ_UDATA_ARG)
{
	struct ib_udata *udata = TBR_CREATE_CQ_UDATA(TBR_CREATE_CQ_UDATA_NAME);
	struct tbr_dev *tdev = to_tbr_dev(ibcq->device);
	struct tbr_cq *cq = to_tbr_cq(ibcq);
	struct tbrdma_create_cq_resp resp = {};
	int err;

	if ((attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION) ||
	    attr->cqe < 1 || attr->cqe > TBR_MAX_CQE ||
	    attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	/* a timestamp has no place in an ib_wc: user CQs only */
	if ((attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION) && !udata)
		return -EOPNOTSUPP;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&tdev->num_cq) > TBR_MAX_CQ) {
		err = -ENOMEM;
		goto err_count;
	}
	spin_lock_init(&cq->lock);
	cq->user = !!udata;
	cq->ts = !!(attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION);
	err = tbr_queue_init(tdev, &cq->q, tbr_cq_entries(attr->cqe),
			     cq->ts ? sizeof(struct tbrdma_cqe_ts) :
			     sizeof(struct tbrdma_cqe), udata);
	if (err)
		goto err_count;
	if (!udata) {
		cq->wc_qp = kcalloc(cq->q.entries, sizeof(*cq->wc_qp),
				    GFP_KERNEL);
		if (!cq->wc_qp) {
			err = -ENOMEM;
			goto err_queue;
		}
	}
	ibcq->cqe = cq->q.entries;
	if (udata) {
		resp.mmap_offset = tbr_queue_mmap_offset(&cq->q);
		resp.mmap_size = cq->q.size;
		resp.entries = cq->q.entries;
		resp.stride = cq->q.stride;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_queue;
	}
	return 0;

err_queue:
	kfree(cq->wc_qp);
	tbr_queue_free(&cq->q);
err_count:
	atomic_dec(&tdev->num_cq);
	return err;
}

static int tbr_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct tbr_cq *cq = to_tbr_cq(ibcq);

	tbr_queue_free(&cq->q);
	kfree(cq->wc_qp);
	atomic_dec(&to_tbr_dev(ibcq->device)->num_cq);
	return 0;
}

/*
 * Resize: a new ring of the same CQE format receives the pending CQEs in
 * order (the consumer continues at index 0 of the new ring); the old one is
 * released.
 */
static int tbr_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tbr_dev(ibcq->device);
	struct tbr_cq *cq = to_tbr_cq(ibcq);
	struct tbrdma_resize_cq_resp resp = {};
	struct tbr_queue nq, oq;
	struct ib_qp **nwc = NULL, **owc;
	unsigned long flags;
	u32 prod, cons, n, i;
	int err;

	if (cqe < 1 || cqe > TBR_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = tbr_queue_init(tdev, &nq, tbr_cq_entries(cqe), cq->q.stride,
			     udata);
	if (err)
		return err;
	if (!cq->user) {
		nwc = kcalloc(nq.entries, sizeof(*nwc), GFP_KERNEL);
		if (!nwc) {
			tbr_queue_free(&nq);
			return -ENOMEM;
		}
	}

	spin_lock_irqsave(&cq->lock, flags);
	prod = cq->q.kidx;
	/* as in tbr_cq_post(): the provider is done with the CQEs below cons */
	cons = cq->user ? smp_load_acquire(&cq->q.ring->cons) : cq->q.done;
	n = prod - cons;
	if (n > cq->q.entries || n > nq.entries) {
		spin_unlock_irqrestore(&cq->lock, flags);
		kfree(nwc);
		tbr_queue_free(&nq);
		return n > cq->q.entries ? -EIO : -EINVAL;
	}
	for (i = 0; i < n; i++) {
		memcpy(tbr_cq_slot(&nq, i), tbr_cq_slot(&cq->q, cons + i),
		       nq.stride);
		if (nwc)
			nwc[i] = cq->wc_qp[(cons + i) & cq->q.mask];
	}
	nq.ring->flags = READ_ONCE(cq->q.ring->flags);
	nq.ring->arm = READ_ONCE(cq->q.ring->arm);
	nq.ring->prod = n;
	nq.kidx = n;
	oq = cq->q;
	cq->q = nq;
	owc = cq->wc_qp;
	cq->wc_qp = nwc;
	ibcq->cqe = nq.entries;
	spin_unlock_irqrestore(&cq->lock, flags);

	tbr_queue_free(&oq);
	kfree(owc);
	if (udata) {
		resp.mmap_offset = tbr_queue_mmap_offset(&nq);
		resp.mmap_size = nq.size;
		resp.entries = nq.entries;
		resp.stride = nq.stride;
		return ib_copy_to_udata(udata, &resp, sizeof(resp));
	}
	return 0;
}

/* Kernel consumers only (user CQs are polled from shared memory). */
static int tbr_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct tbr_cq *cq = to_tbr_cq(ibcq);
	struct tbr_queue *q = &cq->q;
	unsigned long flags;
	int n = 0;

	if (cq->user)
		return -EINVAL;
	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && q->done != q->kidx) {
		const struct tbrdma_cqe *cqe = tbr_cq_slot(q, q->done);
		struct ib_wc *w = &wc[n++];

		memset(w, 0, sizeof(*w));
		w->wr_id = cqe->wr_id;
		w->status = cqe->status;
		w->opcode = cqe->opcode;
		w->vendor_err = cqe->vendor_err;
		w->byte_len = cqe->byte_len;
		w->wc_flags = tbr_wc_flags_from_user(cqe->wc_flags);
		if (w->wc_flags & IB_WC_WITH_INVALIDATE)
			w->ex.invalidate_rkey = cqe->imm_data;
		else
			w->ex.imm_data = (__force __be32)cqe->imm_data;
		w->qp = cq->wc_qp[q->done & q->mask];
		w->src_qp = cqe->src_qp;
		w->pkey_index = cqe->pkey_index;
		w->slid = cqe->slid;
		if ((w->wc_flags & IB_WC_GRH) && (cqe->sl & TBRDMA_CQE_SL_ROCE_V2)) {
			w->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
			w->network_hdr_type =
				(cqe->sl & TBRDMA_CQE_SL_L3_MASK) == TBRDMA_CQE_SL_IPV4 ?
				RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
		} else {
			w->sl = cqe->sl;
		}
		w->dlid_path_bits = cqe->dlid_path_bits;
		w->port_num = 1;
		q->done++;
		/*
		 * pairs with no acquire: a kernel CQ's consumer index is
		 * q->done, read under cq->lock (tbr_cq_post,
		 * tbr_req_notify_cq); ring->cons only follows it
		 */
		smp_store_release(&q->ring->cons, q->done);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

static int tbr_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags nf)
{
	struct tbr_cq *cq = to_tbr_cq(ibcq);
	u32 bit = (nf & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
		TBRDMA_CQ_ARM_SOLICITED : TBRDMA_CQ_ARM_NEXT;
	unsigned long flags;
	u32 old;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, flags);
	old = READ_ONCE(cq->q.ring->arm);
	while (cmpxchg(&cq->q.ring->arm, old, old | bit) != old)
		old = READ_ONCE(cq->q.ring->arm);
	if ((nf & IB_CQ_REPORT_MISSED_EVENTS) &&
	    cq->q.kidx != (cq->user ? READ_ONCE(cq->q.ring->cons) : cq->q.done))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, flags);
	return ret;
}

const struct ib_device_ops tbr_cq_ops = {
	.create_cq = tbr_create_cq,
	.destroy_cq = tbr_destroy_cq,
	.resize_cq = tbr_resize_cq,
	.poll_cq = tbr_poll_cq,
	.req_notify_cq = tbr_req_notify_cq,
	INIT_RDMA_OBJ_SIZE(ib_cq, tbr_cq, ibcq),
};
