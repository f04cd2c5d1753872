// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: multicast groups of UD QPs (ibv_attach_mcast / ibv_detach_mcast;
 * librdmacm attaches the QP of rdma_join_multicast).
 *
 * A group is a multicast GID and the QP numbers of this device attached to
 * it. There is no fabric-wide membership: a UD send to a multicast GID goes
 * to every peer the device has a link to and to the device itself
 * (xport.c), each receiving device hands a copy to every QP of its own
 * attached to the group (the sender's own QP included, if attached, as HCAs
 * loop multicast back by default). The datagram's destination QPN is
 * 0xFFFFFF and its address block names the group (docs/protocol.md 5.2).
 *
 * Locking: attach and detach (process context) serialize on mcg_lock and
 * replace a group's member array as a whole (copy, list_replace_rcu,
 * kfree_rcu); the receive path reads it under RCU (tbr_mcast_members).
 */
#include <linux/rculist.h>
#include <linux/slab.h>
#include <rdma/ib_addr.h>

#include "tbrdma.h"

struct tbr_mcg {
	struct list_head node;		/* tdev->mcg_list (RCU) */
	union ib_gid mgid;
	u32 nqp;
	u32 qpn[TBR_MAX_MCG_QP];
	struct rcu_head rcu;
};

void tbr_mcast_init_dev(struct tbr_dev *tdev)
{
	INIT_LIST_HEAD(&tdev->mcg_list);
	mutex_init(&tdev->mcg_lock);
}

/* mcg_lock held, or under RCU */
static struct tbr_mcg *tbr_mcg_find(struct tbr_dev *tdev,
				    const union ib_gid *mgid)
{
	struct tbr_mcg *g;

	list_for_each_entry_rcu(g, &tdev->mcg_list, node,
				lockdep_is_held(&tdev->mcg_lock))
		if (!memcmp(g->mgid.raw, mgid->raw, sizeof(mgid->raw)))
			return g;
	return NULL;
}

bool tbr_gid_is_mcast(const union ib_gid *gid)
{
	return rdma_is_multicast_addr((struct in6_addr *)gid->raw);
}

/*
 * Context: process. Replace @old (may be NULL: a new group) by a copy with
 * @qpn added (@add) or removed; a group left empty goes away.
 */
static int tbr_mcg_update(struct tbr_dev *tdev, struct tbr_mcg *old,
			  const union ib_gid *mgid, u32 qpn, bool add)
{
	struct tbr_mcg *g;
	u32 i, n = 0;

	if (!add && old->nqp == 1) {
		list_del_rcu(&old->node);
		tdev->num_mcg--;
		kfree_rcu(old, rcu);
		return 0;
	}
	g = kzalloc(sizeof(*g), TBR_GFP_USER);
	if (!g)
		return -ENOMEM;
	g->mgid = *mgid;
	for (i = 0; old && i < old->nqp; i++)
		if (old->qpn[i] != qpn)
			g->qpn[n++] = old->qpn[i];
	if (add)
		g->qpn[n++] = qpn;
	g->nqp = n;
	if (old) {
		list_replace_rcu(&old->node, &g->node);
		kfree_rcu(old, rcu);
	} else {
		list_add_tail_rcu(&g->node, &tdev->mcg_list);
		tdev->num_mcg++;
	}
	return 0;
}

static bool tbr_mcg_has(const struct tbr_mcg *g, u32 qpn)
{
	u32 i;

	for (i = 0; g && i < g->nqp; i++)
		if (g->qpn[i] == qpn)
			return true;
	return false;
}

/* IBTA: only UD QPs join multicast groups; the LID is unused on RoCE */
static int tbr_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct tbr_dev *tdev = to_tbr_dev(ibqp->device);
	struct tbr_mcg *g;
	int err = 0;

	if (ibqp->qp_type != IB_QPT_UD || !tbr_gid_is_mcast(gid))
		return -EINVAL;
	mutex_lock(&tdev->mcg_lock);
	g = tbr_mcg_find(tdev, gid);
	if (tbr_mcg_has(g, ibqp->qp_num))
		goto out;		/* attached already: nothing to do */
	if ((g && g->nqp == TBR_MAX_MCG_QP) ||
	    (!g && tdev->num_mcg == TBR_MAX_MCG))
		err = -ENOMEM;
	else
		err = tbr_mcg_update(tdev, g, gid, ibqp->qp_num, true);
out:
	mutex_unlock(&tdev->mcg_lock);
	return err;
}

static int tbr_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct tbr_dev *tdev = to_tbr_dev(ibqp->device);
	struct tbr_mcg *g;
	int err = -EINVAL;

	mutex_lock(&tdev->mcg_lock);
	g = tbr_mcg_find(tdev, gid);
	if (tbr_mcg_has(g, ibqp->qp_num))
		err = tbr_mcg_update(tdev, g, gid, ibqp->qp_num, false);
	mutex_unlock(&tdev->mcg_lock);
	return err;
}

/*
 * Context: process. A QP is being destroyed: out of every group (uverbs
 * detaches user QPs itself; this covers kernel ULPs that do not), so its
 * number, once reused, is in no group.
 */
void tbr_mcast_qp_gone(struct tbr_qp *qp)
{
	struct tbr_dev *tdev = to_tbr_dev(qp->ibqp.device);
	struct tbr_mcg *g, *next;

	if (qp->ibqp.qp_type != IB_QPT_UD)
		return;
	mutex_lock(&tdev->mcg_lock);
	list_for_each_entry_safe(g, next, &tdev->mcg_list, node) {
		/* no memory for a copy: leave the stale number, it finds no QP */
		if (tbr_mcg_has(g, qp->ibqp.qp_num))
			tbr_mcg_update(tdev, g, &g->mgid, qp->ibqp.qp_num, false);
	}
	mutex_unlock(&tdev->mcg_lock);
}

/* Context: any. Copy the QPNs attached to @mgid into @qpn; returns how many. */
u32 tbr_mcast_members(struct tbr_dev *tdev, const u8 *mgid,
		      u32 qpn[TBR_MAX_MCG_QP])
{
	struct tbr_mcg *g;
	u32 n = 0;

	rcu_read_lock();
	g = tbr_mcg_find(tdev, (const union ib_gid *)mgid);
	if (g) {
		n = g->nqp;
		memcpy(qpn, g->qpn, n * sizeof(*qpn));
	}
	rcu_read_unlock();
	return n;
}

/* Context: process, the device unregistered: every QP is gone. */
void tbr_mcast_destroy_dev(struct tbr_dev *tdev)
{
	struct tbr_mcg *g, *next;

	list_for_each_entry_safe(g, next, &tdev->mcg_list, node) {
		list_del(&g->node);
		kfree(g);
	}
	mutex_destroy(&tdev->mcg_lock);
}

const struct ib_device_ops tbr_mcast_ops = {
	.attach_mcast = tbr_attach_mcast,
	.detach_mcast = tbr_detach_mcast,
};
