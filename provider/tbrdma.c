// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libtbrdma: the rdma-core userspace provider for tbrdma.ko.
 *
 * Control verbs go through libibverbs' ibv_cmd_* helpers. The data path is
 * kernel bypass: SQ, RQ, SRQ and CQ are rings mmap'd from the kernel (layout
 * and ordering rules in kernel/uapi/tbrdma-abi.h). poll_cq, req_notify_cq,
 * post_recv and post_srq_recv touch only shared memory; post_send writes
 * the SQ and makes a system call (a zero-WR POST_SEND doorbell) only when
 * the kernel set NEED_DOORBELL.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pabi34.h"
#include "tbrdma-abi.h"

struct tbr_device {
	struct verbs_device vdev;
};

struct tbr_context {
	struct verbs_context vctx;	/* must be first */
	uint32_t max_sge;
	uint32_t max_inline;
};

/* one mmap'd ring */
struct tbr_uring {
	struct tbrdma_ring *ring;
	void *slots;
	size_t map_size;
	uint32_t entries;
	uint32_t stride;
	uint32_t idx;		/* our index: producer (SQ/RQ/SRQ) or consumer (CQ) */
	pthread_spinlock_t lock;
};

struct tbr_cq {
	struct verbs_cq vcq;
	struct tbr_uring q;
};

struct tbr_qp {
	struct verbs_qp vqp;
	struct tbr_uring sq;
	struct tbr_uring rq;
	uint32_t max_inline;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	bool has_srq;
};

struct tbr_ah {
	struct ibv_ah ibah;
	uint32_t ah_num;	/* the kernel's number for UD send WQEs */
};

struct tbr_srq {
	struct verbs_srq vsrq;
	struct tbr_uring q;
	uint32_t max_sge;
};

#define container_of_tbr(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline struct tbr_cq *to_tcq(struct ibv_cq *cq)
{
	return container_of_tbr(cq, struct tbr_cq, vcq.cq);
}

static inline struct tbr_qp *to_tqp(struct ibv_qp *qp)
{
	return container_of_tbr(qp, struct tbr_qp, vqp.qp);
}

static inline struct tbr_srq *to_tsrq(struct ibv_srq *srq)
{
	return container_of_tbr(srq, struct tbr_srq, vsrq.srq);
}

static struct tbr_context *ctx_of(struct ibv_context *ibctx)
{
	return container_of_tbr(ibctx, struct tbr_context, vctx.context);
}

static inline uint32_t load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void store_release(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline void *slot(struct tbr_uring *q, uint32_t idx)
{
	return (char *)q->slots + (size_t)(idx & (q->entries - 1)) * q->stride;
}

static int uring_map(struct ibv_context *ibctx, struct tbr_uring *q,
		     uint64_t offset, uint64_t size, uint32_t entries,
		     uint32_t stride)
{
	void *p;

	if (!entries || (entries & (entries - 1)) ||
	    size < TBRDMA_RING_HDR_SIZE + (uint64_t)entries * stride)
		return EINVAL;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 ibctx->cmd_fd, offset);
	if (p == MAP_FAILED)
		return errno;
	q->ring = p;
	q->slots = (char *)p + TBRDMA_RING_HDR_SIZE;
	q->map_size = size;
	q->entries = entries;
	q->stride = stride;
	q->idx = 0;
	pthread_spin_init(&q->lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

static void uring_unmap(struct tbr_uring *q)
{
	if (q->ring) {
		munmap(q->ring, q->map_size);
		pthread_spin_destroy(&q->lock);
	}
	q->ring = NULL;
}

/* ---- device and context ---------------------------------------------- */

static int tbr_query_device_ex(struct ibv_context *ibctx,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);

	return ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
					&resp_size);
}

