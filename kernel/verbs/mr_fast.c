// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: fast registration memory regions (IB_MR_TYPE_MEM_REG), the
 * memory management extensions kernel ULPs (nvme-rdma, nvmet-rdma, rpcrdma)
 * need.
 *
 * alloc_mr (mr.c, with the state tbr_mr_fast_new makes here) makes an MR
 * with a key index and a page list of max_num_sg entries, and no valid key.
 * map_mr_sg (ib_sg_to_pages) fills the page list and
 * ibmr.iova/length/page_size; the ULP may rotate the key byte
 * (ib_update_fast_reg_key). Nothing of that is visible to lookups: only the
 * IB_WR_REG_MR work request, when the send queue reaches it (xport_mem.c,
 * in order with the QP's other WRs), takes a snapshot of iova, length and
 * access and publishes the key (tbr_mr.key). IB_WR_LOCAL_INV, or a
 * SEND_WITH_INV naming the key received on a QP of the MR's PD, makes the key
 * invalid again; from then on an access with it is refused like any unknown
 * key (a remote access error for the peer). As in rxe, a REG_MR needs an
 * invalid MR of the QP's PD and may change only the key byte.
 *
 * Accesses against invalidation: every access of a fast MR holds its
 * registration (mr->fast_lock for read, from tbr_mr_get's key check to
 * tbr_mr_put, under the accessing QP's lock), and REG_MR and invalidation
 * take it for write. So an invalidation, local or remote, on any QP of the
 * PD, completes only once every access of the old key has finished copying
 * (the ULP may then reuse the pages); an access that starts later finds the
 * key invalid and fails cleanly (a remote access error for the peer). Those
 * holds are short (one frame's copy, irqs off), so the writer spins.
 *
 * The page list: map_mr_sg fills a list of its own (pages[]), which nothing
 * but REG_MR reads; REG_MR copies it into the registered list (reg[]) that
 * accesses read. So map_mr_sg may run while the MR is valid and in use
 * (iSER maps before its LOCAL_INV and REG_MR, chained, run) and changes
 * nothing an access sees; as with a hardware HCA, which reads the page list
 * when it executes the REG_MR, the ULP must not map again between posting
 * a REG_MR and its completion.
 *
 * The device is a virtual-DMA one (no dma_device): the "DMA addresses"
 * ib_sg_to_pages hands set_page are kernel virtual addresses of blocks of
 * ibmr.page_size bytes, contiguous within a block.
 */
#include <linux/lockdep.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "tbrdma.h"

struct tbr_mr_fast {
	u32 max_pages;
	u32 npages;		/* filled by map_mr_sg */
	/* the registration: written by REG_MR under mr->fast_lock */
	u32 page_shift;		/* of ibmr.page_size, at REG_MR */
	u32 first_off;		/* offset of iova in reg[0] */
	u32 reg_npages;		/* npages at REG_MR */
	u64 *reg;		/* pages[] at REG_MR (max_pages, after pages) */
	/* map_mr_sg's: kernel virtual addresses of the blocks */
	u64 pages[];
};

#define TBR_MR_FAST_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			    IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			    IB_ACCESS_RELAXED_ORDERING)

struct tbr_mr_fast *tbr_mr_fast_new(enum ib_mr_type type, u32 max_num_sg)
{
	struct tbr_mr_fast *f;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EINVAL);
	if (!max_num_sg || max_num_sg > TBR_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	f = kvzalloc(struct_size(f, pages, 2 * max_num_sg), GFP_KERNEL);
	if (!f)
		return ERR_PTR(-ENOMEM);
	f->max_pages = max_num_sg;
	f->reg = f->pages + max_num_sg;
	return f;
}

static int tbr_mr_fast_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct tbr_mr_fast *f = to_tbr_mr(ibmr)->fast;

	if (f->npages == f->max_pages)
		return -ENOMEM;
	f->pages[f->npages++] = addr;
	return 0;
}

/*
 * Fills pages[] and ibmr.iova/length/page_size, none of which an access
 * reads (only REG_MR does): no lock, whatever the MR's state. Context:
 * process, the ULP's (which owns the MR).
 */
static int tbr_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
			 int sg_nents, unsigned int *sg_offset)
{
	to_tbr_mr(ibmr)->fast->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset,
			      tbr_mr_fast_set_page);
}

/*
 * IB_WR_REG_MR of @mr with @key and @access, posted on @qp: the page list
 * map_mr_sg filled becomes the registration. Context: qp->lock held; takes
 * mr->fast_lock for write. Returns 0, or -EINVAL (not a fast MR, still
 * valid, another PD or key index, bad access, or a page list that does not
 * cover the range).
 */
