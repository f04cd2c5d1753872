/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: RDMA verbs over Thunderbolt/USB4 host-to-host DMA rings.
 * Driver-wide objects shared by the verbs files.
 */
#ifndef TBRDMA_H
#define TBRDMA_H

#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "tbr_limits.h"
#include "link/link.h"
#include "uapi/tbrdma-abi.h"

#define TBRDMA_DRV_NAME "tbrdma"

/*
 * One tbrdma HCA. All peers and all rails of this host sit below it; the
 * destination GID of an address handle or QP selects the peer.
 */
struct tbr_qp;
struct tbr_cq;

/*
 * Transport attachment (filled in by the rails/transport code; NULL members
 * are skipped). Every callback runs with the QP's lock (qp->lock) held, IRQs
 * disabled, and must not sleep, except qp_create/qp_destroy (process
 * context, no lock held, may sleep).
 *   qp_create   allocate per-QP transport state into qp->xport_priv
 *   qp_destroy  free it (the QP is in RESET or ERROR and flushed)
 *   modify      the QP state/attributes changed (new values in qp->attr)
 *   sq_doorbell new WQEs are in the SQ (post_send, or a user doorbell)
 *   rq_posted   new WQEs are in the RQ (kernel post_recv or a user RQ
 *               doorbell; user post_recv normally makes no system call)
 *   flush       the QP entered ERROR: post a completion (tbr_cq_post) for
 *               every WQE the transport already took (tbr_sq_fetch or
 *               tbr_rq_fetch) and has not completed, and for SQ WQEs call
 *               tbr_sq_retire(); the verbs layer then flushes what is still
 *               in the rings
 */
struct tbr_xport_ops {
	int (*qp_create)(struct tbr_qp *qp);
	void (*qp_destroy)(struct tbr_qp *qp);
	void (*modify)(struct tbr_qp *qp, enum ib_qp_state old_state,
		       int attr_mask);
	void (*sq_doorbell)(struct tbr_qp *qp);
	/*
	 * After a user doorbell, process context, no lock held, BH on: the
	 * poll-mode option (xport_poll.c); optional.
	 */
	void (*busy_poll)(struct tbr_qp *qp);
	void (*rq_posted)(struct tbr_qp *qp);
	void (*flush)(struct tbr_qp *qp);
};

/* xport.c: the transport (kernel/core) attached to a device's QPs and links */
void tbr_xport_attach(struct tbr_dev *tdev);
void tbr_xport_detach(struct tbr_dev *tdev);
/* add @qp's transport counters to @v[TBR_XCNT_MAX]; qp->lock held */
void tbr_xport_qp_counters(struct tbr_qp *qp, u64 *v);
/* @qp's path state, false if no connected RC QP; qp->lock held */
bool tbr_xport_qp_path(struct tbr_qp *qp, struct tbr_tqp_path *p);
/* whether @qp waits for TX room on its link (a tx_ready); qp->lock held */
bool tbr_xport_qp_tx_stalled(struct tbr_qp *qp, bool *listed);

/*
 * counters.c: transport counters of a device, summed over its QPs (live ones
 * read under their lock, destroyed ones accumulated), shown by
 * `rdma statistic show link tbrdmaN/1`.
 */
