// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp.c - queue pairs: creation (ibv_create_qp and ibv_create_qp_ex), the
 * state verbs, and the data path of ibv_post_send and ibv_post_recv. The
 * send WQE writer here is shared with the ibv_wr_* API (qp_ex.c): both
 * write the same SQ slots and publish them the same way (tbr_sq_publish:
 * store prod, full barrier, doorbell only on NEED_DOORBELL or QP_ERROR).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tbrdma.h"

struct tbr_create_qp_resp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct tbrdma_create_qp_resp drv;
};

struct tbr_create_qp_ex_resp {
	struct ib_uverbs_ex_create_qp_resp ibv_resp;
	struct tbrdma_create_qp_resp drv;
};

/* map SQ and (without an SRQ) RQ; on error the caller destroys the QP */
static int qp_map(struct tbr_qp *qp, struct ibv_context *ibctx,
		  const struct tbrdma_create_qp_resp *drv, bool has_srq,
		  uint32_t *max_inline_data)
{
	int ret;

	qp->max_inline = drv->max_inline;
	qp->max_send_sge = drv->max_send_sge;
	qp->max_recv_sge = drv->max_recv_sge;
	qp->has_srq = has_srq;
	ret = uring_map(ibctx, &qp->sq, drv->sq_mmap_offset, drv->sq_mmap_size,
			drv->sq_entries, drv->sq_stride);
	if (ret)
		return ret;
	if (!has_srq) {
		ret = uring_map(ibctx, &qp->rq, drv->rq_mmap_offset,
				drv->rq_mmap_size, drv->rq_entries,
				drv->rq_stride);
		if (ret) {
			uring_unmap(&qp->sq);
			return ret;
		}
	}
	*max_inline_data = qp->max_inline;
	return 0;
}

static bool qp_type_ok(enum ibv_qp_type type)
{
	return type == IBV_QPT_RC || type == IBV_QPT_UC || type == IBV_QPT_UD;
}

struct ibv_qp *tbr_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_create_qp cmd;
	struct tbr_create_qp_resp resp;
	struct tbr_qp *qp;
	int ret;

	if (!qp_type_ok(attr->qp_type)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = qp_map(qp, pd->context, &resp.drv, attr->srq != NULL,
		     &attr->cap.max_inline_data);
	if (ret) {
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		goto err_free;
	}
	return &qp->vqp.qp;

err_free:
	free(qp);
	errno = ret;
	return NULL;
}

/*
 * ibv_create_qp_ex with more than IBV_QP_INIT_ATTR_PD (libibverbs sends a
 * PD-only request to tbr_create_qp). The kernel sees the same QP creation
 * either way; IBV_QP_INIT_ATTR_SEND_OPS_FLAGS only adds the ibv_wr_* API.
 */
struct ibv_qp *tbr_create_qp_ex(struct ibv_context *ibctx,
				struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_create_qp_ex cmd;
	struct tbr_create_qp_ex_resp resp;
	struct tbr_qp *qp;
	int ret;

	ret = tbr_qp_ex_check(attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = tbr_pabi_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd, sizeof(cmd),
				     &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = qp_map(qp, ibctx, &resp.drv, attr->srq != NULL,
		     &attr->cap.max_inline_data);
	if (ret) {
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		goto err_free;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		tbr_qp_ex_init(qp, attr->send_ops_flags);
	return &qp->vqp.qp;

err_free:
	free(qp);
	errno = ret;
	return NULL;
}

int tbr_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct tbr_qp *qp = to_tqp(ibqp);
	struct ibv_modify_qp cmd;
	int ret;

	pthread_spin_lock(&qp->sq.lock);
	if (!qp->has_srq)
		pthread_spin_lock(&qp->rq.lock);
	ret = ibv_cmd_modify_qp(ibqp, attr, mask, &cmd, sizeof(cmd));
	if (!ret && (mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		qp->sq.idx = 0;	/* the kernel emptied both rings */
		qp->rq.idx = 0;
	}
	if (!qp->has_srq)
		pthread_spin_unlock(&qp->rq.lock);
	pthread_spin_unlock(&qp->sq.lock);
	return ret;
}

int tbr_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
		 struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(ibqp, attr, mask, init_attr, &cmd, sizeof(cmd));
}

int tbr_destroy_qp(struct ibv_qp *ibqp)
{
	struct tbr_qp *qp = to_tqp(ibqp);
	int ret = ibv_cmd_destroy_qp(ibqp);

	if (ret)
		return ret;
	uring_unmap(&qp->sq);
	uring_unmap(&qp->rq);
	free(qp);
	return 0;
}

/* ---- the send WQE writer ------------------------------------------------ */

bool tbr_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	/* memory windows: bind, and invalidate a type 2 window's rkey */
	case IBV_WR_BIND_MW:
	case IBV_WR_LOCAL_INV:
		return type == IBV_QPT_RC || type == IBV_QPT_UC;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return type == IBV_QPT_RC;
	default:
		return false;
	}
}

