// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: memory regions.
 *
 * Keys: lkey == rkey == index << 8 | key byte. The index (1 .. TBR_MAX_MR-1)
 * finds the MR in tdev->mr_xa; the key byte is random (as in rxe), never the
 * byte of the previous registration, so a remote peer cannot guess the key
 * of the next MR from one it was given, and a stale key of a reused index
 * matches only by a 1-in-255 chance; ibv_rereg_mr keeps the index and draws
 * a new key byte. The transport looks MRs up with tbr_mr_get()
 * (RCU + refcount, any context) and moves bytes with tbr_mr_copy();
 * deregistration waits until every such reference is dropped. A fast
 * registration MR's reference also holds its registration (mr_fast.c):
 * an invalidation waits for it, so tbr_mr_get and tbr_mr_put of one must
 * run in one stretch with interrupts off (the transport: under a QP's lock).
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "tbrdma.h"

#define TBR_MR_ACCESS_OK (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			  IB_ACCESS_RELAXED_ORDERING | IB_ACCESS_MW_BIND)

static int tbr_mr_check_access(int access)
{
	if (access & ~TBR_MR_ACCESS_OK)
		return -EOPNOTSUPP;
	/* IBTA o10-26: remote write or atomic needs local write */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/* Drop a reference (tbr_mr_get's, or the MR's own). Context: any. */
static void tbr_mr_unref(struct tbr_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

/* A random key byte other than the last one handed out (device-wide). */
static u32 tbr_mr_key_byte(struct tbr_dev *tdev)
{
	u8 last = atomic_read(&tdev->key_last);
	u8 b;

	do {
		b = get_random_u8();
	} while (b == last);
	atomic_set(&tdev->key_last, b);
	return b;
}

/*
 * Context: process. Publish @mr under a new key (a fast registration MR:
 * its ibmr keys; lookups find it once a REG_MR made it valid).
 */
static int tbr_mr_add(struct tbr_dev *tdev, struct tbr_mr *mr)
{
	u32 key;
	int err;

	if (atomic_inc_return(&tdev->num_mr) > TBR_MAX_MR - 1) {
		atomic_dec(&tdev->num_mr);
		return -ENOMEM;
	}
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	err = xa_alloc_cyclic(&tdev->mr_xa, &mr->index, NULL,
			      XA_LIMIT(1, TBR_MAX_MR - 1), &tdev->mr_next,
			      GFP_KERNEL);
	if (err < 0) {
		atomic_dec(&tdev->num_mr);
		return err;
	}
	key = mr->index << 8 | tbr_mr_key_byte(tdev);
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	mr->key = mr->fast ? 0 : key;
	/* visible to lookups only once complete */
	xa_store(&tdev->mr_xa, mr->index, mr, GFP_KERNEL);
	return 0;
}

/* A fast registration MR (kernel ULPs), its state mr_fast.c's. */
static struct ib_mr *tbr_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
				  u32 max_num_sg)
{
	struct tbr_dev *tdev = to_tbr_dev(ibpd->device);
	struct tbr_mr_fast *fast;
	struct tbr_mr *mr;
	int err;

	fast = tbr_mr_fast_new(type, max_num_sg);
	if (IS_ERR(fast))
		return ERR_CAST(fast);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		kvfree(fast);
		return ERR_PTR(-ENOMEM);
	}
	mr->fast = fast;
	rwlock_init(&mr->fast_lock);
	err = tbr_mr_add(tdev, mr);
	if (err) {
		kvfree(fast);
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

static struct ib_mr *tbr_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct tbr_dev *tdev = to_tbr_dev(ibpd->device);
	struct tbr_mr *mr;
	int err;

	err = tbr_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	mr = kzalloc(sizeof(*mr), TBR_GFP_USER);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->iova = 0;
	mr->length = U64_MAX;
	mr->access = access;
	err = tbr_mr_add(tdev, mr);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/*
 * Context: process. Pin [start, start + length) of the caller's memory for
 * @access into mr->umem and list its pages in mr->pages (npages, page_off).
 */
static int tbr_mr_pin(struct ib_device *ibdev, struct tbr_mr *mr, u64 start,
		      u64 length, int access)
{
	struct sg_page_iter iter;
	struct ib_umem *umem;
	unsigned long i = 0;

	umem = ib_umem_get(ibdev, start, length, access);
	if (IS_ERR(umem))
		return PTR_ERR(umem);
	mr->npages = ib_umem_num_pages(umem);
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages), TBR_GFP_USER);
	if (!mr->pages) {
		ib_umem_release(umem);
		return -ENOMEM;
	}
	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (i == mr->npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&iter);
	}
	if (i != mr->npages) {
		kvfree(mr->pages);
		ib_umem_release(umem);
		return -EFAULT;
	}
	mr->umem = umem;
	mr->page_off = ib_umem_offset(umem);
	return 0;
}