enum tbr_xcnt {
	TBR_XCNT_TX_FRAMES,
	TBR_XCNT_TX_BYTES,
	TBR_XCNT_RX_FRAMES,
	TBR_XCNT_RX_BYTES,
	TBR_XCNT_RETRANSMITS,
	TBR_XCNT_FAST_RETRANSMITS,
	TBR_XCNT_SPURIOUS_RETRANSMITS,
	TBR_XCNT_TIMEOUTS,
	TBR_XCNT_TAIL_PROBES,
	TBR_XCNT_CWND_CUTS,		/* congestion window halvings */
	TBR_XCNT_DUPLICATES,
	TBR_XCNT_OUT_OF_WINDOW,
	TBR_XCNT_RX_MALFORMED,
	TBR_XCNT_RX_INVALID,
	TBR_XCNT_NAKS_SENT,
	TBR_XCNT_NAKS_RCVD,
	TBR_XCNT_RNR_NAKS_SENT,
	TBR_XCNT_RNR_NAKS_RCVD,
	TBR_XCNT_TX_STALLS,
	TBR_XCNT_ACKS_PIGGYBACKED,	/* ACKs sent riding on a data frame */
	TBR_XCNT_BUSY_POLLS,		/* doorbells that busy-polled (xport_poll.c) */
	TBR_XCNT_BUSY_POLL_RX,		/* ... and received for the QP meanwhile */
	TBR_XCNT_BUSY_POLL_FRAMES,	/* frames of the QP the busy poll pulled in */
	TBR_XCNT_PKEY_VIOLATIONS,	/* frames refused: P_Key not the QP's */
	TBR_XCNT_KICK_REQUEUES,		/* SQ passes continued at once (tbr_kick.h) */
	TBR_XCNT_KICK_BACKOFFS,		/* ... continued after a backoff */
	/* the device's loopback link (loop.c), not per QP */
	TBR_XCNT_LOOPBACK_FRAMES,
	TBR_XCNT_LOOPBACK_BYTES,
	/*
	 * frames from a link that no QP took: none by that number, not
	 * connected, or connected to another peer (xport_rx.c); the device's
	 * own, counted in xcnt_retired
	 */
	TBR_XCNT_RX_NO_QP,
	TBR_XCNT_MAX
};
extern const struct ib_device_ops tbr_counter_ops;
int tbr_dev_set_pkeys(struct tbr_dev *tdev, const u16 *keys, u32 n);

struct tbr_dev {
	struct ib_device ibdev;		/* must be first: ib_alloc_device */
	struct net_device *netdev;	/* tbrN: the RoCE netdev (GIDs) */
	struct tbr_rails rails;		/* links, rails, control plane (link/link.h) */
	struct net_device *capdev;	/* tbrmonN (obs/capture.c); tbr_ctl_mutex */
	const struct tbr_xport_ops *xport;	/* NULL: no transport yet */
	atomic64_t xcnt_retired[TBR_XCNT_MAX];	/* of destroyed QPs */
	spinlock_t xstall_lock;		/* xstalled (inside qp->lock) */
	struct list_head xstalled;	/* QPs waiting for TX room (xport.c) */

	struct xarray qp_xa;		/* qpn -> tbr_qp (XA_FLAGS_ALLOC, irq) */
	u32 qp_next;			/* cyclic QPN allocation hint */
	struct xarray ah_xa;		/* AH number -> tbr_ah (ALLOC1, irq) */
	u32 ah_next;
	atomic_t num_ah;
	struct xarray mr_xa;		/* key >> 8 -> tbr_mr (XA_FLAGS_ALLOC1) */
	u32 mr_next;
	atomic_t key_last;		/* the last MR key byte (mr.c) */
	struct xarray mw_xa;		/* key >> 8 -> tbr_mw_state (mw.c) */
	u32 mw_next;
	struct list_head mcg_list;	/* multicast groups (mcast.c, RCU) */
	struct mutex mcg_lock;		/* changes to mcg_list */
	u32 num_mcg;			/* mcg_lock */
	atomic_t num_qp, num_cq, num_mr, num_srq, num_mw;
	bool unregistered;		/* tbr_dev_unregister() done */
	/*
	 * The port's active width and speed (enum ib_port_width,
	 * ib_port_speed): the closest IB encoding of what the up rails carry,
	 * netdev.c's tbr_port_rate_update(); READ_ONCE in query_port.
	 */
	u8 port_width, port_speed;
	/*
	 * The port's P_Key table (docs/sweep.md "Partitions"): written by
	 * tbr_dev_set_pkeys() under pkey_lock, slot by slot; read by every
	 * QP's transport on every frame, in any context, without a lock.
	 */
	struct tbr_pkey_table pkeys;
	struct mutex pkey_lock;
};

struct tbr_pd {
	struct ib_pd ibpd;
};

