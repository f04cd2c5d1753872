// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: user contexts and the queue memory shared with userspace.
 *
 * Every queue (CQ, SQ, RQ, SRQ) is one buffer laid out as in
 * uapi/tbrdma-abi.h: zeroed pages charged to the caller's memory cgroup
 * (vmalloc_user() cannot charge), vmap()ed with VM_USERMAP so that
 * remap_vmalloc_range() maps them. The queues of one user context may take
 * at most uctx_queue_mb MiB (module parameter). A user-visible queue is
 * published through an
 * rdma_user_mmap_entry; the memory belongs to the entry and is freed by
 * tbr_mmap_free() when the object dropped it and no mmap() is in progress.
 * Pages mapped into a process stay alive through their page references
 * (remap_vmalloc_range) until the process unmaps them, so destroying an
 * object, or disassociating the context at module removal, never leaves
 * userspace with a dangling mapping.
 */
#include <linux/kmemleak.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "tbrdma.h"

static unsigned int uctx_queue_mb = 4096;
module_param(uctx_queue_mb, uint, 0644);
MODULE_PARM_DESC(uctx_queue_mb,
		 "MiB of queue memory (CQ/QP/SRQ rings) one user context may allocate (default 4096)");

/* Context: process. */
int tbr_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct tbrdma_alloc_ucontext_resp resp = {
		.abi_version = TBRDMA_UVERBS_ABI_VERSION,
		.ring_hdr_size = TBRDMA_RING_HDR_SIZE,
		.max_sge = TBR_DEV_MAX_SGE,
		.max_inline = TBR_DEV_MAX_INLINE,
	};

	if (udata->outlen < sizeof(resp))
		return udata->outlen ? -EINVAL : 0;
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

void tbr_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * Module removal with live user contexts: the RDMA core destroys every
 * object after this returns. Nothing to revoke: the queue pages stay with
 * the process (page references) and we install no vm_ops, so the module can
 * go while the mappings live on.
 */
void tbr_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

int tbr_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rentry;
	struct tbr_mmap_entry *entry;
	int err;

	rentry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rentry)
		return -EINVAL;
	entry = container_of(rentry, struct tbr_mmap_entry, rdma_entry);
	err = remap_vmalloc_range(vma, entry->addr, 0);
	rdma_user_mmap_entry_put(rentry);
	return err;
}

/*
 * Context: process. @size bytes (page aligned) of zeroed queue memory,
 * charged to the caller's memory cgroup; its pages in *@pagesp.
 */
static void *tbr_ring_alloc(size_t size, struct page ***pagesp)
{
	unsigned long i, n = size >> PAGE_SHIFT;
	struct page **pages;
	void *addr;

	pages = kvcalloc(n, sizeof(*pages), TBR_GFP_USER);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(TBR_GFP_USER | __GFP_ZERO);
		if (!pages[i])
			goto err;
	}
	addr = vmap(pages, n, VM_MAP | VM_USERMAP, PAGE_KERNEL);
	if (addr) {
		/*
		 * kmemleak does not scan vmap()ed pages, and a kernel ULP's
		 * posted receive (its wr_cqe) may be referenced from nowhere
		 * else: scan the ring, never report it (min_count 0)
		 */
		kmemleak_alloc(addr, size, 0, GFP_KERNEL);
		*pagesp = pages;
		return addr;
	}
err:
	while (i--)
		__free_page(pages[i]);
	kvfree(pages);
	return NULL;
}

/* Context: process. Pages still mapped by a process live on until unmapped. */
static void tbr_ring_free(void *addr, struct page **pages, size_t size)
{
	unsigned long i;

	if (!addr)
		return;
	kmemleak_free(addr);
	vunmap(addr);
	for (i = 0; i < size >> PAGE_SHIFT; i++)
		__free_page(pages[i]);
	kvfree(pages);
}

void tbr_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct tbr_mmap_entry *entry =
		container_of(rdma_entry, struct tbr_mmap_entry, rdma_entry);

	tbr_ring_free(entry->addr, entry->pages, entry->size);
	kfree(entry);
}

/*
 * Context: process. Allocate a zeroed queue of @entries (a power of 2)
 * slots of @stride bytes; with @udata (a user object) also publish it for
 * mmap. Returns 0 or -errno.
 */
int tbr_queue_init(struct tbr_dev *tdev, struct tbr_queue *q, u32 entries,
		   u32 stride, struct ib_udata *udata)
{
	struct tbr_mmap_entry *entry;
	struct tbr_ucontext *uctx;
	size_t size;
	int err;

	if (!entries || !is_power_of_2(entries))
		return -EINVAL;
	size = PAGE_ALIGN(TBRDMA_RING_HDR_SIZE + (size_t)entries * stride);
	memset(q, 0, sizeof(*q));
	if (udata) {
		uctx = rdma_udata_to_drv_context(udata, struct tbr_ucontext, ibuc);
		if (atomic64_add_return(size, &uctx->queue_bytes) >
		    (s64)READ_ONCE(uctx_queue_mb) << 20) {
			atomic64_sub(size, &uctx->queue_bytes);
			return -ENOMEM;
		}
		q->uctx = uctx;
	}
	err = -ENOMEM;
	q->ring = tbr_ring_alloc(size, &q->pages);
	if (!q->ring)
		goto err_uncharge;
	q->slots = (void *)q->ring + TBRDMA_RING_HDR_SIZE;
	q->size = size;
	q->entries = entries;
	q->mask = entries - 1;
	q->stride = stride;
	if (!udata)
		return 0;

	entry = kzalloc(sizeof(*entry), TBR_GFP_USER);
	if (!entry)
		goto err_free;
	entry->addr = q->ring;
	entry->pages = q->pages;
	entry->size = size;
	err = rdma_user_mmap_entry_insert(&q->uctx->ibuc, &entry->rdma_entry,
					  size);
	if (err) {
		kfree(entry);
		goto err_free;
	}
	q->mentry = &entry->rdma_entry;
	return 0;

err_free:
	tbr_ring_free(q->ring, q->pages, size);
	q->ring = NULL;
err_uncharge:
	if (q->uctx)
		atomic64_sub(size, &q->uctx->queue_bytes);
	q->uctx = NULL;
	return err;
}

/* Context: process. The memory of a published queue goes with its entry. */
void tbr_queue_free(struct tbr_queue *q)
{
	if (q->uctx)
		atomic64_sub(q->size, &q->uctx->queue_bytes);
	if (q->mentry)
		rdma_user_mmap_entry_remove(q->mentry);
	else
		tbr_ring_free(q->ring, q->pages, q->size);
	q->ring = NULL;
	q->mentry = NULL;
	q->uctx = NULL;
}

u64 tbr_queue_mmap_offset(const struct tbr_queue *q)
{
	return q->mentry ? rdma_user_mmap_get_offset(q->mentry) : 0;
}
