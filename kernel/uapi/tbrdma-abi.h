/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * tbrdma user/kernel ABI: the create responses and the queues that the
 * kernel shares with the userspace provider (libtbrdma-rdmav34.so).
 *
 * Fixed-width types only; every structure has an explicit layout with no
 * implicit padding. The same header is compiled into tbrdma.ko and into the
 * provider.
 *
 * Queues
 * ------
 * Every queue (CQ, SQ, RQ, SRQ) is one mapping: a struct tbrdma_ring header
 * (TBRDMA_RING_HDR_SIZE bytes) followed by `entries` slots of `stride` bytes.
 * `entries` is a power of two; prod and cons are free-running 32-bit
 * counters, slot = index & (entries - 1), the number of filled slots is
 * (u32)(prod - cons) and never exceeds `entries`. The mapping is obtained
 * with mmap(cmd_fd, offset = mmap_offset, length = mmap_size) from the create
 * response.
 *
 *   queue  producer  consumer   flags (kernel -> user)      arm (user -> kernel)
 *   SQ     user      kernel     NEED_DOORBELL, QP_ERROR     -
 *   RQ     user      kernel     QP_ERROR                    -
 *   SRQ    user      kernel     -                           -
 *   CQ     kernel    user       OVERFLOW                    TBRDMA_CQ_ARM_*
 *
 * Ordering rules
 * --------------
 * - Producer: write the whole slot, then store prod with release semantics
 *   (smp_store_release / __atomic_store_n(..., __ATOMIC_RELEASE)).
 * - Consumer: load prod with acquire semantics, then read the slot; when
 *   done with the slot store cons with release semantics. The producer loads
 *   cons with acquire semantics before it reuses a slot.
 * - Each side writes only its own index. The kernel never trusts a value
 *   userspace wrote: it copies a slot into kernel memory once (READ_ONCE) and
 *   validates the copy; an index that claims more than `entries` filled
 *   slots is treated as a broken queue (QP -> error, CQ -> overflow).
 * - SQ doorbell: the kernel sets TBRDMA_RING_NEED_DOORBELL while no kernel
 *   agent is polling the SQ. After storing prod the provider issues a full
 *   barrier (__atomic_thread_fence(__ATOMIC_SEQ_CST)) and loads flags; if
 *   NEED_DOORBELL is set it rings the doorbell: an IB_USER_VERBS_CMD_POST_SEND
 *   write() on the context's cmd_fd with wr_count = 0. A kernel agent that
 *   stops polling sets NEED_DOORBELL, issues smp_mb() and re-reads prod, so a
 *   WQE is never left without either a poller or a doorbell.
 * - QP_ERROR: set on SQ and RQ while the QP is in the ERROR state. WQEs
 *   posted then must be flushed by the kernel, so the provider rings the
 *   doorbell (POST_SEND or POST_RECV with zero WRs) after posting.
 * - CQ arm: ibv_req_notify_cq ORs TBRDMA_CQ_ARM_NEXT or
 *   TBRDMA_CQ_ARM_SOLICITED into `arm` with an atomic read-modify-write
 *   (no system call). When the kernel posts a CQE that satisfies the arm it
 *   atomically clears `arm` (cmpxchg) and raises the completion event on the
 *   CQ's completion channel. Standard verbs usage (arm, then poll once more)
 *   closes the race with a CQE posted just before arming.
 * - CQ overflow: the kernel never overwrites an unconsumed CQE. When the CQ
 *   is full it sets TBRDMA_RING_OVERFLOW, drops the CQE and reports
 *   IBV_EVENT_CQ_ERR on the async event channel; the CQ is then unusable.
 *
 * CQE formats
 * -----------
 * A CQ's slots are struct tbrdma_cqe (48 bytes), or struct tbrdma_cqe_ts
 * (64 bytes: the same fields, then two timestamps) when the CQ was created
 * with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION (the standard flag of the
 * extended create command, which libibverbs sets for
 * IBV_WC_EX_WITH_COMPLETION_TIMESTAMP). The create and resize responses'
 * `stride` names the format; a CQ keeps its format for its life (resize
 * too). A kernel without timestamps refuses the flag (EINVAL), and one
 * with them never gives the 64-byte format to a CQ that did not ask, so a
 * provider of either age works with a kernel of either age, or is refused
 * at create. The device's clock (ibv_query_device_ex) is then
 * hca_core_clock = TBRDMA_CLOCK_KHZ and completion_timestamp_mask ~0:
 * one tick is one nanosecond of the kernel's CLOCK_MONOTONIC.
 */