static int tbr_query_port(struct ibv_context *ibctx, uint8_t port,
			  struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *tbr_alloc_pd(struct ibv_context *ibctx)
{
	struct ibv_alloc_pd cmd;
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_pd *pd = calloc(1, sizeof(*pd));

	if (!pd)
		return NULL;
	if (ibv_cmd_alloc_pd(ibctx, pd, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		free(pd);
		return NULL;
	}
	return pd;
}

static int tbr_dealloc_pd(struct ibv_pd *pd)
{
	int ret = ibv_cmd_dealloc_pd(pd);

	if (!ret)
		free(pd);
	return ret;
}

static struct ibv_mr *tbr_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access)
{
	struct ibv_reg_mr cmd;
	struct ib_uverbs_reg_mr_resp resp;
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	int ret;

	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int tbr_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

/* ---- CQ ---------------------------------------------------------------- */

struct tbr_create_cq_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct tbrdma_create_cq_resp drv;
};

struct tbr_resize_cq_resp {
	struct ib_uverbs_resize_cq_resp ibv_resp;
	struct tbrdma_resize_cq_resp drv;
};

static struct ibv_cq *tbr_create_cq(struct ibv_context *ibctx, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector)
{
	struct ibv_create_cq cmd;
	struct tbr_create_cq_resp resp;
	struct tbr_cq *cq = calloc(1, sizeof(*cq));
	int ret;

	if (!cq)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd, sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	if (resp.drv.stride != sizeof(struct tbrdma_cqe)) {
		ret = EPROTO;
		goto err_destroy;
	}
	ret = uring_map(ibctx, &cq->q, resp.drv.mmap_offset, resp.drv.mmap_size,
			resp.drv.entries, resp.drv.stride);
	if (ret)
		goto err_destroy;
	return &cq->vcq.cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

static int tbr_destroy_cq(struct ibv_cq *ibcq)
{
	struct tbr_cq *cq = to_tcq(ibcq);
	int ret = ibv_cmd_destroy_cq(ibcq);

	if (ret)
		return ret;
	uring_unmap(&cq->q);
	free(cq);
	return 0;
}

static int tbr_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct tbr_cq *cq = to_tcq(ibcq);
	struct ibv_resize_cq cmd;
	struct tbr_resize_cq_resp resp;
	struct tbr_uring nq = {};
	int ret;

	memset(&resp, 0, sizeof(resp));
	pthread_spin_lock(&cq->q.lock);
	/* the kernel copies the CQEs we have not consumed yet */
	store_release(&cq->q.ring->cons, cq->q.idx);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (!ret)
		ret = uring_map(ibcq->context, &nq, resp.drv.mmap_offset,
				resp.drv.mmap_size, resp.drv.entries,
				resp.drv.stride);
	if (!ret) {
		munmap(cq->q.ring, cq->q.map_size);
		cq->q.ring = nq.ring;
		cq->q.slots = nq.slots;
		cq->q.map_size = nq.map_size;
		cq->q.entries = nq.entries;
		cq->q.idx = 0;
		pthread_spin_destroy(&nq.lock);
	}
	pthread_spin_unlock(&cq->q.lock);
	return ret;
}

static int tbr_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct tbr_cq *cq = to_tcq(ibcq);
	struct tbr_uring *q = &cq->q;
	uint32_t prod;
	int n = 0;

	pthread_spin_lock(&q->lock);
	prod = load_acquire(&q->ring->prod);
	while (n < ne && q->idx != prod) {
		const struct tbrdma_cqe *c = slot(q, q->idx);
		struct ibv_wc *w = &wc[n++];

		w->wr_id = c->wr_id;
		w->status = c->status;
		w->opcode = c->opcode;
		w->vendor_err = c->vendor_err;
		w->byte_len = c->byte_len;
		w->imm_data = c->imm_data;	/* or invalidated_rkey */
		w->qp_num = c->qp_num;
		w->src_qp = c->src_qp;
		w->wc_flags = c->wc_flags;
		w->pkey_index = c->pkey_index;
		w->slid = c->slid;
		w->sl = c->sl;
		w->dlid_path_bits = c->dlid_path_bits;
		q->idx++;
	}
	if (n)
		store_release(&q->ring->cons, q->idx);
	pthread_spin_unlock(&q->lock);
	return n;
}

