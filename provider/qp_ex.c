// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp_ex.c - the ibv_wr_* post API of a QP created by ibv_create_qp_ex with
 * IBV_QP_INIT_ATTR_SEND_OPS_FLAGS.
 *
 * ibv_wr_start takes the SQ lock and remembers the producer index; each
 * builder (ibv_wr_send, ibv_wr_rdma_write, ...) writes the header of the
 * next SQ slot with the QP's wr_id and wr_flags, the setters (ibv_wr_set_*)
 * complete that slot, all with qp.c's WQE writer, so the kernel sees the
 * same WQEs as from ibv_post_send. Nothing is visible to the kernel before
 * ibv_wr_complete publishes the batch (tbr_sq_publish: the same doorbell
 * rule as ibv_post_send). The first error of a batch (SQ full: ENOMEM; bad
 * input: EINVAL) is kept; ibv_wr_complete then discards the whole batch and
 * returns it, as ibv_wr_abort discards it.
 */
#include <errno.h>

#include "tbrdma.h"

/* what each QP type's opcodes allow (tbr_opcode_ok) */
#define TBR_UD_SEND_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define TBR_UC_SEND_OPS (TBR_UD_SEND_OPS | IBV_QP_EX_WITH_RDMA_WRITE |	\
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |		\
			 IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV)
#define TBR_RC_SEND_OPS (TBR_UC_SEND_OPS | IBV_QP_EX_WITH_RDMA_READ |	\
			 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |		\
			 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |		\
			 IBV_QP_EX_WITH_SEND_WITH_INV)

static inline struct tbr_qp *to_tqp_ex(struct ibv_qp_ex *qpx)
{
	return container_of_tbr(qpx, struct tbr_qp, vqp.qp_ex);
}

int tbr_qp_ex_check(const struct ibv_qp_init_attr_ex *attr)
{
	uint64_t ops;

	/*
	 * CREATE_FLAGS may come with no flag set (rdma-core's tests pick the
	 * mask at random); the kernel implements none of the flags
	 */
	if (attr->comp_mask & ~(IBV_QP_INIT_ATTR_PD |
				IBV_QP_INIT_ATTR_CREATE_FLAGS |
				IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags)
		return EOPNOTSUPP;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD))
		return EINVAL;
	switch (attr->qp_type) {
	case IBV_QPT_RC:
		ops = TBR_RC_SEND_OPS;
		break;
	case IBV_QPT_UC:
		ops = TBR_UC_SEND_OPS;
		break;
	case IBV_QPT_UD:
		ops = TBR_UD_SEND_OPS;
		break;
	default:
		return EOPNOTSUPP;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~ops))
		return EOPNOTSUPP;
	return 0;
}

static void wr_fail(struct tbr_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
}

/* a UD WQE must have had its address set before the next one or complete */
static void wr_check_ud(struct tbr_qp *qp)
{
	if (qp->wr_need_ud)
		wr_fail(qp, EINVAL);
	qp->wr_need_ud = false;
}

/* start the next WQE of the batch: NULL once the batch has failed */
static struct tbrdma_send_wqe *wr_next(struct ibv_qp_ex *qpx,
				       enum ibv_wr_opcode op)
{
	struct tbr_qp *qp = to_tqp_ex(qpx);
	struct tbrdma_send_wqe *w;

	wr_check_ud(qp);
	qp->wr_cur = NULL;
	if (qp->wr_err)
		return NULL;
	if (uring_full(&qp->sq)) {
		wr_fail(qp, ENOMEM);
		return NULL;
	}
	w = slot(&qp->sq, qp->sq.idx++);
	tbr_wqe_init(w, qpx->wr_id, op, qpx->wr_flags);
	qp->wr_cur = w;
	qp->wr_need_ud = qpx->qp_base.qp_type == IBV_QPT_UD;
	return w;
}

/* the WQE a setter completes: NULL (and an error) if there is none */
static struct tbrdma_send_wqe *wr_cur(struct tbr_qp *qp)
{
	if (!qp->wr_cur)
		wr_fail(qp, EINVAL);
	return qp->wr_err ? NULL : qp->wr_cur;
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	wr_next(qpx, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct tbrdma_send_wqe *w = wr_next(qpx, IBV_WR_SEND_WITH_IMM);

	if (w)
		w->imm_data = imm_data;
}

static void wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
		    uint32_t rkey, uint64_t remote_addr, __be32 imm_data)
{
	struct tbrdma_send_wqe *w = wr_next(qpx, op);

	if (!w)
		return;
	w->rkey = rkey;
	w->remote_addr = remote_addr;
	w->imm_data = imm_data;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			  uint64_t remote_addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr, __be32 imm_data)
{
	wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr, imm_data);
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			 uint64_t remote_addr)
{
	wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
		      uint32_t rkey, uint64_t remote_addr,
		      uint64_t compare_add, uint64_t swap)
{
	struct tbrdma_send_wqe *w = wr_next(qpx, op);

	if (!w)
		return;
	w->rkey = rkey;
	w->remote_addr = remote_addr;
	w->compare_add = compare_add;
	w->swap = swap;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr, uint64_t compare,
			      uint64_t swap)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr, compare,
		  swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				uint64_t remote_addr, uint64_t add)
{
	wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr, add, 0);
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct tbrdma_send_wqe *w = wr_next(qpx, IBV_WR_SEND_WITH_INV);

	if (w)
		w->imm_data = invalidate_rkey;
}