#ifndef TBRDMA_ABI_USER_H
#define TBRDMA_ABI_USER_H

#include <linux/types.h>

#define TBRDMA_UVERBS_ABI_VERSION	1

#define TBRDMA_RING_HDR_SIZE	192	/* three 64-byte cache lines */

/* struct tbrdma_ring.flags (written by the kernel only) */
#define TBRDMA_RING_NEED_DOORBELL	(1U << 0)	/* SQ: no kernel poller */
#define TBRDMA_RING_OVERFLOW		(1U << 1)	/* CQ: a CQE was lost */
#define TBRDMA_RING_QP_ERROR		(1U << 2)	/* SQ/RQ: QP is in ERROR */

/* struct tbrdma_ring.arm (CQ only; set by the user, cleared by the kernel) */
#define TBRDMA_CQ_ARM_SOLICITED		(1U << 0)
#define TBRDMA_CQ_ARM_NEXT		(1U << 1)

struct tbrdma_ring {
	__u32 prod;		/* producer index, free running */
	__u32 rsvd0[15];
	__u32 cons;		/* consumer index, free running */
	__u32 rsvd1[15];
	__u32 flags;		/* TBRDMA_RING_* */
	__u32 arm;		/* TBRDMA_CQ_ARM_* */
	__u32 rsvd2[14];
	/* slots follow at TBRDMA_RING_HDR_SIZE */
};

struct tbrdma_sge {
	__u64 addr;
	__u32 length;
	__u32 lkey;
};

/* struct tbrdma_send_wqe.flags */
#define TBRDMA_WQE_SIGNALED	(1U << 0)
#define TBRDMA_WQE_SOLICITED	(1U << 1)
#define TBRDMA_WQE_INLINE	(1U << 2)
#define TBRDMA_WQE_FENCE	(1U << 3)

/*
 * Send queue slot. opcode is an enum ib_uverbs_wr_opcode (== enum
 * ibv_wr_opcode). After the 80-byte header come num_sge struct tbrdma_sge,
 * or, with TBRDMA_WQE_INLINE, inline_len bytes of payload (num_sge is then
 * ignored). imm_data is the immediate in network byte order, or the rkey to
 * invalidate for SEND_WITH_INV and LOCAL_INV (host order).
 * BIND_MW (no SGEs; also what ibv_bind_mw of a type 1 window posts): rkey is
 * the window's rkey (its index names it), imm_data the new rkey (host
 * order, same index), remote_addr and compare_add the window's address and
 * length, mr_lkey the MR's lkey, mw_access its IBV_ACCESS_REMOTE_* rights.
 */
struct tbrdma_send_wqe {
	__u64 wr_id;
	__u32 opcode;
	__u32 flags;		/* TBRDMA_WQE_* */
	__u32 num_sge;
	__u32 inline_len;
	__u32 imm_data;
	__u32 rkey;		/* RDMA and atomic operations */
	__u64 remote_addr;
	__u64 compare_add;	/* CMP_AND_SWP: compare; FETCH_AND_ADD: add */
	__u64 swap;
	__u32 ah_num;		/* UD: tbrdma_create_ah_resp.ah_num */
	__u32 remote_qpn;	/* UD */
	__u32 remote_qkey;	/* UD; high bit set: the QP's own Q_Key */
	__u32 mr_lkey;		/* BIND_MW */
	__u32 mw_access;	/* BIND_MW */
	__u16 pkey_index;	/* QP1 (GSI, kernel only): the P_Key slot it
				 * goes with; ignored for every other QP
				 */
	__u16 rsvd;
	/* struct tbrdma_sge sge[num_sge] or __u8 inline_data[inline_len] */
};
#define TBRDMA_SEND_WQE_HDR	80