static void tbr_mr_unpin(struct tbr_mr *mr)
{
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
}

static struct ib_mr *tbr_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				     u64 virt_addr, int access,
				     struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tbr_dev(ibpd->device);
	struct tbr_mr *mr;
	int err;

	err = tbr_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	if (!length || length > TBR_MAX_MR_SIZE ||
	    virt_addr + length < virt_addr)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), TBR_GFP_USER);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = tbr_mr_pin(ibpd->device, mr, start, length, access);
	if (err)
		goto err_free;
	mr->iova = virt_addr;
	mr->length = length;
	mr->access = access;
	mr->ibmr.iova = virt_addr;
	mr->ibmr.length = length;
	err = tbr_mr_add(tdev, mr);
	if (err)
		goto err_unpin;
	return &mr->ibmr;

err_unpin:
	tbr_mr_unpin(mr);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/*
 * ibv_rereg_mr: a user MR changes its translation (IB_MR_REREG_TRANS: new
 * range and iova), PD or access rights in place, keeping its index, and
 * always gets a new key byte: the old lkey/rkey are stale from then on
 * (a local access with them fails with LOC_PROT_ERR, a remote one with
 * REM_ACCESS_ERR). Everything that can fail (access check, pinning the new
 * range) happens first, so a failed call leaves the MR as it was. Then the
 * MR is taken out of the table and every transport reference drained (as in
 * dereg) before the swap, so no access ever sees a half-changed MR.
 * Access that newly allows writes to memory pinned read-only re-pins the
 * same range writable. Context: process.
 */
static struct ib_mr *tbr_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				       u64 length, u64 virt_addr, int access,
				       struct ib_pd *pd, struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tbr_dev(ibmr->device);
	struct tbr_mr *mr = to_tbr_mr(ibmr);
	struct tbr_mr mem = {};
	bool repin;
	u32 key;
	int err;

	if (!mr->umem)
		return ERR_PTR(-EINVAL);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	err = tbr_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	if (flags & IB_MR_REREG_TRANS) {
		if (!length || length > TBR_MAX_MR_SIZE ||
		    virt_addr + length < virt_addr)
			return ERR_PTR(-EINVAL);
	} else {
		start = mr->umem->address;
		length = mr->length;
		virt_addr = mr->iova;
	}
	repin = (flags & IB_MR_REREG_TRANS) ||
		(ib_access_writable(access) && !mr->umem->writable);
	if (repin) {
		err = tbr_mr_pin(ibmr->device, &mem, start, length, access);
		if (err)
			return ERR_PTR(err);
	}

	/* out of the table (index kept reserved), running accesses drained */
	xa_store(&tdev->mr_xa, mr->index, NULL, GFP_KERNEL);
	synchronize_rcu();
	tbr_mr_unref(mr);
	wait_for_completion(&mr->released);

	if (repin) {
		swap(mr->umem, mem.umem);
		swap(mr->pages, mem.pages);
		swap(mr->npages, mem.npages);
		swap(mr->page_off, mem.page_off);
		tbr_mr_unpin(&mem);
		mr->iova = virt_addr;
		mr->length = length;
	}
	mr->access = access;
	/* the RDMA core moves the PD's use count; lookups check ibmr.pd */
	if (flags & IB_MR_REREG_PD)
		mr->ibmr.pd = pd;
	do {	/* the old key must not come back */
		key = mr->index << 8 | tbr_mr_key_byte(tdev);
	} while (key == mr->ibmr.lkey);
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	mr->key = key;		/* what lookups match (a user MR, never fast) */
	refcount_set(&mr->ref, 1);
	reinit_completion(&mr->released);
	xa_store(&tdev->mr_xa, mr->index, mr, GFP_KERNEL);
	return NULL;
}

static int tbr_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tbr_dev(ibmr->device);
	struct tbr_mr *mr = to_tbr_mr(ibmr);

	xa_erase(&tdev->mr_xa, mr->index);
	tbr_mr_unref(mr);
	wait_for_completion(&mr->released);
	tbr_mr_unpin(mr);
	tbr_mr_fast_free(mr);
	atomic_dec(&tdev->num_mr);
	kfree_rcu(mr, rcu);
	return 0;
}

/*
 * tbr_mr_get - find the MR of a key and check an access to it
 * @key: an lkey (with TBR_MR_LKEY in @access) or an rkey
 * @pd: the PD of the QP the access comes from; the MR must belong to it
 * @iova, @len: the range accessed; it must lie inside the MR
 * @access: IB_ACCESS_LOCAL_WRITE / REMOTE_WRITE / REMOTE_READ /
 *	REMOTE_ATOMIC bits the MR must grant, plus TBR_MR_LKEY
 *
 * Context: any (RCU lookup, no sleeping); a fast registration MR's: irqs
 * off, tbr_mr_put in the same stretch (its registration is held for read
 * until then, tbr_mr_fast_hold). Returns the MR with a reference (drop it
 * with tbr_mr_put) or NULL when the key is unknown or stale, the PD
 * differs, the range is outside the MR or a right is missing.
 */
