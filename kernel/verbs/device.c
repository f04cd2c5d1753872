// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the ib_device: registration, device/port/P_Key queries.
 *
 * One port, RoCE v2 personality: link layer Ethernet, GIDs taken by the RDMA
 * core from the IP addresses of the device's netdev (tbrN). The port is
 * ACTIVE while tbrN has carrier, i.e. while a peer link has a rail up.
 *
 * Identity: the node GUID is the EUI-64 of tbrN's MAC (netdev.c routes by
 * it). With the module parameter host_id (make install's modprobe.d file
 * passes /etc/machine-id at every load) the MAC is derived from host_id and
 * the device's slot (0 for tbrdma0, the lowest free one for others), so GUIDs
 * survive module reloads and reboots and differ between the devices of one
 * host; without it the MAC is random per load (docs/architecture.md).
 */
#include <crypto/sha2.h>
#include <linux/etherdevice.h>
#include <linux/moduleparam.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "tbrdma.h"

/* the object tables' locks, one lockdep class each (see tbr_dev_create) */
static struct lock_class_key tbr_qp_xa_key, tbr_mr_xa_key, tbr_mw_xa_key;

static char *host_id;
module_param(host_id, charp, 0444);
MODULE_PARM_DESC(host_id, "this host's stable identity (make install passes /etc/machine-id): device GUIDs derive from it and survive reloads; unset: random per load");

/* An identity shorter than this (or with blanks) is refused at load. */
#define TBR_HOST_ID_MIN	8
#define TBR_HOST_ID_MAX	64

int tbr_host_id_check(void)
{
	size_t i, len = host_id ? strlen(host_id) : 0;

	if (!len) {
		pr_info("tbrdma: no host_id: device GUIDs are random and change at every load\n");
		return 0;
	}
	for (i = 0; i < len; i++)
		if (!isgraph(host_id[i]))
			break;
	if (len < TBR_HOST_ID_MIN || len > TBR_HOST_ID_MAX || i < len) {
		pr_err("tbrdma: host_id must be %d..%d printable characters without blanks\n",
		       TBR_HOST_ID_MIN, TBR_HOST_ID_MAX);
		return -EINVAL;
	}
	return 0;
}

/*
 * The MAC of slot @slot's tbrN: the first bytes of SHA-256 over a fixed
 * label, host_id and the slot (host_id itself, a machine-id, is not to be
 * shown on the wire), unicast and locally administered. False without
 * host_id.
 */
static bool tbr_dev_stable_mac(unsigned int slot, u8 *mac)
{
	u8 digest[SHA256_DIGEST_SIZE];
	char buf[TBR_HOST_ID_MAX + 32];
	int len;

	if (!host_id || !*host_id)
		return false;
	len = scnprintf(buf, sizeof(buf), "tbrdma node guid v1\n%s\n%u",
			host_id, slot);
	sha256(buf, len, digest);
	memcpy(mac, digest, ETH_ALEN);
	mac[0] = (mac[0] & ~0x01) | 0x02;
	memzero_explicit(buf, sizeof(buf));
	return true;
}

