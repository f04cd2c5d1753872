// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the transport core's memory callbacks. The core never touches
 * user memory itself: it hands scatter lists (local WQEs, lkeys) and remote
 * addresses (rkeys) to these, which resolve the MR (mr.c), check the PD, the
 * MR's and the QP's access flags and the bounds, and copy. Responder atomics
 * are serialised by one module-wide lock (IB_ATOMIC_HCA).
 *
 * Context: every function runs inside a core call, with qp->lock held.
 */
#include <linux/spinlock.h>

#include "xport/xport.h"

static DEFINE_SPINLOCK(tbr_atomic_lock);	/* responder atomics */

/*
 * TX zero-copy: the @len bytes of @mr at @iova the core is about to copy to
 * @dst, the payload of the frame it builds (x->tx_buf, right behind the
 * header), go to the rail as a page instead when they are a whole frame's
 * payload in one page and the rail takes pages (tb with split frames:
 * docs/protocol.md section 8). True when the rail took it.
 */
static bool tbr_x_tx_zc(struct tbr_xqp *x, struct tbr_mr *mr, u64 iova,
			void *dst, u32 len)
{
	struct page *page;
	u32 off;

	if (len != TBR_MTU_MAX || !x->tx_buf || (u8 *)dst < x->tx_buf ||
	    (u8 *)dst > x->tx_buf + TBR_HDR_MAX)
		return false;
	page = tbr_mr_page(mr, iova, len, &off);
	return page && !tbr_link_tx_attach(x->link, x->tx_buf, dst, page, off, len);
}

int tbr_x_sgl_copy(struct tbr_xqp *x, const struct tbr_sge *sgl,
		   u32 nsge, u64 off, void *buf, u32 len, bool to_mr)
{
	int access = TBR_MR_LKEY | (to_mr ? IB_ACCESS_LOCAL_WRITE : 0);
	u32 i;

	for (i = 0; i < nsge && len; i++) {
		struct tbr_mr *mr;
		u32 n;

		if (off >= sgl[i].length) {
			off -= sgl[i].length;
			continue;
		}
		n = min_t(u64, len, sgl[i].length - off);
		if (x->ud && sgl[i].lkey == TBR_UDA_LKEY) {
			/* addr: the SQ slot whose address block this is */
			if (to_mr || sgl[i].length != TBR_UD_ADDR_LEN)
				return -TBR_WC_LOC_PROT_ERR;
			memcpy(buf, x->uda[sgl[i].addr & x->qp->sq.mask] + off, n);
			goto next;
		}
		mr = tbr_mr_get(xqp_dev(x), sgl[i].lkey, x->qp->ibqp.pd,
				sgl[i].addr + off, n, access);
		if (!mr)
			return -TBR_WC_LOC_PROT_ERR;
		if (to_mr || n != len || !tbr_x_tx_zc(x, mr, sgl[i].addr + off, buf, n))
			tbr_mr_copy(mr, sgl[i].addr + off, buf, n, to_mr);
		tbr_mr_put(mr);
next:
		buf += n;
		len -= n;
		off = 0;
	}
	return len ? -TBR_WC_LOC_LEN_ERR : 0;
}

int tbr_x_sgl_read(void *ctx, const struct tbr_sge *sgl, u32 nsge,
		   u64 off, void *dst, u32 len)
{
	return tbr_x_sgl_copy(ctx, sgl, nsge, off, dst, len, false);
}

int tbr_x_sgl_write(void *ctx, const struct tbr_sge *sgl, u32 nsge,
		    u64 off, const void *src, u32 len)
{
	return tbr_x_sgl_copy(ctx, sgl, nsge, off, (void *)src, len, true);
}

/*
 * The responder QP must have enabled the remote operation itself (INIT's
 * qp_access_flags), whatever the MR allows; if not, the request is invalid
 * (-TBR_WC_REM_INV_REQ_ERR, see tbr_core.h). Context: qp->lock held.
 */
static bool tbr_x_qp_allows(struct tbr_xqp *x, int access)
{
	return (x->qp->attr.qp_access_flags & access) == access;
}

static int tbr_x_mr_copy(struct tbr_xqp *x, u32 rkey, u64 va, void *buf,
			 u32 len, int access, bool to_mr)
{
	struct tbr_mr *mr;

	if (!tbr_x_qp_allows(x, access))
		return -TBR_WC_REM_INV_REQ_ERR;
	mr = tbr_rkey_get(x->qp, rkey, va, len, access);
	if (!mr)
		return -TBR_WC_REM_ACCESS_ERR;
	if (len && (to_mr || !tbr_x_tx_zc(x, mr, va, buf, len)))
		tbr_mr_copy(mr, va, buf, len, to_mr);
	tbr_mr_put(mr);
	return 0;
}

