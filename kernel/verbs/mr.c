// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: memory regions.
 *
 * Keys: lkey == rkey == index << 8 | key byte. The index (1 .. TBR_MAX_MR-1)
 * finds the MR in tdev->mr_xa; the key byte is random (as in rxe), never the
 * byte of the previous registration, so a remote peer cannot guess the key
 * of the next MR from one it was given, and a stale key of a reused index
 * matches only by a 1-in-255 chance. The transport looks MRs up with tbr_mr_get()
 * (RCU + refcount, any context) and moves bytes with tbr_mr_copy();
 * deregistration waits until every such reference is dropped.
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
			  IB_ACCESS_RELAXED_ORDERING)

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
int tbr_mr_add(struct tbr_dev *tdev, struct tbr_mr *mr)
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

static struct ib_mr *tbr_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				     u64 virt_addr, int access,
				     struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tbr_dev(ibpd->device);
	struct sg_page_iter iter;
	struct ib_umem *umem;
	struct tbr_mr *mr;
	unsigned long i = 0;
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
	umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(umem)) {
		err = PTR_ERR(umem);
		goto err_free;
	}
	mr->umem = umem;
	mr->npages = ib_umem_num_pages(umem);
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages), TBR_GFP_USER);
	if (!mr->pages) {
		err = -ENOMEM;
		goto err_umem;
	}
	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (i == mr->npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&iter);
	}
	if (i != mr->npages) {
		err = -EFAULT;
		goto err_pages;
	}
	mr->page_off = ib_umem_offset(umem);
	mr->iova = virt_addr;
	mr->length = length;
	mr->access = access;
	mr->ibmr.iova = virt_addr;
	mr->ibmr.length = length;
	err = tbr_mr_add(tdev, mr);
	if (err)
		goto err_pages;
	return &mr->ibmr;

err_pages:
	kvfree(mr->pages);
err_umem:
	ib_umem_release(umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static int tbr_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tbr_dev(ibmr->device);
	struct tbr_mr *mr = to_tbr_mr(ibmr);

	xa_erase(&tdev->mr_xa, mr->index);
	tbr_mr_put(mr);
	wait_for_completion(&mr->released);
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
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
 * Context: any (RCU lookup, no sleeping). Returns the MR with a reference
 * (drop it with tbr_mr_put) or NULL when the key is unknown or stale, the
 * PD differs, the range is outside the MR or a right is missing.
 */
struct tbr_mr *tbr_mr_get(struct tbr_dev *tdev, u32 key, struct ib_pd *pd,
			  u64 iova, u64 len, int access)
{
	int need = access & ~TBR_MR_LKEY;
	struct tbr_mr *mr;

	rcu_read_lock();
	mr = xa_load(&tdev->mr_xa, key >> 8);
	if (mr && (smp_load_acquire(&mr->key) != key ||
		   !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	if (!mr)
		return NULL;
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

/* Context: any. */
void tbr_mr_put(struct tbr_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
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

const struct ib_device_ops tbr_mr_ops = {
	.get_dma_mr = tbr_get_dma_mr,
	.reg_user_mr = tbr_reg_user_mr,
	.dereg_mr = tbr_dereg_mr,
};