/*
 * Memory a user's verbs call makes the kernel allocate (queues, transport
 * state): charged to the caller's memory cgroup, and -ENOMEM at its limit
 * rather than an OOM kill.
 */
#define TBR_GFP_USER	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL)

struct tbr_ucontext {
	struct ib_ucontext ibuc;
	atomic64_t queue_bytes;		/* its queues' memory (mmap.c) */
};

/*
 * One mmap'able queue: struct tbrdma_ring header + entries * stride bytes in
 * pages charged to the caller's memory cgroup, mapped contiguously (also for
 * kernel-owned queues, so both share code).
 */
struct tbr_queue {
	struct tbrdma_ring *ring;
	struct page **pages;		/* size >> PAGE_SHIFT pages of ring */
	struct tbr_ucontext *uctx;	/* charged for size bytes, or NULL */
	void *slots;			/* (void *)ring + TBRDMA_RING_HDR_SIZE */
	size_t size;			/* bytes, page aligned */
	u32 entries;			/* power of 2 */
	u32 mask;
	u32 stride;
	/*
	 * Kernel-private indexes (never read back from the shared header):
	 * kidx is the kernel's next slot to produce (CQ) or take (SQ/RQ/SRQ),
	 * done the oldest slot not yet released: SQ slots are released at
	 * completion (tbr_sq_retire), kernel-polled CQs at poll.
	 */
	u32 kidx;
	u32 done;
	struct rdma_user_mmap_entry *mentry;	/* user-visible queues only */
};

static inline void *tbr_queue_slot(struct tbr_queue *q, u32 idx)
{
	return q->slots + (size_t)(idx & q->mask) * q->stride;
}

struct tbr_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void *addr;			/* a queue's memory (mmap.c) */
	struct page **pages;
	size_t size;
};

struct tbr_cq {
	struct ib_cq ibcq;
	spinlock_t lock;		/* producer side, resize, kernel poll */
	struct tbr_queue q;
	struct ib_qp **wc_qp;		/* kernel CQs: the QP of each slot */
	bool user;
	bool overflow;
	bool ts;			/* slots are struct tbrdma_cqe_ts (set at create) */
};

struct tbr_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;		/* kernel consumer and kernel producer */
	struct tbr_queue q;
	bool user;
	u32 max_wr;
	u32 max_sge;
	u32 limit;			/* 0: limit event disarmed */
};

/* the QP attributes the transport needs, validated by modify_qp */
struct tbr_qp_av {
	union ib_gid dgid;
	u8 sgid_index;
	u8 hop_limit;
	u8 traffic_class;
	u8 sl;
	u32 flow_label;
	u8 dmac[ETH_ALEN];
};

struct tbr_qp {
	struct ib_qp ibqp;
	/*
	 * The per-QP lock: state, attributes, the kernel side of SQ/RQ and the
	 * transport state. Taken with spin_lock_irqsave everywhere.
	 */
	spinlock_t lock;
	refcount_t ref;			/* tbr_qp_get/put; destroy waits */
	struct completion released;
	bool user;
	enum ib_qp_state state;
	struct ib_qp_attr attr;		/* current attributes (query_qp) */
	struct tbr_qp_av av;
	u32 max_inline;
	u32 max_send_sge;
	u32 max_recv_sge;
	bool sig_all;
	struct tbr_queue sq;
	struct tbr_queue rq;		/* unused when srq != NULL */
	struct tbr_srq *srq;
	struct tbr_cq *scq, *rcq;
	void *xport_priv;		/* transport state (tbr_xport_ops) */
	atomic_t mw_bound;		/* type 2 windows bound on it (mw.c) */
};

/*
 * What a UD send needs of its address handle, copied out under the AH
 * table's lock (an AH may be destroyed while its WRs are queued).
 */
struct tbr_ah_av {
	union ib_gid sgid;		/* the value of the AH's sgid_index */
	union ib_gid dgid;
	u32 flow_label;
	u8 traffic_class;
	u8 hop_limit;
	u8 sl;
	u8 dmac[ETH_ALEN];		/* names the peer's link (xport.c) */
	struct ib_pd *pd;
};