/* no system call: the kernel reads the arm word when it posts a CQE */
static int tbr_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct tbr_cq *cq = to_tcq(ibcq);

	__atomic_fetch_or(&cq->q.ring->arm, solicited_only ?
			  TBRDMA_CQ_ARM_SOLICITED : TBRDMA_CQ_ARM_NEXT,
			  __ATOMIC_SEQ_CST);
	return 0;
}

/* ---- AH ---------------------------------------------------------------- */

struct tbr_create_ah_resp {
	struct ib_uverbs_create_ah_resp ibv_resp;
	struct tbrdma_create_ah_resp drv;
};

/* the kernel resolves the destination MAC (RoCE) and numbers the AH */
static struct ibv_ah *tbr_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct tbr_create_ah_resp resp;
	struct tbr_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_ah(pd, &ah->ibah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ah_num = resp.drv.ah_num;
	return &ah->ibah;
}

static int tbr_destroy_ah(struct ibv_ah *ibah)
{
	int ret = ibv_cmd_destroy_ah(ibah);

	if (ret)
		return ret;
	free(container_of_tbr(ibah, struct tbr_ah, ibah));
	return 0;
}

/* ---- QP ---------------------------------------------------------------- */

struct tbr_create_qp_resp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct tbrdma_create_qp_resp drv;
};

static struct ibv_qp *tbr_create_qp(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr)
{
	struct ibv_create_qp cmd;
	struct tbr_create_qp_resp resp;
	struct tbr_qp *qp;
	int ret;

	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD) {
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
	qp->max_inline = resp.drv.max_inline;
	qp->max_send_sge = resp.drv.max_send_sge;
	qp->max_recv_sge = resp.drv.max_recv_sge;
	qp->has_srq = attr->srq != NULL;
	ret = uring_map(pd->context, &qp->sq, resp.drv.sq_mmap_offset,
			resp.drv.sq_mmap_size, resp.drv.sq_entries,
			resp.drv.sq_stride);
	if (ret)
		goto err_destroy;
	if (!qp->has_srq) {
		ret = uring_map(pd->context, &qp->rq, resp.drv.rq_mmap_offset,
				resp.drv.rq_mmap_size, resp.drv.rq_entries,
				resp.drv.rq_stride);
		if (ret)
			goto err_unmap;
	}
	attr->cap.max_inline_data = qp->max_inline;
	return &qp->vqp.qp;

err_unmap:
	uring_unmap(&qp->sq);
err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

static int tbr_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			 int mask)
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

static int tbr_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			int mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(ibqp, attr, mask, init_attr, &cmd, sizeof(cmd));
}

static int tbr_destroy_qp(struct ibv_qp *ibqp)
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

static bool tbr_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return type == IBV_QPT_RC || type == IBV_QPT_UC;
	/* SEND_WITH_INV: no key can be invalidated (no MEM_MGT_EXTENSIONS) */
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return type == IBV_QPT_RC;
	default:
		return false;
	}
}

static int tbr_write_send_wqe(struct tbr_qp *qp, struct ibv_send_wr *wr,
			      void *s)
{
	struct tbrdma_send_wqe *w = s;
	char *body = (char *)s + TBRDMA_SEND_WQE_HDR;
	uint32_t len = 0;
	int i;

	if (!tbr_opcode_ok(qp->vqp.qp.qp_type, wr->opcode) || wr->num_sge < 0)
		return EINVAL;
	memset(w, 0, TBRDMA_SEND_WQE_HDR);
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	if (wr->send_flags & IBV_SEND_SIGNALED)
		w->flags |= TBRDMA_WQE_SIGNALED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		w->flags |= TBRDMA_WQE_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		w->flags |= TBRDMA_WQE_FENCE;
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
	default:
		break;
	}
	if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
		if (!wr->wr.ud.ah)
			return EINVAL;
		w->ah_num = container_of_tbr(wr->wr.ud.ah, struct tbr_ah,
					     ibah)->ah_num;
		w->remote_qpn = wr->wr.ud.remote_qpn;
		w->remote_qkey = wr->wr.ud.remote_qkey;
	}
	if ((wr->send_flags & IBV_SEND_INLINE) && wr->opcode != IBV_WR_RDMA_READ &&
	    wr->opcode != IBV_WR_ATOMIC_CMP_AND_SWP &&
	    wr->opcode != IBV_WR_ATOMIC_FETCH_AND_ADD) {
		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length > qp->max_inline - len)
				return EINVAL;
			memcpy(body + len, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		w->flags |= TBRDMA_WQE_INLINE;
		w->inline_len = len;
		return 0;
	}
	if ((uint32_t)wr->num_sge > qp->max_send_sge)
		return EINVAL;
	w->num_sge = wr->num_sge;
	memcpy(body, wr->sg_list, wr->num_sge * sizeof(struct tbrdma_sge));
	return 0;
}