static int tbr_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
			    struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = 0;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = TBR_MAX_MR_SIZE;
	attr->page_size_cap = TBR_PAGE_SIZE_CAP;
	attr->vendor_id = TBR_VENDOR_ID;
	attr->vendor_part_id = TBR_VENDOR_PART_ID;
	attr->hw_ver = TBR_HW_VERSION;
	attr->max_pd = TBR_MAX_PD;
	attr->max_pkeys = TBR_MAX_PKEYS;
	attr->local_ca_ack_delay = 15;
	attr->max_qp = TBR_MAX_QP;
	attr->max_qp_wr = TBR_MAX_QP_WR;
	attr->max_send_sge = TBR_DEV_MAX_SGE;
	attr->max_recv_sge = TBR_DEV_MAX_SGE;
	attr->max_sge_rd = TBR_DEV_MAX_SGE;
	attr->max_cq = TBR_MAX_CQ;
	attr->max_cqe = TBR_MAX_CQE;
	attr->max_mr = TBR_MAX_MR - 1;
	attr->max_srq = TBR_MAX_SRQ;
	attr->max_srq_wr = TBR_MAX_SRQ_WR;
	attr->max_srq_sge = TBR_MAX_SRQ_SGE;
	attr->max_qp_rd_atom = TBR_MAX_RD_ATOM;
	attr->max_qp_init_rd_atom = TBR_MAX_RD_ATOM;
	attr->max_res_rd_atom = TBR_MAX_RD_ATOM * TBR_MAX_QP;
	/*
	 * Responder atomics run under one lock shared by every tbrdma QP
	 * (xport.c), so they are atomic across the whole HCA, not with CPU
	 * atomics on the same memory: IB_ATOMIC_HCA.
	 */
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_mcast_grp = TBR_MAX_MCG;
	attr->max_mcast_qp_attach = TBR_MAX_MCG_QP;
	attr->max_total_mcast_qp_attach = TBR_MAX_MCG * TBR_MAX_MCG_QP;
	/*
	 * Fast registration (mr_fast.c): alloc_mr, map_mr_sg, IB_WR_REG_MR,
	 * IB_WR_LOCAL_INV and SEND_WITH_INV, what nvme-rdma and rpcrdma need.
	 * No kernel_cap_flags (6.1 and 6.12 alike): no reserved local DMA
	 * lkey (the RDMA core gives each PD a DMA MR) and no SG_GAPS MRs.
	 * Memory windows of type 1 and 2B for users (mw.c).
	 */
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B;
	attr->max_mw = TBR_MAX_MW;
	attr->max_fast_reg_page_list_len = TBR_MAX_FAST_REG_PAGES;
	/* completion timestamps (cq.c): CLOCK_MONOTONIC in ns, 64 bits */
	attr->hca_core_clock = TBRDMA_CLOCK_KHZ;
	attr->timestamp_mask = U64_MAX;
	return 0;
}

static int tbr_query_port(struct ib_device *ibdev, u32 port,
			  struct ib_port_attr *attr)
{
	struct net_device *ndev = to_tbr_dev(ibdev)->netdev;
	bool up = netif_running(ndev) && netif_carrier_ok(ndev);

	/* the RDMA core zeroed *attr */
	attr->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
				IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	/*
	 * RC/UC messages are framed by the transport itself (4 KiB rail
	 * frames) whatever path MTU a QP is given. The active MTU is what a
	 * UD datagram may carry: a rail frame minus the transport headers and
	 * the UD address block is less than 4096, so 2048.
	 */
	attr->active_mtu = IB_MTU_2048;
	attr->gid_tbl_len = TBR_PORT_GID_TBL_LEN;
	/* QP1 (GSI) carries CM MADs: rdma_cm and ib_cm work on this port */
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->pkey_tbl_len = TBR_MAX_PKEYS;
	attr->max_msg_sz = TBR_PORT_MAX_MSG_SZ;
	attr->active_width = READ_ONCE(to_tbr_dev(ibdev)->port_width);
	attr->active_speed = READ_ONCE(to_tbr_dev(ibdev)->port_speed);
	return 0;
}

static int tbr_get_port_immutable(struct ib_device *ibdev, u32 port,
				  struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr = {};
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	/*
	 * RoCE v2 with the MAD and CM capabilities: the MAD layer creates
	 * QP1 (a GSI QP over the UD path) at registration, ib_cm/rdma_cm
	 * exchange their MADs through it.
	 */
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int tbr_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			  u16 *pkey)
{
	if (index >= TBR_MAX_PKEYS)
		return -EINVAL;
	*pkey = tbr_pkey_get(&to_tbr_dev(ibdev)->pkeys, index);
	return 0;
}

/*
 * tbr_dev_set_pkeys - make @keys (@n P_Keys, a set: one per partition, none
 * of partition 0) the port's partitions. A partition already in the table
 * keeps its slot (its membership bit may change), one no longer given
 * leaves it empty, a new one takes the lowest empty slot (the default
 * partition slot 0 when free): a QP whose partition stays keeps its index
 * and never notices. Tells the RDMA core (IB_EVENT_PKEY_CHANGE: its P_Key
 * cache, rdma_cm) when a slot changed.
 * Returns 0, -EINVAL for an invalid set, -ENOSPC beyond the table.
 * Context: process; takes tdev->pkey_lock.
 */