static bool opcode_inline_ok(uint32_t op)
{
	return op != IBV_WR_RDMA_READ && op != IBV_WR_ATOMIC_CMP_AND_SWP &&
	       op != IBV_WR_ATOMIC_FETCH_AND_ADD && op != IBV_WR_BIND_MW &&
	       op != IBV_WR_LOCAL_INV;
}

/* the header of a WQE without addresses, SGEs or payload */
void tbr_wqe_init(struct tbrdma_send_wqe *w, uint64_t wr_id,
		  enum ibv_wr_opcode op, unsigned int send_flags)
{
	memset(w, 0, TBRDMA_SEND_WQE_HDR);
	w->wr_id = wr_id;
	w->opcode = op;
	if (send_flags & IBV_SEND_SIGNALED)
		w->flags |= TBRDMA_WQE_SIGNALED;
	if (send_flags & IBV_SEND_SOLICITED)
		w->flags |= TBRDMA_WQE_SOLICITED;
	if (send_flags & IBV_SEND_FENCE)
		w->flags |= TBRDMA_WQE_FENCE;
}

void tbr_wqe_set_ud(struct tbrdma_send_wqe *w, struct ibv_ah *ah,
		    uint32_t remote_qpn, uint32_t remote_qkey)
{
	w->ah_num = container_of_tbr(ah, struct tbr_ah, ibah)->ah_num;
	w->remote_qpn = remote_qpn;
	w->remote_qkey = remote_qkey;
}

/*
 * A BIND_MW WQE's fields (tbrdma-abi.h): @mw gets @rkey and @info's range
 * of @info->mr (none for a zero-length bind). Zero-based windows are not
 * supported: EINVAL.
 */
int tbr_wqe_set_bind(struct tbrdma_send_wqe *w, struct ibv_mw *mw,
		     uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	if (!mw || (info->mw_access_flags & IBV_ACCESS_ZERO_BASED) ||
	    (!info->mr && info->length))
		return EINVAL;
	w->rkey = mw->rkey;
	w->imm_data = rkey;
	w->remote_addr = info->addr;
	w->compare_add = info->length;
	w->mr_lkey = info->mr ? info->mr->lkey : 0;
	w->mw_access = info->mw_access_flags;
	return 0;
}

/* the data of @w: @n SGEs (replacing any SGEs or inline payload) */
int tbr_wqe_set_sges(struct tbr_qp *qp, struct tbrdma_send_wqe *w,
		     const struct ibv_sge *sg, size_t n)
{
	if (n > qp->max_send_sge)
		return EINVAL;
	w->flags &= ~TBRDMA_WQE_INLINE;
	w->inline_len = 0;
	w->num_sge = n;
	/* struct ibv_sge and struct tbrdma_sge have the same layout */
	memcpy((char *)w + TBRDMA_SEND_WQE_HDR, sg,
	       n * sizeof(struct tbrdma_sge));
	return 0;
}

/* append @len bytes to the inline payload of @w */
int tbr_wqe_add_inline(struct tbr_qp *qp, struct tbrdma_send_wqe *w,
		       const void *addr, size_t len)
{
	if (!opcode_inline_ok(w->opcode) || len > qp->max_inline - w->inline_len)
		return EINVAL;
	memcpy((char *)w + TBRDMA_SEND_WQE_HDR + w->inline_len, addr, len);
	w->inline_len += len;
	w->flags |= TBRDMA_WQE_INLINE;
	w->num_sge = 0;
	return 0;
}

static int write_send_wqe(struct tbr_qp *qp, struct ibv_send_wr *wr,
			  struct tbrdma_send_wqe *w)
{
	int i, ret;

	if (!tbr_opcode_ok(qp->vqp.qp.qp_type, wr->opcode) || wr->num_sge < 0)
		return EINVAL;
	tbr_wqe_init(w, wr->wr_id, wr->opcode, wr->send_flags);
	w->imm_data = wr->imm_data;
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		w->imm_data = wr->invalidate_rkey;
		if (wr->opcode == IBV_WR_LOCAL_INV)
			return 0;
		break;
	case IBV_WR_BIND_MW:
		/* a type 1 window is bound with ibv_bind_mw only */
		if (!wr->bind_mw.mw || wr->bind_mw.mw->type != IBV_MW_TYPE_2)
			return EINVAL;
		return tbr_wqe_set_bind(w, wr->bind_mw.mw, wr->bind_mw.rkey,
					&wr->bind_mw.bind_info);
	default:
		break;
	}
	if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
		if (!wr->wr.ud.ah)
			return EINVAL;
		tbr_wqe_set_ud(w, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
			       wr->wr.ud.remote_qkey);
	}
	if ((wr->send_flags & IBV_SEND_INLINE) && opcode_inline_ok(wr->opcode)) {
		w->flags |= TBRDMA_WQE_INLINE;	/* even with no data */
		for (i = 0; i < wr->num_sge; i++) {
			ret = tbr_wqe_add_inline(qp, w, (void *)(uintptr_t)
						 wr->sg_list[i].addr,
						 wr->sg_list[i].length);
			if (ret)
				return ret;
		}
		return 0;
	}
	return tbr_wqe_set_sges(qp, w, wr->sg_list, wr->num_sge);
}