struct tbr_ah {
	struct ib_ah ibah;
	u32 num;			/* in tdev->ah_xa and the user's WQEs */
	struct tbr_ah_av av;
};

static inline struct tbr_ah *to_tbr_ah(struct ib_ah *ibah)
{
	return container_of(ibah, struct tbr_ah, ibah);
}

/* ah.c */
extern const struct ib_device_ops tbr_ah_ops;
void tbr_ah_init_dev(struct tbr_dev *tdev);
int tbr_ah_get_av(struct tbr_dev *tdev, u32 num, struct ib_pd *pd,
		  struct tbr_ah_av *av);

/* MR access rights checked by tbr_mr_get */
#define TBR_MR_LKEY		0x100	/* look up an lkey (else an rkey) */

struct tbr_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;		/* NULL: DMA MR (kernel virtual addresses) */
	struct page **pages;		/* umem pages, in order */
	unsigned long npages;
	unsigned int page_off;		/* offset of iova in pages[0] */
	u64 iova;
	u64 length;
	int access;			/* IB_ACCESS_* */
	u32 index;
	/*
	 * The key lookups match (smp_load_acquire; lkey == rkey). A fast
	 * registration MR has one only while registered (0 otherwise): the
	 * ULP changes ibmr.lkey/rkey (ib_update_fast_reg_key) before its
	 * REG_MR runs, so those are not what is valid.
	 */
	u32 key;
	struct tbr_mr_fast *fast;	/* IB_MR_TYPE_MEM_REG (mr_fast.c) */
	/*
	 * Fast registration MRs only: every access (tbr_mr_get .. tbr_mr_put)
	 * holds it for read, REG_MR and invalidation take it for write, so an
	 * invalidation completes only once no access of the registration it
	 * ends is running, and an access sees one registration whole.
	 */
	rwlock_t fast_lock;
	refcount_t ref;
	struct completion released;
	struct rcu_head rcu;		/* lookups run under RCU */
};

/*
 * A memory window's state (mw.c), apart from its struct ib_mw (which the
 * RDMA core frees as soon as dealloc_mw returns) so that lookups can find
 * it in tdev->mw_xa under RCU and dealloc need not wait: freed by RCU.
 * Bind and invalidate change it, and every remote access through its rkey
 * reads it, under @lock.
 */
struct tbr_mw_state {
	spinlock_t lock;
	struct rcu_head rcu;
	const struct ib_pd *pd;	/* compared only, never followed */
	enum ib_mw_type type;
	u32 index;		/* in tdev->mw_xa */
	u32 key;		/* the current rkey (ibmw.rkey is the first) */
	bool bound;		/* type 2: bound (else free); type 1: always */
	/*
	 * type 2, bound: the QP it was bound on, the only one it serves and
	 * the only one that may invalidate it; compared, and followed only to
	 * its mw_bound count, under @lock. That QP's destroy frees the window
	 * (tbr_mw_qp_gone) before the QP's memory goes, so the pointer never
	 * dangles and a new QP (even one with the same QPN) never matches.
	 */
	struct tbr_qp *qp;
	u32 mr_key;		/* the MR's key at bind: stale after its dereg
				 * or rereg, and so is the window
				 */
	u64 addr;
	u64 length;		/* 0: no access (an unbound type 1 window) */
	int access;		/* IB_ACCESS_REMOTE_* */
};

struct tbr_mw {
	struct ib_mw ibmw;
	struct tbr_mw_state *st;
};

/* IBV_WR_BIND_MW, as the send queue hands it to tbr_mw_bind() */
struct tbr_mw_bind {
	u32 mw_rkey;		/* names the window (its index) */
	u32 new_rkey;		/* the key it gets: same index, any key byte */
	u32 mr_lkey;
	int access;
	u64 addr;
	u64 length;
};

/*
 * A send WQE as the transport sees it: a validated kernel copy of a slot.
 * status is IB_WC_SUCCESS or the error the WQE must complete with
 * (IB_WC_LOC_QP_OP_ERR: bad opcode; IB_WC_LOC_LEN_ERR: too many SGEs or
 * inline bytes); the QP must then go to ERROR.
 */
