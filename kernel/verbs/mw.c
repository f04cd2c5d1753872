// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: memory windows, type 1 and type 2B (IBTA 10.6.7).
 *
 * ibv_alloc_mw makes a window of the caller's PD with an rkey of its own
 * (index << 8 | random key byte, the index past every MR's: tbr_key_is_mw).
 * A bind is a send queue WQE (IBV_WR_BIND_MW; the provider writes one for
 * ibv_bind_mw of a type 1 window too) run in order by the transport
 * (TBR_WR_LOCAL, xport_mem.c): it gives the window the new rkey of the WQE
 * (same index, the key byte the user chose) and a range of an MR of the
 * QP's PD that was registered with IBV_ACCESS_MW_BIND; from then on remote
 * READ/WRITE/ATOMIC through that rkey are checked against the window's
 * range and rights, not the MR's (tbr_rkey_get), and the old rkey is stale.
 *
 * Type 1: always valid; bound again at will (a new key each time); a
 * zero-length bind leaves it with no range, so every access is refused; it
 * cannot be invalidated (LOCAL_INV or SEND_WITH_INV of its key fail).
 * Type 2 (2B): free after alloc; a bind needs a free window, a nonzero
 * length and the QP's PD; it is then associated with that QP: usable only
 * on it, and freed only by an IBV_WR_LOCAL_INV posted on it or a
 * SEND_WITH_INV of its rkey received on it (IBTA 10.6.7; another QP of
 * the PD fails), or by destroying the QP (tbr_mw_qp_gone), so a window
 * never outlives its QP into a new one that reuses the QPN.
 *
 * The window keeps the MR's key, not the MR: an access looks the MR up by
 * that key (tbr_mr_get), so a window whose MR was deregistered or
 * re-registered (a new key) refuses every access, as if invalidated, and
 * neither dereg_mr nor rereg_mr has to wait for windows. Every state change
 * and every access check holds the window's lock (inside the QP's lock);
 * the state lives apart from the ib_mw and is freed by RCU, so a bound
 * window can be deallocated at any time without waiting.
 */
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "tbrdma.h"

/* rights a window may grant */
#define TBR_MW_ACCESS_OK (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			  IB_ACCESS_REMOTE_ATOMIC)

static inline struct tbr_mw *to_tbr_mw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct tbr_mw, ibmw);
}

/*
 * Free bound type 2 window @st: it leaves its QP. Context: st->lock held
 * (the QP is alive: its destroy takes st->lock to free its windows).
 */
static void tbr_mw_unbind(struct tbr_mw_state *st)
{
	atomic_dec(&st->qp->mw_bound);
	st->qp = NULL;
	st->bound = false;
	st->length = 0;
	st->access = 0;
}

/* Context: process. */
static int tbr_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tbr_dev(ibmw->device);
	struct tbr_mw_state *st;
	int err;

	if (atomic_inc_return(&tdev->num_mw) > TBR_MAX_MW) {
		err = -ENOMEM;
		goto err_count;
	}
	st = kzalloc(sizeof(*st), TBR_GFP_USER);
	if (!st) {
		err = -ENOMEM;
		goto err_count;
	}
	spin_lock_init(&st->lock);
	st->pd = ibmw->pd;
	st->type = ibmw->type;
	err = xa_alloc_cyclic(&tdev->mw_xa, &st->index, NULL,
			      XA_LIMIT(TBR_MAX_MR, TBR_MAX_MR + TBR_MAX_MW - 1),
			      &tdev->mw_next, GFP_KERNEL);
	if (err < 0)
		goto err_free;
	st->key = st->index << 8 | get_random_u8();
	st->bound = st->type == IB_MW_TYPE_1;
	ibmw->rkey = st->key;
	to_tbr_mw(ibmw)->st = st;
	/* visible to lookups only once complete */
	xa_store(&tdev->mw_xa, st->index, st, GFP_KERNEL);
	return 0;

err_free:
	kfree(st);
err_count:
	atomic_dec(&tdev->num_mw);
	return err;
}

/*
 * Context: process. A bound window goes too: lookups still running under
 * RCU may see its state until they end (an access that already passed the
 * check completes, as one in flight on a deregistered MR would).
 */