struct tbr_mr *tbr_mr_get(struct tbr_dev *tdev, u32 key, struct ib_pd *pd,
			  u64 iova, u64 len, int access)
{
	int need = access & ~TBR_MR_LKEY;
	struct tbr_mr *mr;

	rcu_read_lock();
	mr = xa_load(&tdev->mr_xa, key >> 8);
	/* pairs with the fast-reg's release of the key (mr_fast.c): its pages are set */
	if (mr && (smp_load_acquire(&mr->key) != key ||
		   !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	if (!mr)
		return NULL;
	/* a fast MR: the key again, now that no invalidation can run */
	if (mr->fast && !tbr_mr_fast_hold(mr, key)) {
		tbr_mr_unref(mr);
		return NULL;
	}
	if (mr->ibmr.pd != pd || (mr->access & need) != need ||
	    iova < mr->iova || iova + len < iova ||
	    (mr->length != U64_MAX && iova + len > mr->iova + mr->length)) {
		tbr_mr_put(mr);
		return NULL;
	}
	/* rkeys: remote access must have been granted at all */
	if (!(access & TBR_MR_LKEY) &&
	    !(mr->access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			    IB_ACCESS_REMOTE_ATOMIC))) {
		tbr_mr_put(mr);
		return NULL;
	}
	return mr;
}

/* Drop tbr_mr_get's reference (and a fast MR's hold). Context: as the get. */
void tbr_mr_put(struct tbr_mr *mr)
{
	if (mr->fast)
		tbr_mr_fast_release(mr);
	tbr_mr_unref(mr);
}

/*
 * tbr_mr_copy - copy between MR memory at @iova and a kernel buffer
 * @to_mr: true: @buf -> MR; false: MR -> @buf
 * The caller holds a reference from tbr_mr_get() for a range covering
 * [iova, iova + len). Context: any (kmap_local_page, no sleeping).
 * Returns 0, or -EFAULT if the range is outside the MR.
 */
int tbr_mr_copy(struct tbr_mr *mr, u64 iova, void *buf, u32 len, bool to_mr)
{
	u64 pos;

	if (iova < mr->iova || iova + len < iova ||
	    (mr->length != U64_MAX && iova + len > mr->iova + mr->length))
		return -EFAULT;
	if (mr->fast)
		return tbr_mr_fast_copy(mr, iova, buf, len, to_mr);
	if (!mr->umem) {	/* DMA MR: iova is a kernel virtual address */
		void *va = (void *)(uintptr_t)iova;

		if (to_mr)
			memcpy(va, buf, len);
		else
			memcpy(buf, va, len);
		return 0;
	}
	pos = iova - mr->iova + mr->page_off;
	while (len) {
		unsigned long pg = pos >> PAGE_SHIFT;
		u32 off = pos & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - off);
		void *va;

		if (pg >= mr->npages)
			return -EFAULT;
		va = kmap_local_page(mr->pages[pg]);
		if (to_mr) {
			memcpy(va + off, buf, n);
			flush_dcache_page(mr->pages[pg]);
		} else {
			memcpy(buf, va + off, n);
		}
		kunmap_local(va);
		buf += n;
		pos += n;
		len -= n;
	}
	return 0;
}

/*
 * tbr_mr_page - the page of a user MR that holds all of [@iova, @iova + @len)
 * and the bytes' @offset in it; NULL when the range crosses a page or lies
 * outside the MR, and for DMA and fast registration MRs (TX zero-copy takes
 * the page, docs/protocol.md section 8). The caller holds a tbr_mr_get()
 * reference. Context: any.
 */
struct page *tbr_mr_page(struct tbr_mr *mr, u64 iova, u32 len, u32 *offset)
{
	unsigned long pg;
	u64 pos;

	if (mr->fast || !mr->umem || !len || iova < mr->iova || iova + len < iova ||
	    iova + len > mr->iova + mr->length)
		return NULL;
	pos = iova - mr->iova + mr->page_off;
	pg = pos >> PAGE_SHIFT;
	*offset = pos & ~PAGE_MASK;
	if (pg >= mr->npages || *offset + len > PAGE_SIZE)
		return NULL;
	return mr->pages[pg];
}

const struct ib_device_ops tbr_mr_ops = {
	.alloc_mr = tbr_alloc_mr,
	.get_dma_mr = tbr_get_dma_mr,
	.reg_user_mr = tbr_reg_user_mr,
	.rereg_user_mr = tbr_rereg_user_mr,
	.dereg_mr = tbr_dereg_mr,
};
