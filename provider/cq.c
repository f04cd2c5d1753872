// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cq.c - completion queues: the CQ ring mmap'd from the kernel, read by
 * ibv_poll_cq and by the extended CQ (ibv_create_cq_ex: ibv_start_poll,
 * ibv_next_poll, ibv_end_poll and the ibv_wc_read_* accessors). Both read
 * the same ring under the same lock, so a CQ created with ibv_create_cq_ex
 * can be polled either way. No system call on the poll path.
 * A CQ created with a completion timestamp wc_flag has 64-byte CQEs (struct
 * tbrdma_cqe_ts: the kernel's CLOCK_MONOTONIC and CLOCK_REALTIME in ns when
 * it wrote the CQE); the device's clock is 1 GHz (TBRDMA_CLOCK_KHZ) and
 * ibv_query_rt_values_ex reads the same CLOCK_MONOTONIC (tbrdma.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cq_attr.h"
#include "tbrdma.h"

struct tbr_create_cq_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct tbrdma_create_cq_resp drv;
};

struct tbr_create_cq_ex_resp {
	struct ib_uverbs_ex_create_cq_resp ibv_resp;
	struct tbrdma_create_cq_resp drv;
};

struct tbr_resize_cq_resp {
	struct ib_uverbs_resize_cq_resp ibv_resp;
	struct tbrdma_resize_cq_resp drv;
};

static inline struct tbr_cq *to_tcq_ex(struct ibv_cq_ex *cq)
{
	return container_of_tbr(cq, struct tbr_cq, vcq.cq_ex);
}

/* @cq->ts says which CQE format we asked for; the kernel must answer it */
static int cq_map(struct tbr_cq *cq, struct ibv_context *ibctx,
		  const struct tbrdma_create_cq_resp *drv)
{
	if (drv->stride != tbr_cqe_stride(cq->ts))
		return EPROTO;
	return uring_map(ibctx, &cq->q, drv->mmap_offset, drv->mmap_size,
			 drv->entries, drv->stride);
}

struct ibv_cq *tbr_create_cq(struct ibv_context *ibctx, int cqe,
			     struct ibv_comp_channel *channel, int comp_vector)
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
	ret = cq_map(cq, ibctx, &resp.drv);
	if (ret) {
		ibv_cmd_destroy_cq(&cq->vcq.cq);
		goto err_free;
	}
	return &cq->vcq.cq;

err_free:
	free(cq);
	errno = ret;
	return NULL;
}

/* ---- extended CQ: poll one CQE at a time, read its fields -------------- */

/* show the CQE at q.idx, if the kernel produced it */
static int cq_ex_show(struct tbr_cq *cq)
{
	struct tbr_uring *q = &cq->q;

	if (q->idx == load_acquire(&q->ring->prod)) {
		cq->cur = NULL;
		return ENOENT;
	}
	cq->cur = slot(q, q->idx);
	cq->vcq.cq_ex.wr_id = cq->cur->wr_id;
	cq->vcq.cq_ex.status = cq->cur->status;
	return 0;
}

/* on 0 the lock stays held until ibv_end_poll */
static int cq_ex_start_poll(struct ibv_cq_ex *ibcq,
			    struct ibv_poll_cq_attr *attr)
{
	struct tbr_cq *cq = to_tcq_ex(ibcq);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->q.lock);
	ret = cq_ex_show(cq);
	if (ret)
		pthread_spin_unlock(&cq->q.lock);
	return ret;
}

/*
 * The CQE shown is consumed and the next one shown. After ENOENT nothing is
 * shown and q.idx already names the next slot, so a later call looks at that
 * slot again and finds a CQE the kernel produced since (as mlx5 does: a
 * caller may keep calling ibv_next_poll until it has what it waits for).
 */
static int cq_ex_next_poll(struct ibv_cq_ex *ibcq)
{
	struct tbr_cq *cq = to_tcq_ex(ibcq);

	if (cq->cur)
		cq->q.idx++;
	return cq_ex_show(cq);
}

/* the CQEs shown are consumed: hand their slots back to the kernel */
static void cq_ex_end_poll(struct ibv_cq_ex *ibcq)
{
	struct tbr_cq *cq = to_tcq_ex(ibcq);

	if (cq->cur)
		cq->q.idx++;
	cq->cur = NULL;
	store_release(&cq->q.ring->cons, cq->q.idx);
	pthread_spin_unlock(&cq->q.lock);
}

static enum ibv_wc_opcode cq_ex_read_opcode(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur->opcode;
}

static uint32_t cq_ex_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur->vendor_err;
}

static uint32_t cq_ex_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur->byte_len;
}

/* the immediate (network order) or, with IBV_WC_WITH_INV, the rkey */
static __be32 cq_ex_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur->imm_data;
}

static uint32_t cq_ex_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur->qp_num;
}

static uint32_t cq_ex_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur->src_qp;
}

static unsigned int cq_ex_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur->wc_flags;
}

static uint32_t cq_ex_read_slid(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur->slid;
}

static uint8_t cq_ex_read_sl(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur->sl;
}