static int tbr_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr)
{
	struct tbr_qp *qp = to_tqp(ibqp);
	struct tbr_uring *q = &qp->sq;
	struct ibv_send_wr *bad_db;
	uint32_t start;
	int ret = 0;

	switch (ibqp->state) {
	case IBV_QPS_RTS:
	case IBV_QPS_SQD:
	case IBV_QPS_ERR:
		break;
	default:
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&q->lock);
	start = q->idx;
	for (; wr; wr = wr->next) {
		if (q->idx - load_acquire(&q->ring->cons) >= q->entries) {
			ret = ENOMEM;
			break;
		}
		ret = tbr_write_send_wqe(qp, wr, slot(q, q->idx));
		if (ret)
			break;
		q->idx++;
	}
	if (q->idx != start) {
		store_release(&q->ring->prod, q->idx);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&q->ring->flags, __ATOMIC_RELAXED) &
		    (TBRDMA_RING_NEED_DOORBELL | TBRDMA_RING_QP_ERROR))
			ibv_cmd_post_send(ibqp, NULL, &bad_db);
	}
	pthread_spin_unlock(&q->lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/* write one receive WR into a RQ/SRQ slot */
static int tbr_write_recv_wqe(struct tbr_uring *q, uint32_t max_sge,
			      struct ibv_recv_wr *wr)
{
	struct tbrdma_recv_wqe *w;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge)
		return EINVAL;
	if (q->idx - load_acquire(&q->ring->cons) >= q->entries)
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

static int tbr_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
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

/* ---- SRQ --------------------------------------------------------------- */

struct tbr_create_srq_resp {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct tbrdma_create_srq_resp drv;
};

static struct ibv_srq *tbr_create_srq(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr)
{
	struct ibv_create_srq cmd;
	struct tbr_create_srq_resp resp;
	struct tbr_srq *srq = calloc(1, sizeof(*srq));
	int ret;

	if (!srq)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	srq->max_sge = resp.drv.max_sge;
	ret = uring_map(pd->context, &srq->q, resp.drv.mmap_offset,
			resp.drv.mmap_size, resp.drv.entries, resp.drv.stride);
	if (ret) {
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
		goto err_free;
	}
	return &srq->vsrq.srq;

err_free:
	free(srq);
	errno = ret;
	return NULL;
}

static int tbr_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int mask)
{
	struct ibv_modify_srq cmd;

	return ibv_cmd_modify_srq(srq, attr, mask, &cmd, sizeof(cmd));
}

static int tbr_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

static int tbr_destroy_srq(struct ibv_srq *ibsrq)
{
	struct tbr_srq *srq = to_tsrq(ibsrq);
	int ret = ibv_cmd_destroy_srq(ibsrq);

	if (ret)
		return ret;
	uring_unmap(&srq->q);
	free(srq);
	return 0;
}