int tbr_mr_fast_reg(struct tbr_qp *qp, struct tbr_mr *mr, u32 key, int access)
{
	struct tbr_mr_fast *f = mr->fast;
	u64 iova = mr->ibmr.iova, len = mr->ibmr.length;
	u32 shift, off;
	int err = -EINVAL;

	if (!f || mr->ibmr.pd != qp->ibqp.pd ||
	    key >> 8 != mr->index || (access & ~TBR_MR_FAST_ACCESS))
		return -EINVAL;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (!is_power_of_2(mr->ibmr.page_size) ||
	    mr->ibmr.page_size < SZ_4K || !f->npages ||
	    f->npages > f->max_pages)
		return -EINVAL;
	shift = ilog2(mr->ibmr.page_size);
	off = iova & (mr->ibmr.page_size - 1);
	if (iova + len < iova ||
	    off + len > ((u64)f->npages << shift))
		return -EINVAL;
	write_lock(&mr->fast_lock);
	if (mr->key)		/* still valid: not registered again */
		goto out;
	memcpy(f->reg, f->pages, f->npages * sizeof(*f->reg));
	f->page_shift = shift;
	f->first_off = off;
	f->reg_npages = f->npages;
	mr->iova = iova;
	mr->length = len;
	mr->access = access;
	/* the snapshot before the key: tbr_mr_get reads the key first */
	smp_store_release(&mr->key, key);
	err = 0;
out:
	write_unlock(&mr->fast_lock);
	return err;
}

/*
 * Invalidate @key (IB_WR_LOCAL_INV, or a SEND_WITH_INV received on a QP of
 * @pd). Returns once no access of that registration runs: mr->fast_lock
 * for write waits for every access holding it (other QPs' copies; this
 * QP's own cannot run, its lock is held). Context: the QP's lock held.
 * Returns 0, or -EINVAL when @key is not the valid key of a fast MR of @pd.
 */
int tbr_mr_fast_inv(struct tbr_dev *tdev, struct ib_pd *pd, u32 key)
{
	struct tbr_mr *mr;
	int err = -EINVAL;

	rcu_read_lock();	/* the MR's memory (freed by RCU) */
	mr = xa_load(&tdev->mr_xa, key >> 8);
	if (mr && mr->fast && mr->ibmr.pd == pd) {
		write_lock(&mr->fast_lock);
		if (mr->key == key) {
			WRITE_ONCE(mr->key, 0);
			err = 0;
		}
		write_unlock(&mr->fast_lock);
	}
	rcu_read_unlock();
	return err;
}

/*
 * tbr_mr_get() of fast MR @mr, whose key matched @key and that it holds a
 * reference to: hold the registration for read and check @key again under
 * it. True: held until tbr_mr_put (tbr_mr_fast_release), no invalidation or
 * REG_MR can run meanwhile; false: invalidated since, nothing held.
 * Context: irqs off (a QP's lock), as every writer's: an interrupted reader
 * would deadlock a writer on its own CPU.
 */
bool tbr_mr_fast_hold(struct tbr_mr *mr, u32 key)
{
	lockdep_assert_irqs_disabled();
	read_lock(&mr->fast_lock);
	if (READ_ONCE(mr->key) == key)
		return true;
	read_unlock(&mr->fast_lock);
	return false;
}

void tbr_mr_fast_release(struct tbr_mr *mr)
{
	read_unlock(&mr->fast_lock);
}

/*
 * tbr_mr_copy() for a fast MR: @iova.. is inside the registered range (the
 * caller checked). Context: the registration held (tbr_mr_get).
 */
int tbr_mr_fast_copy(struct tbr_mr *mr, u64 iova, void *buf, u32 len,
		     bool to_mr)
{
	struct tbr_mr_fast *f = mr->fast;
	u32 shift = f->page_shift;
	u64 pos = iova - mr->iova + f->first_off;

	while (len) {
		u64 pg = pos >> shift;
		u32 off = pos & ((1ULL << shift) - 1);
		u32 n = min_t(u64, len, (1ULL << shift) - off);
		void *va;

		if (pg >= f->reg_npages)
			return -EFAULT;
		va = (void *)(uintptr_t)(f->reg[pg] + off);
		if (to_mr)
			memcpy(va, buf, n);
		else
			memcpy(buf, va, n);
		buf += n;
		pos += n;
		len -= n;
	}
	return 0;
}

/* dereg_mr: free the page list (no-op for other MRs). */
void tbr_mr_fast_free(struct tbr_mr *mr)
{
	kvfree(mr->fast);
}

const struct ib_device_ops tbr_mr_fast_ops = {
	.map_mr_sg = tbr_map_mr_sg,
};