static uint8_t cq_ex_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return to_tcq_ex(ibcq)->cur->dlid_path_bits;
}

static const struct tbrdma_cqe_ts *cur_ts(struct ibv_cq_ex *ibcq)
{
	return container_of_tbr(to_tcq_ex(ibcq)->cur, struct tbrdma_cqe_ts, cqe);
}

/* device clock ticks (hca_core_clock 1 GHz): the kernel's CLOCK_MONOTONIC ns */
static uint64_t cq_ex_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return cur_ts(ibcq)->ts_ns;
}

static uint64_t cq_ex_read_completion_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	return cur_ts(ibcq)->wall_ns;
}

/* the poll functions always; a field accessor only if wc_flags asked for it */
static void cq_ex_init(struct ibv_cq_ex *x, uint64_t wc_flags)
{
	x->start_poll = cq_ex_start_poll;
	x->next_poll = cq_ex_next_poll;
	x->end_poll = cq_ex_end_poll;
	x->read_opcode = cq_ex_read_opcode;
	x->read_vendor_err = cq_ex_read_vendor_err;
	x->read_wc_flags = cq_ex_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		x->read_byte_len = cq_ex_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		x->read_imm_data = cq_ex_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		x->read_qp_num = cq_ex_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		x->read_src_qp = cq_ex_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		x->read_slid = cq_ex_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		x->read_sl = cq_ex_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		x->read_dlid_path_bits = cq_ex_read_dlid_path_bits;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		x->read_completion_ts = cq_ex_read_completion_ts;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		x->read_completion_wallclock_ns =
			cq_ex_read_completion_wallclock_ns;
}

/*
 * The kernel gives timestamps if it reports our clock: a kernel older than
 * the 64-byte CQE reports hca_core_clock 0 (and refuses the create flag
 * with EINVAL), so the request is refused cleanly with EOPNOTSUPP. Asked
 * once per context (a create is a slow path anyway).
 */
static int cq_ts_supported(struct ibv_context *ibctx)
{
	struct tbr_context *ctx = container_of_tbr(ibctx, struct tbr_context,
						   vctx.context);
	struct ibv_device_attr_ex da;
	int clock;

	clock = __atomic_load_n(&ctx->ts_clock, __ATOMIC_RELAXED);
	if (!clock) {
		memset(&da, 0, sizeof(da));
		if (ibv_query_device_ex(ibctx, NULL, &da))
			return errno ? errno : EIO;
		clock = da.hca_core_clock == TBRDMA_CLOCK_KHZ ? 1 : -1;
		__atomic_store_n(&ctx->ts_clock, clock, __ATOMIC_RELAXED);
	}
	return clock > 0 ? 0 : EOPNOTSUPP;
}

/*
 * libibverbs calls this through ibv_create_cq_ex and initialises the ibv_cq
 * part (context, channel, cq_context) afterwards.
 */
struct ibv_cq_ex *tbr_create_cq_ex(struct ibv_context *ibctx,
				   struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_create_cq_ex cmd;
	struct tbr_create_cq_ex_resp resp;
	struct ibv_cq_init_attr_ex kattr = *attr;
	struct tbr_cq *cq;
	bool ts;
	int ret;

	ret = tbr_cq_ex_attr_check(attr->wc_flags, attr->comp_mask, attr->flags,
				   &ts);
	if (!ret && ts)
		ret = cq_ts_supported(ibctx);
	if (ret) {
		errno = ret;
		return NULL;
	}
	/*
	 * libibverbs turns IBV_WC_EX_WITH_COMPLETION_TIMESTAMP into the
	 * command's IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION (the kernel's
	 * choice of CQE format); the wallclock alone needs the same CQE
	 */
	if (ts)
		kattr.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	cq->ts = ts;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = tbr_pabi_create_cq_ex(ibctx, &kattr, &cq->vcq, &cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp), 0);
	if (ret)
		goto err_free;
	ret = cq_map(cq, ibctx, &resp.drv);
	if (ret) {
		ibv_cmd_destroy_cq(&cq->vcq.cq);
		goto err_free;
	}
	cq_ex_init(&cq->vcq.cq_ex, attr->wc_flags);
	return &cq->vcq.cq_ex;

err_free:
	free(cq);
	errno = ret;
	return NULL;
}

int tbr_destroy_cq(struct ibv_cq *ibcq)
{
	struct tbr_cq *cq = to_tcq(ibcq);
	int ret = ibv_cmd_destroy_cq(ibcq);

	if (ret)
		return ret;
	uring_unmap(&cq->q);
	free(cq);
	return 0;
}

int tbr_resize_cq(struct ibv_cq *ibcq, int cqe)
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
	if (!ret && resp.drv.stride != cq->q.stride)
		ret = EPROTO;	/* the CQ keeps its CQE format */
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

int tbr_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
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
int tbr_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct tbr_cq *cq = to_tcq(ibcq);

	__atomic_fetch_or(&cq->q.ring->arm, solicited_only ?
			  TBRDMA_CQ_ARM_SOLICITED : TBRDMA_CQ_ARM_NEXT,
			  __ATOMIC_SEQ_CST);
	return 0;
}
