// SPDX-License-Identifier: GPL-2.0
/*
 * tbsim: the XDomain, service and control-channel symbols (xdomain.c, bus.c,
 * ctl.c, property.c), exported from a file that sees what
 * drivers/thunderbolt/xdomain.c of the same kernel sees (its headers in its
 * order, the real internal tb.h from Debian's linux-source package), so their
 * modversions CRCs are the real thunderbolt.ko's (see abi_nhi.c).
 */
#include <linux/version.h>	/* macros only: adds no type */
#include <linux/device.h>
#include <linux/delay.h>
#include <linux/kmod.h>
#include <linux/module.h>
#include <linux/pm_runtime.h>
#include <linux/prandom.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/string_helpers.h>
#endif
#include <linux/utsname.h>
#include <linux/uuid.h>
#include <linux/workqueue.h>

#include "tb.h"

EXPORT_SYMBOL_GPL(tb_xdomain_response);
EXPORT_SYMBOL_GPL(tb_xdomain_request);
EXPORT_SYMBOL_GPL(tb_register_protocol_handler);
EXPORT_SYMBOL_GPL(tb_unregister_protocol_handler);
EXPORT_SYMBOL_GPL(tb_register_service_driver);
EXPORT_SYMBOL_GPL(tb_unregister_service_driver);
EXPORT_SYMBOL_GPL(tb_service_type);
EXPORT_SYMBOL_GPL(tb_xdomain_type);
EXPORT_SYMBOL_GPL(tb_xdomain_lane_bonding_enable);
EXPORT_SYMBOL_GPL(tb_xdomain_lane_bonding_disable);
EXPORT_SYMBOL_GPL(tb_xdomain_alloc_in_hopid);
EXPORT_SYMBOL_GPL(tb_xdomain_alloc_out_hopid);
EXPORT_SYMBOL_GPL(tb_xdomain_release_in_hopid);
EXPORT_SYMBOL_GPL(tb_xdomain_release_out_hopid);
EXPORT_SYMBOL_GPL(tb_xdomain_enable_paths);
EXPORT_SYMBOL_GPL(tb_xdomain_disable_paths);
EXPORT_SYMBOL_GPL(tb_xdomain_find_by_uuid);
EXPORT_SYMBOL_GPL(tb_xdomain_find_by_route);
EXPORT_SYMBOL_GPL(tb_register_property_dir);
EXPORT_SYMBOL_GPL(tb_unregister_property_dir);