/* Receive queue and shared receive queue slot: header + num_sge SGEs. */
struct tbrdma_recv_wqe {
	__u64 wr_id;
	__u32 num_sge;
	__u32 rsvd;
	/* struct tbrdma_sge sge[num_sge] */
};
#define TBRDMA_RECV_WQE_HDR	16

/*
 * Completion queue slot. status is an enum ib_wc_status (== ibv_wc_status),
 * opcode an enum ib_uverbs_wc_opcode (== ibv_wc_opcode), wc_flags uses the
 * IBV_WC_* bit values of libibverbs (TBRDMA_WC_*). imm_data is in network
 * byte order (or the invalidated rkey with TBRDMA_WC_WITH_INV).
 */
#define TBRDMA_WC_GRH		(1U << 0)	/* IBV_WC_GRH */
#define TBRDMA_WC_WITH_IMM	(1U << 1)	/* IBV_WC_WITH_IMM */
#define TBRDMA_WC_WITH_INV	(1U << 3)	/* IBV_WC_WITH_INV */

/*
 * RoCE has no service level on the wire: a UD receive's sl reports its network header type
 * instead, as mlx5 does (libibverbs' ibv_wc has no other field for it, and UCX's UD transport
 * reads it to find the destination address in the 40-byte GRH buffer): a UDP header (RoCE v2)
 * and the L3 header, IPv6 or IPv4 (then the GRH buffer is 20 zero bytes + the IPv4 header).
 */
#define TBRDMA_CQE_SL_ROCE_V2	0x8
#define TBRDMA_CQE_SL_IPV6	0x1
#define TBRDMA_CQE_SL_IPV4	0x2
#define TBRDMA_CQE_SL_L3_MASK	0x7

struct tbrdma_cqe {
	__u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 vendor_err;
	__u32 byte_len;
	__u32 imm_data;
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 rsvd[2];
};

/*
 * The 64-byte CQE of a CQ created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION.
 * Both clocks are read by the kernel when it writes the CQE, under the CQ's
 * producer lock, so ts_ns never decreases from one CQE of a CQ to the next:
 * ts_ns is CLOCK_MONOTONIC (ktime_get_ns(), the initial time namespace's),
 * wall_ns CLOCK_REALTIME (ktime_get_real_ns(); it follows clock steps).
 */
struct tbrdma_cqe_ts {
	struct tbrdma_cqe cqe;
	__u64 ts_ns;
	__u64 wall_ns;
};

/* hca_core_clock in kHz: one tick of ts_ns is 1 ns */
#define TBRDMA_CLOCK_KHZ	1000000ULL

/* Create requests carry no driver data; responses: */
struct tbrdma_alloc_ucontext_resp {
	__u32 abi_version;	/* TBRDMA_UVERBS_ABI_VERSION */
	__u32 ring_hdr_size;	/* TBRDMA_RING_HDR_SIZE */
	__u32 max_sge;
	__u32 max_inline;
};

struct tbrdma_create_cq_resp {
	__u64 mmap_offset;
	__u64 mmap_size;
	__u32 entries;		/* ring slots (power of 2) */
	__u32 stride;		/* the CQE format's size (48 or 64) */
};

/* resize: a new ring; pending CQEs were copied to it in order */
struct tbrdma_resize_cq_resp {
	__u64 mmap_offset;
	__u64 mmap_size;
	__u32 entries;
	__u32 stride;
};

struct tbrdma_create_qp_resp {
	__u64 sq_mmap_offset;
	__u64 sq_mmap_size;
	__u64 rq_mmap_offset;	/* 0 and size 0 when the QP uses an SRQ */
	__u64 rq_mmap_size;
	__u32 sq_entries;
	__u32 sq_stride;
	__u32 rq_entries;
	__u32 rq_stride;
	__u32 max_inline;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 rsvd;
};

/*
 * Address handle: the number the provider writes into
 * tbrdma_send_wqe.ah_num of a UD send (valid for QPs of the AH's PD).
 */
struct tbrdma_create_ah_resp {
	__u32 ah_num;
	__u32 rsvd;
};

struct tbrdma_create_srq_resp {
	__u64 mmap_offset;
	__u64 mmap_size;
	__u32 entries;
	__u32 stride;
	__u32 max_sge;
	__u32 rsvd;
};

#endif /* TBRDMA_ABI_USER_H */
