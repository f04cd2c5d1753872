// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: shared receive queues, and the receive-slot helpers the RQ of a
 * QP shares with them.
 *
 * The SRQ ring is produced by userspace (post_srq_recv in the provider,
 * no system call) or by tbr_post_srq_recv() for kernel SRQs, and consumed
 * by the transport through tbr_srq_fetch(). Taking a WQE releases its slot
 * at once: the caller owns the copy until it completes it. When the number
 * of posted WQEs falls below an armed limit, IB_EVENT_SRQ_LIMIT_REACHED is
 * raised once and the limit disarmed (IBTA 10.2.9.3).
 */
#include <linux/log2.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "tbrdma.h"

u32 tbr_recv_stride(u32 max_sge)
{
	return TBRDMA_RECV_WQE_HDR + max_t(u32, max_sge, 1) *
		sizeof(struct tbrdma_sge);
}

/*
 * Copy the receive slot @idx of @q into @wqe, once, and validate the copy.
 * A num_sge above @max_sge yields status IB_WC_LOC_LEN_ERR.
 */
void tbr_recv_slot_read(struct tbr_queue *q, u32 idx, u32 max_sge,
			struct tbr_recv_wqe *wqe)
{
	const struct tbrdma_recv_wqe *s = tbr_queue_slot(q, idx);
	u32 n = READ_ONCE(s->num_sge);

	wqe->wr_id = READ_ONCE(s->wr_id);
	wqe->status = IB_WC_SUCCESS;
	if (n > max_sge) {
		wqe->status = IB_WC_LOC_LEN_ERR;
		n = 0;
	}
	wqe->num_sge = n;
	memcpy(wqe->sge, (const void *)s + TBRDMA_RECV_WQE_HDR,
	       n * sizeof(struct tbrdma_sge));
}

/* Kernel producers: write one receive WR into slot @idx. */
static void tbr_recv_slot_write(struct tbr_queue *q, u32 idx,
				const struct ib_recv_wr *wr)
{
	struct tbrdma_recv_wqe *s = tbr_queue_slot(q, idx);
	struct tbrdma_sge *sge = (void *)s + TBRDMA_RECV_WQE_HDR;
	int i;

	s->wr_id = wr->wr_id;
	s->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
}

/*
 * Kernel post_recv and post_srq_recv: write the WRs of *@wr into @q, each
 * visible to the consumer as soon as it is written. Returns 0, or -EINVAL
 * (more than @max_sge SGEs) or -ENOMEM (ring full) with *@wr the WR that
 * was not posted. The queue's producer lock is held.
 */
int tbr_recv_post(struct tbr_queue *q, u32 max_sge, const struct ib_recv_wr **wr)
{
	u32 prod = q->ring->prod;

	for (; *wr; *wr = (*wr)->next) {
		if ((*wr)->num_sge < 0 || (*wr)->num_sge > max_sge)
			return -EINVAL;
		if (prod - q->kidx >= q->entries)
			return -ENOMEM;
		tbr_recv_slot_write(q, prod, *wr);
		prod++;
		/* the WQE is written before a reader acquiring prod sees it */
		smp_store_release(&q->ring->prod, prod);
	}
	return 0;
}

static int tbr_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
			  struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tbr_dev(ibsrq->device);
	struct tbr_srq *srq = to_tbr_srq(ibsrq);
	struct tbrdma_create_srq_resp resp = {};
	struct ib_srq_attr *a = &init->attr;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!a->max_wr || a->max_wr > TBR_MAX_SRQ_WR || !a->max_sge ||
	    a->max_sge > TBR_MAX_SRQ_SGE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&tdev->num_srq) > TBR_MAX_SRQ) {
		err = -ENOMEM;
		goto err_count;
	}
	spin_lock_init(&srq->lock);
	srq->user = !!udata;
	err = tbr_queue_init(tdev, &srq->q, roundup_pow_of_two(a->max_wr),
			     tbr_recv_stride(a->max_sge), udata);
	if (err)
		goto err_count;
	srq->max_wr = srq->q.entries;
	srq->max_sge = a->max_sge;
	srq->limit = 0;
	a->max_wr = srq->max_wr;
	if (udata) {
		resp.mmap_offset = tbr_queue_mmap_offset(&srq->q);
		resp.mmap_size = srq->q.size;
		resp.entries = srq->q.entries;
		resp.stride = srq->q.stride;
		resp.max_sge = srq->max_sge;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_queue;
	}
	return 0;

err_queue:
	tbr_queue_free(&srq->q);
err_count:
	atomic_dec(&tdev->num_srq);
	return err;
}

static int tbr_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			  enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct tbr_srq *srq = to_tbr_srq(ibsrq);
	unsigned long flags;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR)	/* no IB_DEVICE_SRQ_RESIZE */
		return -EINVAL;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->max_wr)
			return -EINVAL;
		spin_lock_irqsave(&srq->lock, flags);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->lock, flags);
	}
	return 0;
}

static int tbr_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct tbr_srq *srq = to_tbr_srq(ibsrq);

	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

static int tbr_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct tbr_srq *srq = to_tbr_srq(ibsrq);

	tbr_queue_free(&srq->q);
	atomic_dec(&to_tbr_dev(ibsrq->device)->num_srq);
	return 0;
}

/* Kernel SRQs only; user SRQs are produced in shared memory. */
static int tbr_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			     const struct ib_recv_wr **bad_wr)
{
	struct tbr_srq *srq = to_tbr_srq(ibsrq);
	unsigned long flags;
	int err;

	if (srq->user) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->lock, flags);
	err = tbr_recv_post(&srq->q, srq->max_sge, &wr);
	spin_unlock_irqrestore(&srq->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

/*
 * tbr_srq_fetch - take the next receive WQE of an SRQ
 * Context: any, no lock required (takes srq->lock). Returns 0 (check
 * wqe->status), -ENOENT when the SRQ is empty, -EIO when userspace broke
 * the producer index.
 */
int tbr_srq_fetch(struct tbr_srq *srq, struct tbr_recv_wqe *wqe)
{
	struct tbr_queue *q = &srq->q;
	bool limit_event = false;
	unsigned long flags;
	u32 prod, left;
	int err = 0;

	spin_lock_irqsave(&srq->lock, flags);
	/* pairs with the release of prod by the poster: the WQEs below it are written */
	prod = smp_load_acquire(&q->ring->prod);
	if (prod == q->kidx) {
		err = -ENOENT;
	} else if (prod - q->kidx > q->entries) {
		err = -EIO;
	} else {
		tbr_recv_slot_read(q, q->kidx, srq->max_sge, wqe);
		q->kidx++;
		/* the WQE is read before the poster, acquiring cons, may reuse its slot */
		smp_store_release(&q->ring->cons, q->kidx);
		left = prod - q->kidx;
		if (srq->limit && left < srq->limit) {
			srq->limit = 0;
			limit_event = true;
		}
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	if (limit_event && srq->ibsrq.event_handler) {
		struct ib_event ev = {
			.device = srq->ibsrq.device,
			.element.srq = &srq->ibsrq,
			.event = IB_EVENT_SRQ_LIMIT_REACHED,
		};

		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
	return err;
}

const struct ib_device_ops tbr_srq_ops = {
	.create_srq = tbr_create_srq,
	.modify_srq = tbr_modify_srq,
	.query_srq = tbr_query_srq,
	.destroy_srq = tbr_destroy_srq,
	.post_srq_recv = tbr_post_srq_recv,
	INIT_RDMA_OBJ_SIZE(ib_srq, tbr_srq, ibsrq),
};
