/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma.h - what the provider's files share: the objects (context, rings,
 * CQ, QP, AH, SRQ), the ring index helpers and the verbs each file provides
 * to the operations table in tbrdma.c.
 */
#ifndef TBRDMA_PROVIDER_H
#define TBRDMA_PROVIDER_H

#include <pthread.h>

/* the private libibverbs ABI of the installed library: provider/Makefile
 * passes TBR_PABI (the N of its IBVERBS_PRIVATE_N) */
#if TBR_PABI == 34
#include "pabi34.h"
#elif TBR_PABI == 57
#include "pabi57.h"
#elif TBR_PABI == 59
#include "pabi59.h"
#elif TBR_PABI == 64
#include "pabi64.h"
#elif TBR_PABI == 65
#include "pabi65.h"
#else
#error "no pabiN.h for this TBR_PABI (provider/Makefile sets it)"
#endif
#include "tbrdma-abi.h"

struct tbr_context {
	struct verbs_context vctx;	/* must be first */
	uint32_t max_sge;
	uint32_t max_inline;
	/* cq.c: the kernel's completion clock, 0 not asked yet, 1 ours, -1 none */
	int ts_clock;
	/* tbrdma.c: our time namespace's CLOCK_MONOTONIC offset, once read */
	int64_t timens_mono_ns;
	bool timens_read;
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
	/* ibv_start_poll .. ibv_end_poll: the CQE the cq_ex shows, or NULL */
	const struct tbrdma_cqe *cur;
	bool ts;	/* CQEs are struct tbrdma_cqe_ts (ibv_create_cq_ex) */
};

struct tbr_qp {
	struct verbs_qp vqp;
	struct tbr_uring sq;
	struct tbr_uring rq;
	uint32_t max_inline;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	bool has_srq;
	/* ibv_wr_start .. ibv_wr_complete/abort (under sq.lock) */
	uint32_t wr_start_idx;	/* sq.idx at ibv_wr_start */
	struct tbrdma_send_wqe *wr_cur;	/* the WQE the setters fill */
	bool wr_need_ud;	/* UD: wr_cur has no address yet */
	int wr_err;		/* first error of the batch */
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

/* a producer ring has no free slot */
static inline bool uring_full(struct tbr_uring *q)
{
	return q->idx - load_acquire(&q->ring->cons) >= q->entries;
}

/* tbrdma.c */
int uring_map(struct ibv_context *ibctx, struct tbr_uring *q, uint64_t offset,
	      uint64_t size, uint32_t entries, uint32_t stride);
void uring_unmap(struct tbr_uring *q);

/* cq.c */
struct ibv_cq *tbr_create_cq(struct ibv_context *ibctx, int cqe,
			     struct ibv_comp_channel *channel, int comp_vector);
struct ibv_cq_ex *tbr_create_cq_ex(struct ibv_context *ibctx,
				   struct ibv_cq_init_attr_ex *attr);
int tbr_destroy_cq(struct ibv_cq *ibcq);
int tbr_resize_cq(struct ibv_cq *ibcq, int cqe);
int tbr_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc);
int tbr_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);

/* qp.c */
struct ibv_qp *tbr_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *tbr_create_qp_ex(struct ibv_context *ibctx,
				struct ibv_qp_init_attr_ex *attr);
int tbr_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask);
int tbr_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
		 struct ibv_qp_init_attr *init_attr);
int tbr_destroy_qp(struct ibv_qp *ibqp);
int tbr_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr);
int tbr_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr);
int tbr_write_recv_wqe(struct tbr_uring *q, uint32_t max_sge,
		       struct ibv_recv_wr *wr);
int tbr_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		struct ibv_mw_bind *mw_bind);

/* qp.c: the send WQE writer both post paths share */
bool tbr_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode op);
void tbr_wqe_init(struct tbrdma_send_wqe *w, uint64_t wr_id,
		  enum ibv_wr_opcode op, unsigned int send_flags);
void tbr_wqe_set_ud(struct tbrdma_send_wqe *w, struct ibv_ah *ah,
		    uint32_t remote_qpn, uint32_t remote_qkey);
int tbr_wqe_set_sges(struct tbr_qp *qp, struct tbrdma_send_wqe *w,
		     const struct ibv_sge *sg, size_t n);
int tbr_wqe_add_inline(struct tbr_qp *qp, struct tbrdma_send_wqe *w,
		       const void *addr, size_t len);
int tbr_wqe_set_bind(struct tbrdma_send_wqe *w, struct ibv_mw *mw,
		     uint32_t rkey, const struct ibv_mw_bind_info *info);
bool tbr_sq_state_ok(struct ibv_qp *ibqp);
void tbr_sq_publish(struct tbr_qp *qp, uint32_t start);

/* qp_ex.c: the ibv_wr_* post API */
int tbr_qp_ex_check(const struct ibv_qp_init_attr_ex *attr);
void tbr_qp_ex_init(struct tbr_qp *qp, uint64_t send_ops_flags);

#endif /* TBRDMA_PROVIDER_H */
