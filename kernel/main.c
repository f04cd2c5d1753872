// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: RDMA verbs (a RoCE v2 HCA) over Thunderbolt/USB4 host-to-host DMA
 * rings. Module entry: creates this host's device, tbrdma0, and the generic
 * netlink family "tbrdma" through which more devices and emulated cables
 * are made (docs/netlink.md). Exit tears everything down: the family first
 * (no new commands), then every cable, then every device, and waits for the
 * RCU callbacks it queued (rcu_barrier) before its code goes.
 */
#include <linux/module.h>
#include <linux/rcupdate.h>

#include "tbrdma.h"
#include "link/rail.h"
#include "backends/tb.h"

static int __init tbr_init(void)
{
	struct tbr_dev *tdev;
	int err;

	err = tbr_host_id_check();
	if (err)
		return err;
	err = tbr_emu_init();
	if (err)
		return err;
	err = tbr_eth_init();
	if (err)
		goto err_emu;
	err = tbr_sysfs_init();
	if (err)
		goto err_eth;
	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_ctl_dev_new(true);
	mutex_unlock(&tbr_ctl_mutex);
	if (IS_ERR(tdev)) {
		err = PTR_ERR(tdev);
		goto err_sysfs;
	}
	err = tbr_nl_init();
	if (err)
		goto err_devs;
	tbr_tb_init();		/* optional: logs and goes on without it */
	return 0;

err_devs:
	tbr_ctl_del_all();
	rcu_barrier();		/* links are freed by call_rcu callbacks */
err_sysfs:
	tbr_sysfs_exit();
err_eth:
	tbr_eth_exit();
err_emu:
	tbr_emu_exit();
	return err;
}

static void __exit tbr_exit(void)
{
	tbr_tb_exit();		/* Thunderbolt rails down before any device goes */
	tbr_nl_exit();
	tbr_ctl_del_all();
	tbr_sysfs_exit();
	tbr_eth_exit();
	tbr_emu_exit();
	/* call_rcu callbacks (freeing links) are module code: wait for them */
	rcu_barrier();
}

module_init(tbr_init);
module_exit(tbr_exit);

MODULE_AUTHOR("tbrdma developers");
MODULE_DESCRIPTION("RDMA verbs over Thunderbolt/USB4 host-to-host DMA rings");
MODULE_LICENSE("Dual BSD/GPL");