struct tbr_send_wqe {
	struct tbrdma_send_wqe hdr;
	enum ib_wc_status status;
	u32 wc_opcode;			/* enum ib_wc_opcode for the CQE */
	struct tbrdma_sge sge[TBR_DEV_MAX_SGE];
	u8 inline_data[TBR_DEV_MAX_INLINE];
};

struct tbr_recv_wqe {
	u64 wr_id;
	u32 num_sge;
	enum ib_wc_status status;	/* IB_WC_LOC_LEN_ERR: bad num_sge */
	struct tbrdma_sge sge[TBR_DEV_MAX_SGE];
};

static inline struct tbr_dev *to_tbr_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct tbr_dev, ibdev);
}

static inline u64 tbr_dev_guid(struct tbr_dev *tdev)
{
	return be64_to_cpu(tdev->ibdev.node_guid);
}

static inline const char *tbr_dev_name(struct tbr_dev *tdev)
{
	return dev_name(&tdev->ibdev.dev);
}

static inline struct tbr_qp *to_tbr_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct tbr_qp, ibqp);
}

static inline struct tbr_cq *to_tbr_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct tbr_cq, ibcq);
}

static inline struct tbr_srq *to_tbr_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct tbr_srq, ibsrq);
}

static inline struct tbr_mr *to_tbr_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct tbr_mr, ibmr);
}

static inline struct tbr_ucontext *to_tbr_uc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct tbr_ucontext, ibuc);
}

/* device.c */
struct tbr_dev *tbr_dev_create(unsigned int slot, const char *name);
void tbr_dev_unregister(struct tbr_dev *tdev);
void tbr_dev_destroy(struct tbr_dev *tdev);
int tbr_host_id_check(void);	/* module init: host_id usable? */

/* netdev.c */
struct net_device *tbr_netdev_create(const u8 *mac);
void tbr_netdev_destroy(struct net_device *ndev);
void tbr_netdev_bind(struct net_device *ndev, struct tbr_dev *tdev);
/* carrier of tbrN, the port state event, IP frames from the rails */
extern struct tbr_link_observer tbr_netdev_observer;
/* trace.c: rails and links up/down as tracepoints (tbr_trace.h) */
extern struct tbr_link_observer tbr_trace_observer;

/* mmap.c: user contexts and shared queues */
int tbr_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void tbr_dealloc_ucontext(struct ib_ucontext *ibuc);
void tbr_disassociate_ucontext(struct ib_ucontext *ibuc);
int tbr_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void tbr_mmap_free(struct rdma_user_mmap_entry *rdma_entry);
int tbr_queue_init(struct tbr_dev *tdev, struct tbr_queue *q, u32 entries,
		   u32 stride, struct ib_udata *udata);
void tbr_queue_free(struct tbr_queue *q);
u64 tbr_queue_mmap_offset(const struct tbr_queue *q);

/* cq.c */
extern const struct ib_device_ops tbr_cq_ops;
/*
 * Post one completion. Any context; takes cq->lock (irqsave) and may call
 * ibcq->comp_handler / event_handler after dropping it. Returns 0 or
 * -ENOSPC (CQ overflow: the CQE is dropped, IB_EVENT_CQ_ERR raised).
 */
int tbr_cq_post(struct tbr_cq *cq, const struct ib_wc *wc, bool solicited);

/* qp.c */
extern const struct ib_device_ops tbr_qp_ops;
struct tbr_qp *tbr_qp_get(struct tbr_dev *tdev, u32 qpn);
void tbr_qp_put(struct tbr_qp *qp);
/* the following run with qp->lock held */
int tbr_sq_fetch(struct tbr_qp *qp, struct tbr_send_wqe *wqe);
bool tbr_sq_peek(struct tbr_qp *qp);
void tbr_sq_retire(struct tbr_qp *qp);
void tbr_sq_set_need_doorbell(struct tbr_qp *qp, bool need);
int tbr_rq_fetch(struct tbr_qp *qp, struct tbr_recv_wqe *wqe);
void tbr_qp_set_error(struct tbr_qp *qp);
int tbr_qp_complete_send(struct tbr_qp *qp, const struct tbr_send_wqe *wqe,
			 enum ib_wc_status status);