int tbr_dev_set_pkeys(struct tbr_dev *tdev, const u16 *keys, u32 n)
{
	u16 next[TBR_PKEY_TBL_LEN];
	bool taken[TBR_PKEY_TBL_LEN] = {};
	bool changed = false;
	u32 i, j;

	if (n > TBR_PKEY_TBL_LEN)
		return -ENOSPC;
	for (i = 0; i < n; i++) {
		if (!(keys[i] & TBR_PKEY_PART))
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (!((keys[i] ^ keys[j]) & TBR_PKEY_PART))
				return -EINVAL;
	}
	mutex_lock(&tdev->pkey_lock);
	/* partitions that stay keep their slot */
	for (j = 0; j < TBR_PKEY_TBL_LEN; j++) {
		u16 old = tdev->pkeys.key[j];

		next[j] = 0;
		for (i = 0; old && i < n; i++) {
			if (!((old ^ keys[i]) & TBR_PKEY_PART)) {
				next[j] = keys[i];
				taken[i] = true;
			}
		}
	}
	/* the default partition prefers slot 0, the rest the lowest free */
	for (i = 0; i < n; i++) {
		if (taken[i])
			continue;
		j = (keys[i] & TBR_PKEY_PART) == TBR_PKEY_PART && !next[0] ? 0 : 1;
		for (; j < TBR_PKEY_TBL_LEN && next[j]; j++)
			;
		if (j == TBR_PKEY_TBL_LEN)
			j = 0;
		next[j] = keys[i];
	}
	for (j = 0; j < TBR_PKEY_TBL_LEN; j++) {
		if (tdev->pkeys.key[j] == next[j])
			continue;
		WRITE_ONCE(tdev->pkeys.key[j], next[j]);
		changed = true;
	}
	mutex_unlock(&tdev->pkey_lock);
	if (changed && !tdev->unregistered) {
		struct ib_event ev = {
			.device = &tdev->ibdev,
			.element.port_num = 1,
			.event = IB_EVENT_PKEY_CHANGE,
		};

		ib_dispatch_event(&ev);
	}
	return 0;
}

static enum rdma_link_layer tbr_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static const struct ib_device_ops tbr_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = 1,

	.query_device = tbr_query_device,
	.query_port = tbr_query_port,
	.get_port_immutable = tbr_get_port_immutable,
	.query_pkey = tbr_query_pkey,
	.get_link_layer = tbr_get_link_layer,
	.alloc_pd = tbr_alloc_pd,
	.dealloc_pd = tbr_dealloc_pd,
	.alloc_ucontext = tbr_alloc_ucontext,
	.dealloc_ucontext = tbr_dealloc_ucontext,
	.disassociate_ucontext = tbr_disassociate_ucontext,
	.mmap = tbr_mmap,
	.mmap_free = tbr_mmap_free,

	INIT_RDMA_OBJ_SIZE(ib_pd, tbr_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, tbr_ucontext, ibuc),
};

/*
 * Context: process, may sleep. Creates tbrN and registers tbrdmaN on it;
 * @slot picks the stable GUID (see host_id), @name the device's name (NULL:
 * the next free tbrdmaN). Returns the device or an
 * ERR_PTR.
 */
struct tbr_dev *tbr_dev_create(unsigned int slot, const char *name)
{
	struct tbr_dev *tdev;
	struct net_device *ndev;
	u8 mac[ETH_ALEN];
	int err;

	ndev = tbr_netdev_create(tbr_dev_stable_mac(slot, mac) ? mac : NULL);
	if (IS_ERR(ndev))
		return ERR_CAST(ndev);

	tdev = ib_alloc_device(tbr_dev, ibdev);
	if (!tdev) {
		err = -ENOMEM;
		goto err_netdev;
	}
	tdev->netdev = ndev;
	/* until rails with a known speed come up (netdev.c tbr_port_rate_update) */
	tdev->port_width = IB_WIDTH_4X;
	tdev->port_speed = IB_SPEED_QDR;
	mutex_init(&tdev->pkey_lock);
	/* the default partition for all until tbrdmad says otherwise */
	tdev->pkeys.key[0] = TBR_PKEY_DEFAULT;

