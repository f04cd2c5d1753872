// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: address handles (UD and GSI sends).
 *
 * An AH is a copy of the address vector the RDMA core gave us: the source
 * GID (the value behind sgid_index), the destination GID, the destination
 * MAC the core resolved (user AHs: ib_resolve_eth_dmac; kernel AHs: filled
 * by the caller, e.g. ib_init_ah_attr_from_wc) and the GRH fields. Every AH
 * gets a number (1..TBR_MAX_AH) in tdev->ah_xa; a UD send WQE names its AH
 * by that number (tbrdma_send_wqe.ah_num), so user and kernel WQEs reach
 * the transport the same way. xport.c copies the vector out under the
 * table's lock when it takes the WQE (tbr_ah_get_av) and picks the peer's
 * link from the MAC.
 *
 * Context: the RDMA core creates and destroys kernel AHs from atomic context
 * unless RDMA_CREATE_AH_SLEEPABLE / RDMA_DESTROY_AH_SLEEPABLE is set (ib_cm
 * under its spinlocks), so nothing here sleeps in that case.
 */
#include <rdma/ib_verbs.h>

#include "tbrdma.h"

void tbr_ah_init_dev(struct tbr_dev *tdev)
{
	xa_init_flags(&tdev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
}

static int tbr_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
			 struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tbr_dev(ibah->device);
	struct tbr_ah *ah = to_tbr_ah(ibah);
	struct rdma_ah_attr *a = init->ah_attr;
	struct tbrdma_create_ah_resp resp = {};
	const struct ib_global_route *grh;
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL :
							    GFP_ATOMIC;
	unsigned long flags;
	int err;

	/* RoCE: every address has a GRH and a resolved MAC */
	if (a->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(a) & IB_AH_GRH) ||
	    rdma_ah_get_port_num(a) != 1)
		return -EINVAL;
	grh = rdma_ah_read_grh(a);
	if (!grh->sgid_attr)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	ah->av.sgid = grh->sgid_attr->gid;
	ah->av.dgid = grh->dgid;
	ah->av.flow_label = grh->flow_label & 0xfffff;
	ah->av.traffic_class = grh->traffic_class;
	ah->av.hop_limit = grh->hop_limit;
	ah->av.sl = rdma_ah_get_sl(a);
	memcpy(ah->av.dmac, a->roce.dmac, ETH_ALEN);
	ah->av.pd = ibah->pd;

	if (atomic_inc_return(&tdev->num_ah) > TBR_MAX_AH) {
		err = -ENOMEM;
		goto err_count;
	}
	xa_lock_irqsave(&tdev->ah_xa, flags);
	err = __xa_alloc_cyclic(&tdev->ah_xa, &ah->num, ah,
				XA_LIMIT(1, TBR_MAX_AH), &tdev->ah_next, gfp);
	xa_unlock_irqrestore(&tdev->ah_xa, flags);
	if (err < 0)
		goto err_count;
	if (udata) {
		resp.ah_num = ah->num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}
	return 0;

err_erase:
	xa_lock_irqsave(&tdev->ah_xa, flags);
	__xa_erase(&tdev->ah_xa, ah->num);
	xa_unlock_irqrestore(&tdev->ah_xa, flags);
err_count:
	atomic_dec(&tdev->num_ah);
	return err;
}

static int tbr_destroy_ah(struct ib_ah *ibah, u32 destroy_flags)
{
	struct tbr_dev *tdev = to_tbr_dev(ibah->device);
	struct tbr_ah *ah = to_tbr_ah(ibah);
	unsigned long flags;

	/* after this no tbr_ah_get_av can see the AH: the core may free it */
	xa_lock_irqsave(&tdev->ah_xa, flags);
	__xa_erase(&tdev->ah_xa, ah->num);
	xa_unlock_irqrestore(&tdev->ah_xa, flags);
	atomic_dec(&tdev->num_ah);
	return 0;
}

static int tbr_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *a)
{
	struct tbr_ah *ah = to_tbr_ah(ibah);

	memset(a, 0, sizeof(*a));
	a->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(a, 1);
	rdma_ah_set_sl(a, ah->av.sl);
	rdma_ah_set_grh(a, &ah->av.dgid, ah->av.flow_label,
			ibah->sgid_attr ? ibah->sgid_attr->index : 0,
			ah->av.hop_limit, ah->av.traffic_class);
	memcpy(a->roce.dmac, ah->av.dmac, ETH_ALEN);
	return 0;
}

/*
 * Copy the address vector of AH @num into @av if it exists and belongs to
 * @pd. Context: any (IRQs may be off). Returns 0 or -EINVAL.
 */
int tbr_ah_get_av(struct tbr_dev *tdev, u32 num, struct ib_pd *pd,
		  struct tbr_ah_av *av)
{
	struct tbr_ah *ah;
	unsigned long flags;
	int err = -EINVAL;

	xa_lock_irqsave(&tdev->ah_xa, flags);
	ah = xa_load(&tdev->ah_xa, num);
	if (ah && ah->av.pd == pd) {
		*av = ah->av;
		err = 0;
	}
	xa_unlock_irqrestore(&tdev->ah_xa, flags);
	return err;
}

const struct ib_device_ops tbr_ah_ops = {
	.create_ah = tbr_create_ah,
	.create_user_ah = tbr_create_ah,
	.destroy_ah = tbr_destroy_ah,
	.query_ah = tbr_query_ah,
	INIT_RDMA_OBJ_SIZE(ib_ah, tbr_ah, ibah),
};