/* srq.c */
extern const struct ib_device_ops tbr_srq_ops;
int tbr_srq_fetch(struct tbr_srq *srq, struct tbr_recv_wqe *wqe);
u32 tbr_recv_stride(u32 max_sge);
void tbr_recv_slot_read(struct tbr_queue *q, u32 idx, u32 max_sge,
			struct tbr_recv_wqe *wqe);
int tbr_recv_post(struct tbr_queue *q, u32 max_sge, const struct ib_recv_wr **wr);

/* mr.c */
extern const struct ib_device_ops tbr_mr_ops;
struct tbr_mr *tbr_mr_get(struct tbr_dev *tdev, u32 key, struct ib_pd *pd,
			  u64 iova, u64 len, int access);
void tbr_mr_put(struct tbr_mr *mr);
int tbr_mr_copy(struct tbr_mr *mr, u64 iova, void *buf, u32 len, bool to_mr);
struct page *tbr_mr_page(struct tbr_mr *mr, u64 iova, u32 len, u32 *offset);

/*
 * mr_fast.c: fast registration MRs (their state, map_mr_sg) and the local
 * operations on them. tbr_mr_fast_reg/inv run under the posting QP's lock
 * (REG_MR, LOCAL_INV) or the receiving QP's (SEND_WITH_INV); 0 or -EINVAL.
 */
extern const struct ib_device_ops tbr_mr_fast_ops;
/* the state of a new fast registration MR (mr.c's alloc_mr), or an ERR_PTR */
struct tbr_mr_fast *tbr_mr_fast_new(enum ib_mr_type type, u32 max_num_sg);
int tbr_mr_fast_reg(struct tbr_qp *qp, struct tbr_mr *mr, u32 key, int access);
int tbr_mr_fast_inv(struct tbr_dev *tdev, struct ib_pd *pd, u32 key);
int tbr_mr_fast_copy(struct tbr_mr *mr, u64 iova, void *buf, u32 len,
		     bool to_mr);
void tbr_mr_fast_free(struct tbr_mr *mr);
/* tbr_mr_get/put of a fast MR: hold its registration (irqs off) */
bool tbr_mr_fast_hold(struct tbr_mr *mr, u32 key);
void tbr_mr_fast_release(struct tbr_mr *mr);

/*
 * mw.c: memory windows. tbr_rkey_get() is tbr_mr_get() for a remote access
 * through an rkey, an MR's or a window's; tbr_mw_bind/inv run under the
 * posting QP's lock (BIND_MW, LOCAL_INV) or the receiving QP's
 * (SEND_WITH_INV).
 */
extern const struct ib_device_ops tbr_mw_ops;
static inline bool tbr_key_is_mw(u32 key)
{
	return key >> 8 >= TBR_MAX_MR;
}
struct tbr_mr *tbr_rkey_get(struct tbr_qp *qp, u32 rkey, u64 va, u64 len,
			    int access);
int tbr_mw_bind(struct tbr_qp *qp, const struct tbr_mw_bind *b);
int tbr_mw_inv(struct tbr_qp *qp, u32 rkey);
/* destroy_qp, once no WR or frame can reach @qp: free its type 2 windows */
void tbr_mw_qp_gone(struct tbr_qp *qp);

/* mcast.c: UD multicast groups */
extern const struct ib_device_ops tbr_mcast_ops;
void tbr_mcast_init_dev(struct tbr_dev *tdev);
void tbr_mcast_destroy_dev(struct tbr_dev *tdev);
void tbr_mcast_qp_gone(struct tbr_qp *qp);
bool tbr_gid_is_mcast(const union ib_gid *gid);
u32 tbr_mcast_members(struct tbr_dev *tdev, const u8 *mgid,
		      u32 qpn[TBR_MAX_MCG_QP]);

/* pd.c */
int tbr_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int tbr_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

#endif /* TBRDMA_H */