/* posting is allowed in RTS, SQD and (to be flushed) ERROR */
bool tbr_sq_state_ok(struct ibv_qp *ibqp)
{
	switch (ibqp->state) {
	case IBV_QPS_RTS:
	case IBV_QPS_SQD:
	case IBV_QPS_ERR:
		return true;
	default:
		return false;
	}
}

/*
 * Hand the WQEs written since @start to the kernel (under sq.lock): store
 * prod, full barrier, then ring the doorbell (a zero-WR POST_SEND) only if
 * no kernel agent polls the SQ or the QP is in ERROR (to flush).
 */
void tbr_sq_publish(struct tbr_qp *qp, uint32_t start)
{
	struct tbr_uring *q = &qp->sq;
	struct ibv_send_wr *bad_db;

	if (q->idx == start)
		return;
	store_release(&q->ring->prod, q->idx);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&q->ring->flags, __ATOMIC_RELAXED) &
	    (TBRDMA_RING_NEED_DOORBELL | TBRDMA_RING_QP_ERROR))
		ibv_cmd_post_send(&qp->vqp.qp, NULL, &bad_db);
}

int tbr_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr)
{
	struct tbr_qp *qp = to_tqp(ibqp);
	struct tbr_uring *q = &qp->sq;
	uint32_t start;
	int ret = 0;

	if (!tbr_sq_state_ok(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&q->lock);
	start = q->idx;
	for (; wr; wr = wr->next) {
		if (uring_full(q)) {
			ret = ENOMEM;
			break;
		}
		ret = write_send_wqe(qp, wr, slot(q, q->idx));
		if (ret)
			break;
		q->idx++;
	}
	tbr_sq_publish(qp, start);
	pthread_spin_unlock(&q->lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/*
 * ibv_bind_mw (libibverbs checked: a type 1 window, an MR of its PD or no MR
 * with a zero range): a BIND_MW WQE like a type 2 bind's, with the window's
 * next key byte (ibv_inc_rkey), which mw->rkey takes at once. The bind runs
 * in send queue order; if it fails, its completion (MW_BIND_ERR) says so
 * and the QP goes to error, as for any WR.
 */
int tbr_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		struct ibv_mw_bind *mw_bind)
{
	struct tbr_qp *qp = to_tqp(ibqp);
	struct tbr_uring *q = &qp->sq;
	struct tbrdma_send_wqe *w;
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	int ret;

	if (!tbr_sq_state_ok(ibqp) ||
	    !tbr_opcode_ok(ibqp->qp_type, IBV_WR_BIND_MW))
		return EINVAL;
	pthread_spin_lock(&q->lock);
	if (uring_full(q)) {
		ret = ENOMEM;
		goto out;
	}
	w = slot(q, q->idx);
	tbr_wqe_init(w, mw_bind->wr_id, IBV_WR_BIND_MW, mw_bind->send_flags);
	ret = tbr_wqe_set_bind(w, mw, rkey, &mw_bind->bind_info);
	if (ret)
		goto out;
	q->idx++;
	tbr_sq_publish(qp, q->idx - 1);
	mw->rkey = rkey;
out:
	pthread_spin_unlock(&q->lock);
	return ret;
}

/* write one receive WR into a RQ/SRQ slot */
int tbr_write_recv_wqe(struct tbr_uring *q, uint32_t max_sge,
		       struct ibv_recv_wr *wr)
{
	struct tbrdma_recv_wqe *w;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge)
		return EINVAL;
	if (uring_full(q))
		return ENOMEM;
	w = slot(q, q->idx);
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	w->rsvd = 0;
	memcpy((char *)w + TBRDMA_RECV_WQE_HDR, wr->sg_list,
	       wr->num_sge * sizeof(struct tbrdma_sge));
	q->idx++;
	return 0;
}

int tbr_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr)
{
	struct tbr_qp *qp = to_tqp(ibqp);
	struct tbr_uring *q = &qp->rq;
	struct ibv_recv_wr *bad_db;
	uint32_t start;
	int ret = 0;

	if (qp->has_srq || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&q->lock);
	start = q->idx;
	for (; wr; wr = wr->next) {
		ret = tbr_write_recv_wqe(q, qp->max_recv_sge, wr);
		if (ret)
			break;
	}
	if (q->idx != start) {
		store_release(&q->ring->prod, q->idx);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		/* only a QP in ERROR needs the kernel (to flush) */
		if (__atomic_load_n(&q->ring->flags, __ATOMIC_RELAXED) &
		    TBRDMA_RING_QP_ERROR)
			ibv_cmd_post_recv(ibqp, NULL, &bad_db);
	}
	pthread_spin_unlock(&q->lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}