/* a local operation: no setter follows (no SGEs, no UD address) */
static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct tbrdma_send_wqe *w = wr_next(qpx, IBV_WR_LOCAL_INV);

	if (w)
		w->imm_data = invalidate_rkey;
	to_tqp_ex(qpx)->wr_cur = NULL;
}

/* a type 2 window (a type 1 is bound with ibv_bind_mw); no setter follows */
static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct tbr_qp *qp = to_tqp_ex(qpx);
	struct tbrdma_send_wqe *w = wr_next(qpx, IBV_WR_BIND_MW);
	int ret;

	if (!w)
		return;
	qp->wr_cur = NULL;
	ret = mw && mw->type == IBV_MW_TYPE_2 ?
	      tbr_wqe_set_bind(w, mw, rkey, info) : EINVAL;
	if (ret)
		wr_fail(qp, ret);
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct tbr_qp *qp = to_tqp_ex(qpx);
	struct tbrdma_send_wqe *w = wr_cur(qp);

	if (!w)
		return;
	if (qpx->qp_base.qp_type != IBV_QPT_UD || !ah) {
		wr_fail(qp, EINVAL);
		return;
	}
	tbr_wqe_set_ud(w, ah, remote_qpn, remote_qkey);
	qp->wr_need_ud = false;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };
	struct tbr_qp *qp = to_tqp_ex(qpx);
	struct tbrdma_send_wqe *w = wr_cur(qp);
	int ret;

	if (!w)
		return;
	ret = tbr_wqe_set_sges(qp, w, &sge, 1);
	if (ret)
		wr_fail(qp, ret);
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
			    const struct ibv_sge *sg_list)
{
	struct tbr_qp *qp = to_tqp_ex(qpx);
	struct tbrdma_send_wqe *w = wr_cur(qp);
	int ret;

	if (!w)
		return;
	ret = tbr_wqe_set_sges(qp, w, sg_list, num_sge);
	if (ret)
		wr_fail(qp, ret);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	struct tbr_qp *qp = to_tqp_ex(qpx);
	struct tbrdma_send_wqe *w = wr_cur(qp);
	size_t i;
	int ret = 0;

	if (!w)
		return;
	w->inline_len = 0;
	w->flags |= TBRDMA_WQE_INLINE;	/* also with no data */
	w->num_sge = 0;
	for (i = 0; i < num_buf && !ret; i++)
		ret = tbr_wqe_add_inline(qp, w, buf_list[i].addr,
					 buf_list[i].length);
	if (ret)
		wr_fail(qp, ret);
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
			       size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(qpx, 1, &buf);
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct tbr_qp *qp = to_tqp_ex(qpx);

	pthread_spin_lock(&qp->sq.lock);
	qp->wr_start_idx = qp->sq.idx;
	qp->wr_cur = NULL;
	qp->wr_need_ud = false;
	qp->wr_err = tbr_sq_state_ok(&qpx->qp_base) ? 0 : EINVAL;
}

/* forget the batch: its slots were never published */
static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct tbr_qp *qp = to_tqp_ex(qpx);

	qp->sq.idx = qp->wr_start_idx;
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct tbr_qp *qp = to_tqp_ex(qpx);
	int ret;

	wr_check_ud(qp);
	ret = qp->wr_err;
	if (ret)
		qp->sq.idx = qp->wr_start_idx;
	else
		tbr_sq_publish(qp, qp->wr_start_idx);
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
	return ret;
}

/* the builders @send_ops_flags asked for, the setters, start/complete/abort */
void tbr_qp_ex_init(struct tbr_qp *qp, uint64_t send_ops_flags)
{
	struct ibv_qp_ex *x = &qp->vqp.qp_ex;

	if (send_ops_flags & IBV_QP_EX_WITH_SEND)
		x->wr_send = wr_send;
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_IMM)
		x->wr_send_imm = wr_send_imm;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE)
		x->wr_rdma_write = wr_rdma_write;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		x->wr_rdma_write_imm = wr_rdma_write_imm;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_READ)
		x->wr_rdma_read = wr_rdma_read;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_INV)
		x->wr_send_inv = wr_send_inv;
	if (send_ops_flags & IBV_QP_EX_WITH_LOCAL_INV)
		x->wr_local_inv = wr_local_inv;
	if (send_ops_flags & IBV_QP_EX_WITH_BIND_MW)
		x->wr_bind_mw = wr_bind_mw;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->comp_mask = 0;
	qp->vqp.comp_mask |= VERBS_QP_EX;
}
