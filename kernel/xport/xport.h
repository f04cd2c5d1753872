/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: the transport glue's private state (xport.c, xport_rx.c,
 * xport_tx.c, xport_mem.c): the per-QP struct tbr_xqp, the core's
 * transmit callbacks and its memory callbacks.
 */
#ifndef TBR_XPORT_H
#define TBR_XPORT_H

#include <linux/workqueue.h>

#include "tbrdma.h"
#include "core/tbr_core.h"
#include "core/tbr_kick.h"

/*
 * SQ WQEs one tbr_x_kick() call hands to the core (qp->lock held, interrupts
 * off); the rest goes on in process context (kick_work), at once or backing
 * off as core/tbr_kick.h decides. Userspace produces the SQ and, for UD with
 * no route, every WQE completes at once.
 */
#define TBR_XPORT_KICK_BUDGET	256

/* Both ends of a connection must agree on these (see docs/protocol.md). */
#define TBR_XPORT_WIN		1024	/* PSN window, frames */
#define TBR_XPORT_MTU		TBR_MTU_MAX	/* payload bytes per frame */

/* A send WQE handed to the core; the core completes them in order. */
struct tbr_xsend {
	u64 wr_id;
	u32 flags;		/* TBRDMA_WQE_* */
	u32 wc_opcode;		/* enum ib_wc_opcode */
	/* REG_MR / LOCAL_INV / BIND_MW (TBR_WR_LOCAL, run by tbr_x_local) */
	u32 local_op;		/* enum ib_wr_opcode */
	struct tbr_mr *mr;	/* REG_MR */
	u32 key;		/* REG_MR: the new key; LOCAL_INV: the key */
	int access;		/* REG_MR */
	struct tbr_mw_bind bind;	/* BIND_MW */
};

struct tbr_xqp {
	struct tbr_qp *qp;
	struct tbr_tqp *tqp;
	struct tbr_link *link;		/* the peer; a reference while set */
	struct hrtimer timer;
	u64 timer_at;			/* deadline the timer is armed for */
	bool connected;			/* tbr_tqp_connect done (RTR) */
	bool stalled;			/* tx_alloc failed: progress on tx_ready */
	struct list_head stall_node;	/* on tdev->xstalled (its lock) */
	bool waking;			/* on a tx_ready's chain (xstall_lock) */
	bool rewake;			/* another tx_ready came meanwhile (xstall_lock) */
	struct tbr_xqp *wake_next;	/* that chain */
	bool discard;			/* RESET: drop completions */
	bool error_pending;		/* the core entered error by itself */
	struct tbr_xsend *sent;		/* ring of sq.entries */
	u32 sent_head, sent_tail;
	struct tbr_send_wqe scratch;	/* tbr_sq_fetch target (lock held) */
	struct delayed_work kick_work;	/* tbr_x_kick ran out of budget */
	struct tbr_kick kick;		/* when kick_work goes on (qp->lock) */
	u8 *txvoid;			/* frames with no route are built here */
	u8 *tx_buf;			/* x->link's frame being built, or NULL */
	/* UD and GSI */
	bool ud;
	bool held;			/* scratch waits for the core to drain */
	bool mcast;			/* frames go to every link (link NULL) */
	u8 (*uda)[TBR_UD_ADDR_LEN];	/* address block of each SQ slot */
	/* poll mode (xport_poll.c), qp->lock */
	struct task_struct *poller;	/* busy-polling for the QP now */
	u64 busy_polls, busy_poll_rx, busy_poll_frames;
	/*
	 * The core's loss and RNR counts the tracepoints last reported
	 * (tbr_x_trace), qp->lock; updated only while one is enabled.
	 */
	u64 tr_rtx, tr_fast, tr_timeouts, tr_rnr_sent, tr_rnr_rcvd;
};

/* lkey of the pseudo SGE that carries a UD send's address block */
#define TBR_UDA_LKEY		0xffffffffu	/* never an MR key (< 2^24) */

static inline struct tbr_dev *xqp_dev(struct tbr_xqp *x)
{
	return to_tbr_dev(x->qp->ibqp.device);
}

/*
 * The transmit side (xport_tx.c). tbr_x_link: the connected QP's link (a
 * reference kept in x->link; looked up again once its cable is gone), or
 * NULL when no rail reaches the peer. tx_alloc/tx_send/tx_abort are the
 * core's callbacks. tbr_x_ud_route: resolve a UD/GSI send's address handle
 * and prepend its address block; returns 0, TBR_X_HOLD or -IB_WC_*.
 * Context: qp->lock held.
 */
#define TBR_X_HOLD	1	/* the WR waits until the core has drained */
struct tbr_link *tbr_x_link(struct tbr_xqp *x);
void tbr_x_stall(struct tbr_xqp *x);
void tbr_x_unstall(struct tbr_xqp *x);
void *tbr_x_tx_alloc(void *ctx, u32 len);
/*
 * xport.c: after every call into the core (errors, more WQEs, the timer,
 * the tracepoints), qp->lock held; the verbs side's ops.
 */
void tbr_x_after(struct tbr_xqp *x, u64 now);
extern const struct tbr_xport_ops tbr_xport_ops;
/* xport_poll.c: tbr_xport_ops.busy_poll */
void tbr_x_busy_poll(struct tbr_qp *qp);
void tbr_x_tx_send(void *ctx, void *frame, u32 len);
void tbr_x_tx_abort(void *ctx, void *frame);
int tbr_x_ud_route(struct tbr_xqp *x, const struct tbr_send_wqe *w,
		   struct tbr_send_wr *wr, struct tbr_sge *sgl, u8 *ibuf);

/*
 * The core's memory callbacks (xport_mem.c): scatter lists of the QP's own
 * WQEs (lkeys) and remote access to MRs (rkeys), checked against the PD and
 * the QP's access flags. Context: qp->lock held.
 */
int tbr_x_sgl_copy(struct tbr_xqp *x, const struct tbr_sge *sgl, u32 nsge,
		   u64 off, void *buf, u32 len, bool to_mr);
int tbr_x_sgl_read(void *ctx, const struct tbr_sge *sgl, u32 nsge, u64 off,
		   void *dst, u32 len);
int tbr_x_sgl_write(void *ctx, const struct tbr_sge *sgl, u32 nsge, u64 off,
		    const void *src, u32 len);
int tbr_x_mr_write(void *ctx, u32 rkey, u64 va, const void *src, u32 len);
int tbr_x_mr_read(void *ctx, u32 rkey, u64 va, void *dst, u32 len);
int tbr_x_mr_check(void *ctx, u32 rkey, u64 va, u32 len, u32 access);
int tbr_x_mr_atomic(void *ctx, u32 rkey, u64 va, enum tbr_atomic_op op,
		    u64 compare_add, u64 swap, u64 *orig);
/* SEND_WITH_INV received; REG_MR / LOCAL_INV / BIND_MW run */
int tbr_x_invalidate(void *ctx, u32 rkey);
int tbr_x_local(void *ctx, u64 cookie);

#endif