static int tbr_dealloc_mw(struct ib_mw *ibmw)
{
	struct tbr_dev *tdev = to_tbr_dev(ibmw->device);
	struct tbr_mw_state *st = to_tbr_mw(ibmw)->st;
	unsigned long flags;

	xa_erase(&tdev->mw_xa, st->index);
	spin_lock_irqsave(&st->lock, flags);
	if (st->type == IB_MW_TYPE_2 && st->bound)
		tbr_mw_unbind(st);
	spin_unlock_irqrestore(&st->lock, flags);
	kfree_rcu(st, rcu);
	atomic_dec(&tdev->num_mw);
	return 0;
}

/* Context: RCU read side. The window of @key's index, or NULL. */
static struct tbr_mw_state *tbr_mw_find(struct tbr_dev *tdev, u32 key)
{
	if (!tbr_key_is_mw(key))
		return NULL;
	return xa_load(&tdev->mw_xa, key >> 8);
}

/*
 * IBV_WR_BIND_MW posted on @qp (RC or UC, a user QP). Context: qp->lock
 * held. Returns 0 or -EINVAL: no such window, a new key of another index,
 * the window or the MR not of the QP's PD, rights a window cannot have (or
 * remote write/atomic on an MR without local write), an MR without
 * IB_ACCESS_MW_BIND, a range outside the MR, or for type 2: a window still
 * bound or a zero length.
 */
int tbr_mw_bind(struct tbr_qp *qp, const struct tbr_mw_bind *b)
{
	struct tbr_dev *tdev = to_tbr_dev(qp->ibqp.device);
	struct ib_pd *pd = qp->ibqp.pd;
	int access = b->access & TBR_MW_ACCESS_OK;
	struct tbr_mr *mr = NULL;
	struct tbr_mw_state *mw;
	unsigned long flags;
	int err = -EINVAL;

	/* LOCAL_WRITE means nothing to a window: ignored */
	if (b->new_rkey >> 8 != b->mw_rkey >> 8 ||
	    (b->access & ~(TBR_MW_ACCESS_OK | IB_ACCESS_LOCAL_WRITE)))
		return -EINVAL;
	if (b->length) {
		mr = tbr_mr_get(tdev, b->mr_lkey, pd, b->addr, b->length,
				TBR_MR_LKEY);
		if (!mr)
			return -EINVAL;
		if (!(mr->access & IB_ACCESS_MW_BIND) || mr->fast ||
		    ((access & (IB_ACCESS_REMOTE_WRITE |
				IB_ACCESS_REMOTE_ATOMIC)) &&
		     !(mr->access & IB_ACCESS_LOCAL_WRITE)))
			goto out_mr;
	}
	rcu_read_lock();
	mw = tbr_mw_find(tdev, b->mw_rkey);
	if (!mw || mw->pd != pd)
		goto out_rcu;
	spin_lock_irqsave(&mw->lock, flags);
	if (mw->type == IB_MW_TYPE_2 && (mw->bound || !b->length))
		goto out_unlock;
	mw->key = b->new_rkey;
	if (mw->type == IB_MW_TYPE_2) {
		mw->qp = qp;
		atomic_inc(&qp->mw_bound);
	}
	mw->bound = true;
	mw->mr_key = mr ? b->mr_lkey : 0;
	mw->addr = b->addr;
	mw->length = b->length;
	mw->access = access;
	err = 0;
out_unlock:
	spin_unlock_irqrestore(&mw->lock, flags);
out_rcu:
	rcu_read_unlock();
out_mr:
	if (mr)
		tbr_mr_put(mr);
	return err;
}

/*
 * Invalidate the type 2 window of @rkey (IBV_WR_LOCAL_INV posted on @qp, or
 * a SEND_WITH_INV received on it): it must be bound, under that rkey, on
 * @qp itself (IBTA 10.6.7: a type 2 window is associated with the QP it
 * was bound on; another QP of its PD cannot invalidate it). Context:
 * qp->lock held. Returns 0 or -EINVAL (the caller completes a LOCAL_INV with
 * LOC_QP_OP_ERR, a SEND_WITH_INV with REM_INV_REQ_ERR).
 */