int tbr_x_mr_write(void *ctx, u32 rkey, u64 va, const void *src, u32 len)
{
	return tbr_x_mr_copy(ctx, rkey, va, (void *)src, len,
			     IB_ACCESS_REMOTE_WRITE, true);
}

int tbr_x_mr_read(void *ctx, u32 rkey, u64 va, void *dst, u32 len)
{
	return tbr_x_mr_copy(ctx, rkey, va, dst, len, IB_ACCESS_REMOTE_READ,
			     false);
}

int tbr_x_mr_check(void *ctx, u32 rkey, u64 va, u32 len, u32 access)
{
	struct tbr_xqp *x = ctx;
	int need = access & TBR_ACC_REMOTE_READ ? IB_ACCESS_REMOTE_READ :
						  IB_ACCESS_REMOTE_WRITE;
	struct tbr_mr *mr;

	if (!tbr_x_qp_allows(x, need))
		return -TBR_WC_REM_INV_REQ_ERR;
	mr = tbr_rkey_get(x->qp, rkey, va, len, need);
	if (!mr)
		return -TBR_WC_REM_ACCESS_ERR;
	tbr_mr_put(mr);
	return 0;
}

/*
 * Atomics are atomic with respect to every tbrdma responder (one lock for
 * all), as for any software RDMA device; the 8 aligned bytes never straddle
 * a page.
 */
int tbr_x_mr_atomic(void *ctx, u32 rkey, u64 va, enum tbr_atomic_op op,
		    u64 compare_add, u64 swap, u64 *orig)
{
	struct tbr_xqp *x = ctx;
	struct tbr_mr *mr;
	unsigned long flags;
	u64 val;

	if (!tbr_x_qp_allows(x, IB_ACCESS_REMOTE_ATOMIC))
		return -TBR_WC_REM_INV_REQ_ERR;
	mr = tbr_rkey_get(x->qp, rkey, va, sizeof(val), IB_ACCESS_REMOTE_ATOMIC);
	if (!mr)
		return -TBR_WC_REM_ACCESS_ERR;
	spin_lock_irqsave(&tbr_atomic_lock, flags);
	tbr_mr_copy(mr, va, &val, sizeof(val), false);
	*orig = val;
	if (op == TBR_ATOMIC_FETCH_ADD)
		val += compare_add;
	else if (val == compare_add)
		val = swap;
	tbr_mr_copy(mr, va, &val, sizeof(val), true);
	spin_unlock_irqrestore(&tbr_atomic_lock, flags);
	tbr_mr_put(mr);
	return 0;
}

/*
 * Invalidate @key for this QP: the valid key of a fast registration MR of
 * its PD (mr_fast.c) or the rkey of a bound type 2 window (mw.c).
 */
static int tbr_x_inv(struct tbr_xqp *x, u32 key)
{
	if (tbr_key_is_mw(key))
		return tbr_mw_inv(x->qp, key);
	return tbr_mr_fast_inv(xqp_dev(x), x->qp->ibqp.pd, key);
}

/* SEND_WITH_INV received. Context: qp->lock held. */
int tbr_x_invalidate(void *ctx, u32 rkey)
{
	if (tbr_x_inv(ctx, rkey))
		return -TBR_WC_REM_INV_REQ_ERR;
	return 0;
}

/*
 * Run the REG_MR, LOCAL_INV or BIND_MW of sent slot @cookie
 * (tbr_x_local_prep), in send queue order. A failure completes it with
 * LOC_QP_OP_ERR, a failed bind with MW_BIND_ERR (as rxe), and the QP goes
 * to error. Context: qp->lock held.
 */
int tbr_x_local(void *ctx, u64 cookie)
{
	struct tbr_xqp *x = ctx;
	struct tbr_xsend *s = &x->sent[cookie & x->qp->sq.mask];

	switch (s->local_op) {
	case IB_WR_REG_MR:
		if (tbr_mr_fast_reg(x->qp, s->mr, s->key, s->access))
			return -TBR_WC_LOC_QP_OP_ERR;
		return 0;
	case IB_WR_BIND_MW:
		if (tbr_mw_bind(x->qp, &s->bind))
			return -TBR_WC_MW_BIND_ERR;
		return 0;
	default:
		if (tbr_x_inv(x, s->key))
			return -TBR_WC_LOC_QP_OP_ERR;
		return 0;
	}
}
