// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: RDMA verbs (a RoCE v2 HCA) over Thunderbolt/USB4 host-to-host DMA
 * rings. Module entry: creates this host's device, tbrdma0.
 */
#include <linux/module.h>

#include "tbrdma.h"

static struct tbr_dev *tbr_host_dev;

static int __init tbr_init(void)
{
	struct tbr_dev *tdev;

	tdev = tbr_dev_create();
	if (IS_ERR(tdev))
		return PTR_ERR(tdev);
	tbr_host_dev = tdev;
	return 0;
}

static void __exit tbr_exit(void)
{
	tbr_dev_destroy(tbr_host_dev);
}

module_init(tbr_init);
module_exit(tbr_exit);

MODULE_AUTHOR("tbrdma developers");
MODULE_DESCRIPTION("RDMA verbs over Thunderbolt/USB4 host-to-host DMA rings");
MODULE_LICENSE("Dual BSD/GPL");