int tbr_mw_inv(struct tbr_qp *qp, u32 rkey)
{
	struct tbr_mw_state *mw;
	unsigned long flags;
	int err = -EINVAL;

	rcu_read_lock();
	mw = tbr_mw_find(to_tbr_dev(qp->ibqp.device), rkey);
	if (mw && mw->pd == qp->ibqp.pd && mw->type == IB_MW_TYPE_2) {
		spin_lock_irqsave(&mw->lock, flags);
		if (mw->bound && mw->key == rkey && mw->qp == qp) {
			tbr_mw_unbind(mw);
			err = 0;
		}
		spin_unlock_irqrestore(&mw->lock, flags);
	}
	rcu_read_unlock();
	return err;
}

/*
 * tbr_rkey_get - resolve a remote access through @rkey on @qp
 * @access: the one IB_ACCESS_REMOTE_* right the operation needs
 *
 * An MR's key: tbr_mr_get() with the QP's PD. A window's: it must hold that
 * rkey, be bound (type 2: on @qp), belong to the QP's PD, grant @access and
 * cover [va, va + len); then its MR, found by the key it had at bind, must
 * still hold that key (its own remote rights do not matter). Context: any
 * (the responder: qp->lock held). Returns the MR with a reference (drop it
 * with tbr_mr_put) or NULL.
 */
struct tbr_mr *tbr_rkey_get(struct tbr_qp *qp, u32 rkey, u64 va, u64 len,
			    int access)
{
	struct tbr_dev *tdev = to_tbr_dev(qp->ibqp.device);
	struct ib_pd *pd = qp->ibqp.pd;
	struct tbr_mw_state *mw;
	unsigned long flags;
	u32 mr_key = 0;
	bool ok;

	if (!tbr_key_is_mw(rkey))
		return tbr_mr_get(tdev, rkey, pd, va, len, access);
	rcu_read_lock();
	mw = tbr_mw_find(tdev, rkey);
	if (mw && mw->pd == pd) {
		spin_lock_irqsave(&mw->lock, flags);
		ok = mw->key == rkey && mw->bound && mw->length &&
		     (mw->type == IB_MW_TYPE_1 || mw->qp == qp) &&
		     (mw->access & access) == access &&
		     va >= mw->addr && va + len >= va &&
		     va + len <= mw->addr + mw->length;
		if (ok)
			mr_key = mw->mr_key;
		spin_unlock_irqrestore(&mw->lock, flags);
	}
	rcu_read_unlock();
	if (!mr_key)
		return NULL;
	return tbr_mr_get(tdev, mr_key, pd, va, len, TBR_MR_LKEY);
}

/*
 * tbr_mw_qp_gone - free the type 2 windows bound on @qp
 *
 * destroy_qp calls it once no WR of @qp runs and no frame reaches it (the
 * QP is out of the QP table and its last reference is gone), before its
 * memory is freed: the windows become free (bound again without an
 * invalidation) and their rkeys serve no QP, so a QP that
 * reuses the number finds nothing of them. Only a QP that has windows
 * bound (mw_bound) walks the device's windows. Context: process.
 */
void tbr_mw_qp_gone(struct tbr_qp *qp)
{
	struct tbr_dev *tdev = to_tbr_dev(qp->ibqp.device);
	XA_STATE(xas, &tdev->mw_xa, 0);
	struct tbr_mw_state *st;
	unsigned long flags;

	if (!atomic_read(&qp->mw_bound))
		return;
	rcu_read_lock();
	xas_for_each(&xas, st, ULONG_MAX) {
		if (xas_retry(&xas, st))
			continue;
		spin_lock_irqsave(&st->lock, flags);
		if (st->type == IB_MW_TYPE_2 && st->bound && st->qp == qp)
			tbr_mw_unbind(st);
		spin_unlock_irqrestore(&st->lock, flags);
		if (!atomic_read(&qp->mw_bound))
			break;
	}
	rcu_read_unlock();
}

const struct ib_device_ops tbr_mw_ops = {
	.alloc_mw = tbr_alloc_mw,
	.dealloc_mw = tbr_dealloc_mw,

	INIT_RDMA_OBJ_SIZE(ib_mw, tbr_mw, ibmw),
};
