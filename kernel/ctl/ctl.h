/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma: the control plane. The device registry (registry.c: the device
 * list, device new/delete, the backends' table), the generic netlink family
 * (netlink.c, docs/netlink.md) and the "tbrdma" sysfs bus (sysfs.c). The
 * last two observe the link layer (link.h, struct tbr_link_observer); the
 * backends add their own genl commands with the helpers below.
 * Context of everything here: "process".
 */
#ifndef TBRDMA_CTL_H
#define TBRDMA_CTL_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <net/genetlink.h>

#include "link/rail.h"

/*
 * A backend's control-plane side (struct tbr_backend.ctl), every member
 * optional:
 *  nl_ops     its own generic netlink commands (emu cables, eth bindings),
 *             joined to the family by tbr_nl_init().
 *  fill_rail  context "process", tbr_ctl_mutex held: add its own
 *             attributes to a RAIL_GET reply of its @rail (eth: the netdev;
 *             emu: the fault knobs and cut state).
 */
struct tbr_backend_ctl {
	const struct genl_small_ops *nl_ops;
	unsigned int n_nl_ops;
	int (*fill_rail)(struct tbr_rail *rail, struct sk_buff *msg);
};

/* ---- registry.c ---------------------------------------------------------- */

/* Devices, in creation order (struct tbr_rails.node); tbr_ctl_mutex. */
extern struct list_head tbr_devices;

/*
 * Module load: run the backends' init, in table order (@backends lives as
 * long as the module); tbr_ctl_start() then their start, once the host
 * device and the family exist. Unload: tbr_ctl_unregister_all() (the
 * ib_devices, while the rails still carry), tbr_ctl_stop() (stop, reverse
 * order), tbr_ctl_del_all(), tbr_ctl_exit() (exit, reverse order).
 */
int tbr_ctl_init(const struct tbr_backend *const *backends, unsigned int n);
void tbr_ctl_start(void);
void tbr_ctl_stop(void);
void tbr_ctl_exit(void);
/* tbr_ctl_mutex held: @tdev's fabric key changed, every backend is told. */
void tbr_ctl_key_set(struct tbr_dev *tdev);
/* The backends' table, for the family's commands (netlink.c). */
unsigned int tbr_ctl_backends(const struct tbr_backend *const **backends);

/* tbr_ctl_mutex held; @name NULL: the next free "tbrdma%d" */
struct tbr_dev *tbr_ctl_dev_new(bool host, const char *name);
/* the ib_device (its ULPs let go over working rails), the rails, the rest */
int tbr_ctl_dev_del(struct tbr_dev *tdev);
struct tbr_dev *tbr_ctl_dev_find(const char *name);
void tbr_ctl_unregister_all(void);		/* takes tbr_ctl_mutex */
void tbr_ctl_del_all(void);			/* takes tbr_ctl_mutex */

/* ---- netlink.c ----------------------------------------------------------- */

/*
 * Register the family: its generic commands, @more (main.c: route_nl.c's)
 * and every backend's own (struct tbr_backend_ctl.nl_ops).
 */
int tbr_nl_init(const struct genl_small_ops *more, unsigned int n_more);
void tbr_nl_exit(void);

/* For the backends' commands, which run under tbr_ctl_mutex: */
/* a dump entry's or event's header */
void *tbr_nl_msg_put(struct sk_buff *msg, u32 portid, u32 seq, int flags, u8 cmd);
/* a reply's header */
void *tbr_nl_reply_put(struct sk_buff *msg, struct genl_info *info, u8 cmd);
/* the device named by string attribute @attr, or an ERR_PTR (extack set) */
struct tbr_dev *tbr_nl_dev(struct genl_info *info, int attr);
/* the family's attribute policy (for nested attributes) */
const struct nla_policy *tbr_nl_policy(void);

/* ---- route_nl.c: the forwarding table's commands (docs/netlink.md) ------- */

/* ROUTE_SET and ROUTE_GET, for tbr_nl_init(); they use the helpers above */
extern const struct genl_small_ops tbr_route_nl_ops[];
extern const unsigned int tbr_route_nl_n_ops;

/* ---- sysfs.c ------------------------------------------------------------- */

int tbr_sysfs_init(void);
void tbr_sysfs_exit(void);

#endif /* TBRDMA_CTL_H */