static int tbr_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr)
{
	struct tbr_srq *srq = to_tsrq(ibsrq);
	struct tbr_uring *q = &srq->q;
	uint32_t start;
	int ret = 0;

	pthread_spin_lock(&q->lock);
	start = q->idx;
	for (; wr; wr = wr->next) {
		ret = tbr_write_recv_wqe(q, srq->max_sge, wr);
		if (ret)
			break;
	}
	if (q->idx != start)
		store_release(&q->ring->prod, q->idx);
	pthread_spin_unlock(&q->lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

/* ---- async events ---------------------------------------------------- */

static void tbr_async_event(struct ibv_context *ibctx,
			    struct ibv_async_event *event)
{
	switch (event->event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
		/* the kernel moved the QP to ERROR; posting flushes from now */
		event->element.qp->state = IBV_QPS_ERR;
		break;
	default:
		break;
	}
}

static void tbr_free_context(struct ibv_context *ibctx)
{
	struct tbr_context *ctx = ctx_of(ibctx);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops tbr_ctx_ops = {
	.query_device_ex = tbr_query_device_ex,
	.query_port = tbr_query_port,
	.alloc_pd = tbr_alloc_pd,
	.dealloc_pd = tbr_dealloc_pd,
	.reg_mr = tbr_reg_mr,
	.dereg_mr = tbr_dereg_mr,
	.create_cq = tbr_create_cq,
	.destroy_cq = tbr_destroy_cq,
	.resize_cq = tbr_resize_cq,
	.poll_cq = tbr_poll_cq,
	.req_notify_cq = tbr_req_notify_cq,
	.create_ah = tbr_create_ah,
	.destroy_ah = tbr_destroy_ah,
	.create_qp = tbr_create_qp,
	.modify_qp = tbr_modify_qp,
	.query_qp = tbr_query_qp,
	.destroy_qp = tbr_destroy_qp,
	.post_send = tbr_post_send,
	.post_recv = tbr_post_recv,
	.create_srq = tbr_create_srq,
	.modify_srq = tbr_modify_srq,
	.query_srq = tbr_query_srq,
	.destroy_srq = tbr_destroy_srq,
	.post_srq_recv = tbr_post_srq_recv,
	.async_event = tbr_async_event,
	.free_context = tbr_free_context,
};

struct tbr_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct tbrdma_alloc_ucontext_resp drv;
};

static struct verbs_context *tbr_alloc_context(struct ibv_device *ibdev,
					       int cmd_fd, void *private_data)
{
	struct ibv_get_context cmd;
	struct tbr_get_context_resp resp;
	struct tbr_context *ctx;

	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx),
					    (struct verbs_context *)
					    offsetof(struct tbr_context, vctx),
					    0 /* RDMA_DRIVER_UNKNOWN */);
	if (!ctx)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	if (ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp)))
		goto err;
	if (resp.drv.abi_version != TBRDMA_UVERBS_ABI_VERSION ||
	    resp.drv.ring_hdr_size != TBRDMA_RING_HDR_SIZE) {
		fprintf(stderr, "libtbrdma: kernel ABI %u (ring header %u) != %u\n",
			resp.drv.abi_version, resp.drv.ring_hdr_size,
			TBRDMA_UVERBS_ABI_VERSION);
		errno = EPROTO;
		goto err;
	}
	ctx->max_sge = resp.drv.max_sge;
	ctx->max_inline = resp.drv.max_inline;
	verbs_set_ops(&ctx->vctx, &tbr_ctx_ops);
	return &ctx->vctx;

err:
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	return NULL;
}

static struct verbs_device *tbr_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct tbr_device *dev = calloc(1, sizeof(*dev));

	return dev ? &dev->vdev : NULL;
}

static void tbr_uninit_device(struct verbs_device *vdev)
{
	free(container_of_tbr(vdev, struct tbr_device, vdev));
}

/* out-of-tree driver (RDMA_DRIVER_UNKNOWN): match the device name */
static const struct verbs_match_ent tbr_match_table[] = {
	{ .u.modalias = "rdma_device:*Ntbrdma*", .kind = VERBS_MATCH_MODALIAS },
	{ .kind = VERBS_MATCH_SENTINEL },
};

static const struct verbs_device_ops tbr_dev_ops = {
	.name = "tbrdma",
	.match_min_abi_version = 1,
	.match_max_abi_version = 1,
	.match_table = tbr_match_table,
	.alloc_device = tbr_alloc_device,
	.uninit_device = tbr_uninit_device,
	.alloc_context = tbr_alloc_context,
};

static void __attribute__((constructor)) tbr_register(void)
{
	verbs_register_driver_34(&tbr_dev_ops);
}