	tdev->ibdev.node_type = RDMA_NODE_IB_CA;
	tdev->ibdev.phys_port_cnt = 1;
	tdev->ibdev.num_comp_vectors = 1;
	strscpy(tdev->ibdev.node_desc, "tbrdma Thunderbolt RDMA",
		sizeof(tdev->ibdev.node_desc));
	addrconf_addr_eui48((u8 *)&tdev->ibdev.node_guid, ndev->dev_addr);
	ib_set_device_ops(&tdev->ibdev, &tbr_dev_ops);
	ib_set_device_ops(&tdev->ibdev, &tbr_cq_ops);
	ib_set_device_ops(&tdev->ibdev, &tbr_qp_ops);
	ib_set_device_ops(&tdev->ibdev, &tbr_srq_ops);
	ib_set_device_ops(&tdev->ibdev, &tbr_mr_ops);
	ib_set_device_ops(&tdev->ibdev, &tbr_mr_fast_ops);
	ib_set_device_ops(&tdev->ibdev, &tbr_mw_ops);
	ib_set_device_ops(&tdev->ibdev, &tbr_ah_ops);
	tbr_ah_init_dev(tdev);
	ib_set_device_ops(&tdev->ibdev, &tbr_counter_ops);
	ib_set_device_ops(&tdev->ibdev, &tbr_mcast_ops);
	tbr_mcast_init_dev(tdev);
	tdev->ibdev.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				       BIT_ULL(IB_USER_VERBS_CMD_POST_RECV);
	/*
	 * One lockdep class per table: xa_init_flags() keys its lock by call
	 * site, so the three would share one, and the QP table's lock, taken
	 * in softirq (the receive path's tbr_qp_get), would look like the MR
	 * table's, taken with softirqs on (process context only).
	 */
	xa_init_flags(&tdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	lockdep_set_class(&tdev->qp_xa.xa_lock, &tbr_qp_xa_key);
	xa_init_flags(&tdev->mr_xa, XA_FLAGS_ALLOC1);
	lockdep_set_class(&tdev->mr_xa.xa_lock, &tbr_mr_xa_key);
	xa_init_flags(&tdev->mw_xa, XA_FLAGS_ALLOC);
	lockdep_set_class(&tdev->mw_xa.xa_lock, &tbr_mw_xa_key);
	err = tbr_loop_create(tdev);
	if (err)
		goto err_dealloc_only;
	tbr_xport_attach(tdev);
	tbr_netdev_bind(ndev, tdev);

	err = ib_device_set_netdev(&tdev->ibdev, ndev, 1);
	if (err)
		goto err_dealloc;
	err = ib_register_device(&tdev->ibdev, name ?: "tbrdma%d", NULL);
	if (err)
		goto err_dealloc;
	return tdev;

err_dealloc:
	tbr_loop_destroy(tdev);
	tbr_xport_detach(tdev);
	tbr_netdev_destroy(ndev);
	ib_dealloc_device(&tdev->ibdev);
	return ERR_PTR(err);
err_dealloc_only:
	ib_dealloc_device(&tdev->ibdev);
err_netdev:
	tbr_netdev_destroy(ndev);
	return ERR_PTR(err);
}

/*
 * Context: process, may sleep; tbr_ctl_mutex held. Unregister the ib_device
 * once: its clients' remove callbacks run and every user lets go (kernel
 * ULPs shut down over the rails, which must still be there).
 */
void tbr_dev_unregister(struct tbr_dev *tdev)
{
	if (tdev->unregistered)
		return;
	tdev->unregistered = true;
	ib_unregister_device(&tdev->ibdev);
}

/* Context: process, may sleep. Unregisters (waits for users) then frees. */
void tbr_dev_destroy(struct tbr_dev *tdev)
{
	struct net_device *ndev = tdev->netdev;

	tbr_dev_unregister(tdev);
	/* every QP is gone: nothing sends on the loopback link any more */
	tbr_loop_destroy(tdev);
	tbr_xport_detach(tdev);
	/* tbrN transmits through tdev: it goes before tdev is freed */
	tbr_netdev_destroy(ndev);
	WARN_ON(!xa_empty(&tdev->qp_xa) || !xa_empty(&tdev->mr_xa) ||
		!xa_empty(&tdev->ah_xa) || !xa_empty(&tdev->mw_xa));
	xa_destroy(&tdev->qp_xa);
	xa_destroy(&tdev->ah_xa);
	xa_destroy(&tdev->mr_xa);
	xa_destroy(&tdev->mw_xa);
	tbr_mcast_destroy_dev(tdev);
	ib_dealloc_device(&tdev->ibdev);
}
