// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: RDMA verbs (a RoCE v2 HCA) over Thunderbolt/USB4 host-to-host DMA
 * rings. Module entry, the one place that knows every part by name: the
 * rail backends' table, the link layer's observers (tbrN, sysfs, genl,
 * tracepoints), the host's device tbrdma0, the generic netlink family
 * "tbrdma" through which more devices and rails are made (docs/netlink.md).
 * Exit tears everything
 * down: the family first (no new commands), the backends' rails, every
 * device, and waits for the RCU callbacks it queued (rcu_barrier) before
 * its code goes.
 */
#include <linux/module.h>
#include <linux/rcupdate.h>

#include "tbrdma.h"
#include "ctl/ctl.h"
#include "obs/capture.h"
#include "backends/backends.h"
#include "core/tbr_eth_wire.h"
#include "core/tbr_nego.h"
#include "uapi/tbrdma-abi.h"
#include "uapi/tbrdma-netlink.h"

/* One value per limit: what the uapi and the core say is tied to tbr_limits.h. */
static_assert(TBRDMA_RAILS_MAX == TBR_LINK_MAX_RAILS);
static_assert(TBR_NEGO_MAX_RAILS == TBR_LINK_MAX_RAILS);
static_assert(TBR_ETH_FRAME_MAX == TBR_FRAME_SIZE_MAX);
static_assert(TBR_NEGO_FRAME_MAX <= TBR_FRAME_SIZE_MAX);
static_assert(TBRDMA_MGMT_MAX <= TBR_FRAME_SIZE_MAX);

/* Every rail backend; init and start in this order, stop and exit reversed. */
static const struct tbr_backend *const tbr_backends[] = {
	&tbr_emu_backend,
	&tbr_eth_backend,
	&tbr_tb_backend,
};

static int __init tbr_init(void)
{
	struct tbr_dev *tdev;
	int err;

	err = tbr_host_id_check();
	if (err)
		return err;
	err = tbr_ctl_init(tbr_backends, ARRAY_SIZE(tbr_backends));
	if (err)
		return err;
	tbr_link_observer_add(&tbr_trace_observer);
	tbr_link_observer_add(&tbr_netdev_observer);
	tbr_link_observer_add(&tbr_cap_observer);
	err = tbr_sysfs_init();
	if (err)
		goto err_backends;
	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_ctl_dev_new(true, NULL);
	mutex_unlock(&tbr_ctl_mutex);
	if (IS_ERR(tdev)) {
		err = PTR_ERR(tdev);
		goto err_sysfs;
	}
	err = tbr_nl_init(tbr_route_nl_ops, tbr_route_nl_n_ops);
	if (err)
		goto err_devs;
	tbr_ctl_start();	/* optional backends (tb) log and go on without */
	return 0;

err_devs:
	tbr_ctl_del_all();
	rcu_barrier();		/* links are freed by call_rcu callbacks */
err_sysfs:
	tbr_sysfs_exit();
err_backends:
	tbr_link_observer_del(&tbr_cap_observer);
	tbr_link_observer_del(&tbr_netdev_observer);
	tbr_link_observer_del(&tbr_trace_observer);
	tbr_ctl_exit();
	return err;
}

static void __exit tbr_exit(void)
{
	tbr_ctl_unregister_all();	/* ULPs let go while the rails carry */
	tbr_ctl_stop();		/* Thunderbolt rails down before any device goes */
	tbr_nl_exit();
	tbr_ctl_del_all();
	tbr_sysfs_exit();
	tbr_link_observer_del(&tbr_cap_observer);
	tbr_link_observer_del(&tbr_netdev_observer);
	tbr_link_observer_del(&tbr_trace_observer);
	tbr_ctl_exit();
	/* call_rcu callbacks (freeing links) are module code: wait for them */
	rcu_barrier();
}

module_init(tbr_init);
module_exit(tbr_exit);

MODULE_AUTHOR("tbrdma developers");
MODULE_DESCRIPTION("RDMA verbs over Thunderbolt/USB4 host-to-host DMA rings");
MODULE_LICENSE("Dual BSD/GPL");
