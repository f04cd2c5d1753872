// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libtbrdma: the rdma-core userspace provider for tbrdma.ko. This file:
 * device, context, PD, MR, AH, SRQ, async events, multicast attach/detach
 * (plain commands), the operations table and the ring mapping; CQs are in cq.c, QPs in qp.c, the ibv_wr_* API in
 * qp_ex.c.
 *
 * Control verbs go through libibverbs' ibv_cmd_* helpers. The data path is
 * kernel bypass: SQ, RQ, SRQ and CQ are rings mmap'd from the kernel (layout
 * and ordering rules in kernel/uapi/tbrdma-abi.h). poll_cq, req_notify_cq,
 * post_recv and post_srq_recv touch only shared memory; post_send writes
 * the SQ and makes a system call (a zero-WR POST_SEND doorbell) only when
 * the kernel set NEED_DOORBELL.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cq_attr.h"

#include "tbrdma.h"

struct tbr_device {
	struct verbs_device vdev;
};

static inline struct tbr_srq *to_tsrq(struct ibv_srq *srq)
{
	return container_of_tbr(srq, struct tbr_srq, vsrq.srq);
}

static struct tbr_context *ctx_of(struct ibv_context *ibctx)
{
	return container_of_tbr(ibctx, struct tbr_context, vctx.context);
}

int uring_map(struct ibv_context *ibctx, struct tbr_uring *q,
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

void uring_unmap(struct tbr_uring *q)
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

/*
 * our time namespace's CLOCK_MONOTONIC offset (0 outside one), read once; the
 * file shows the namespace of our children, which is ours unless this
 * process unshared CLONE_NEWTIME itself and has not forked since (then the
 * raw clock is its children's: not handled, a rare setup)
 */
static int64_t timens_offset(struct tbr_context *ctx)
{
	char text[256];
	ssize_t n = -1;
	int64_t off;
	int fd;

	if (__atomic_load_n(&ctx->timens_read, __ATOMIC_ACQUIRE))
		return ctx->timens_mono_ns;
	fd = open("/proc/self/timens_offsets", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
	}
	text[n > 0 ? n : 0] = 0;
	off = tbr_timens_mono_offset(text);
	ctx->timens_mono_ns = off;	/* every caller stores the same value */
	__atomic_store_n(&ctx->timens_read, true, __ATOMIC_RELEASE);
	return off;
}

/*
 * The device's raw clock, in the ticks of the CQEs' completion timestamps
 * (hca_core_clock TBRDMA_CLOCK_KHZ: ns): the kernel's CLOCK_MONOTONIC, which
 * clock_gettime reads (vDSO, no system call) less our time namespace's
 * offset. As mlx5: raw_clock.tv_sec 0, tv_nsec the tick count.
 */
static int tbr_query_rt_values(struct ibv_context *ibctx,
			       struct ibv_values_ex *values)
{
	uint32_t out = 0;
	struct timespec t;

	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		if (clock_gettime(CLOCK_MONOTONIC, &t))
			return errno;
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (int64_t)t.tv_sec * 1000000000 +
			t.tv_nsec - timens_offset(ctx_of(ibctx));
		out |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	values->comp_mask = out;
	return 0;
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

/*
 * libibverbs checked the flags and updates mr->pd/addr/length on success;
 * the kernel returns the new keys. Returns 0 or an errno value (also in
 * errno), which ibv_rereg_mr reports as IBV_REREG_MR_ERR_CMD.
 */
static int tbr_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access)
{
	struct ibv_rereg_mr cmd;
	struct ib_uverbs_rereg_mr_resp resp;
	int ret;

	ret = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret)
		errno = ret;
	return ret;
}

static int tbr_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

/* ---- memory windows (the kernel's mw.c) ---------------------------------- */

static struct ibv_mw *tbr_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibv_alloc_mw cmd = {};
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_mw *mw = calloc(1, sizeof(*mw));
	int ret;

	if (!mw)
		return NULL;
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

static int tbr_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (!ret)
		free(mw);
	return ret;
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
	.query_rt_values = tbr_query_rt_values,
	.query_port = tbr_query_port,
	.alloc_pd = tbr_alloc_pd,
	.dealloc_pd = tbr_dealloc_pd,
	.reg_mr = tbr_reg_mr,
	.rereg_mr = tbr_rereg_mr,
	.dereg_mr = tbr_dereg_mr,
	.alloc_mw = tbr_alloc_mw,
	.dealloc_mw = tbr_dealloc_mw,
	.bind_mw = tbr_bind_mw,
	.create_cq = tbr_create_cq,
	.create_cq_ex = tbr_create_cq_ex,
	.destroy_cq = tbr_destroy_cq,
	.resize_cq = tbr_resize_cq,
	.poll_cq = tbr_poll_cq,
	.req_notify_cq = tbr_req_notify_cq,
	.create_ah = tbr_create_ah,
	.destroy_ah = tbr_destroy_ah,
	.create_qp = tbr_create_qp,
	.create_qp_ex = tbr_create_qp_ex,
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
	.attach_mcast = ibv_cmd_attach_mcast,
	.detach_mcast = ibv_cmd_detach_mcast,
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
	if (tbr_pabi_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp.ibv_resp,
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
	tbr_pabi_register_driver(&tbr_dev_ops);
}
