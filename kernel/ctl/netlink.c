// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: generic netlink family "tbrdma" (kernel/uapi/tbrdma-netlink.h,
 * docs/netlink.md): extra devices, emulated cables, link and rail dumps with
 * counters, fault knobs, the management datagram channel, and events on the
 * multicast groups "events" and "mgmt". The commands of one backend (emu
 * cables, eth bindings) live with that backend and join the family here;
 * events come from the link layer's observer list.
 *
 * Every command runs under tbr_ctl_mutex (the family is parallel_ops, so a
 * device deletion that waits for RDMA users does not hold genl_mutex).
 * Commands that change anything need CAP_NET_ADMIN in the initial user
 * namespace (GENL_ADMIN_PERM, never GENL_UNS_ADMIN_PERM: devices, links and
 * routes are global, not per network namespace; docs/netlink.md).
 *
 * The family is netnsok and the genl core checks a group's
 * GENL_MCAST_CAP_NET_ADMIN against the user namespace that owns the
 * socket's network namespace (genl_bind() in 6.1 and 6.12), so the mapped
 * root of an unprivileged `unshare -Urn` passes it; neither kernel lets a
 * family refuse a join (6.1 has no bind hook, 6.12 ignores its result).
 * Management datagrams therefore go only to network namespaces owned by
 * the initial user namespace (tbr_nl_mcast_mgmt), where that check is
 * CAP_NET_ADMIN in init_user_ns: a listener elsewhere may join and hears
 * nothing. Events go to every namespace (public, docs/netlink.md).
 *
 * Dumps: netlink holds a reference on this module from the start of a dump
 * to its NLMSG_DONE. A dumpit returns skb->len while entries are left and 0
 * once the last one is in the skb, so NLMSG_DONE rides in the same skb and
 * the reference is dropped before the request's sendmsg() returns. Were
 * DONE sent only in a later round, it would wait for the requester's next
 * recvmsg(): a daemon refreshing its state (or any reader that stops
 * reading) would pin the module meanwhile, and rmmod would fail "in use".
 */
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>

#include "tbrdma.h"
#include "ctl/ctl.h"
#include "obs/capture.h"
#include "uapi/tbrdma-netlink.h"

static struct genl_family tbr_genl;

/* the observers' event codes are the family's */
static_assert((int)TBR_OBS_NEW == TBRDMA_EVENT_NEW && (int)TBR_OBS_DEL == TBRDMA_EVENT_DEL &&
	      (int)TBR_OBS_UP == TBRDMA_EVENT_UP && (int)TBR_OBS_DOWN == TBRDMA_EVENT_DOWN);

enum { TBR_MCGRP_EVENTS, TBR_MCGRP_MGMT };

static const struct genl_multicast_group tbr_mcgrps[] = {
	[TBR_MCGRP_EVENTS] = { .name = TBRDMA_MCGRP_EVENTS },
#ifdef GENL_MCAST_CAP_NET_ADMIN
	/*
	 * neighbour datagrams steer the fabric: listening is for admins (of
	 * the initial user namespace: tbr_nl_mcast_mgmt)
	 */
	[TBR_MCGRP_MGMT] = { .name = TBRDMA_MCGRP_MGMT,
			     .flags = GENL_MCAST_CAP_NET_ADMIN },
#else
	[TBR_MCGRP_MGMT] = { .name = TBRDMA_MCGRP_MGMT },
#endif
};

static struct netlink_range_validation tbr_ppm_range = { .max = 1000000 };
static struct netlink_range_validation tbr_delay_range = { .max = 1000000 };

static const struct nla_policy tbr_policy[TBRDMA_ATTR_MAX + 1] = {
	[TBRDMA_ATTR_DEV_NAME]		= { .type = NLA_NUL_STRING, .len = IB_DEVICE_NAME_MAX - 1 },
	[TBRDMA_ATTR_DEV_INDEX]		= { .type = NLA_U32 },
	[TBRDMA_ATTR_NETDEV_NAME]	= { .type = NLA_NUL_STRING, .len = IFNAMSIZ - 1 },
	[TBRDMA_ATTR_NETDEV_IFINDEX]	= { .type = NLA_U32 },
	[TBRDMA_ATTR_DEV_GUID]		= { .type = NLA_U64 },
	[TBRDMA_ATTR_HOST]		= { .type = NLA_FLAG },
	[TBRDMA_ATTR_PEER_DEV_NAME]	= { .type = NLA_NUL_STRING, .len = IB_DEVICE_NAME_MAX - 1 },
	[TBRDMA_ATTR_CABLE_ID]		= NLA_POLICY_MIN(NLA_U32, 1),
	[TBRDMA_ATTR_RAIL_COUNT]	= NLA_POLICY_RANGE(NLA_U32, 1, TBRDMA_RAILS_MAX),
	[TBRDMA_ATTR_DEPTH]		= NLA_POLICY_RANGE(NLA_U32, 8, 4096),
	[TBRDMA_ATTR_LINK_ID]		= NLA_POLICY_MIN(NLA_U32, 1),
	[TBRDMA_ATTR_PEER_GUID]		= { .type = NLA_U64 },
	[TBRDMA_ATTR_RAIL_ID]		= NLA_POLICY_MAX(NLA_U32, TBR_LINK_MAX_RAILS - 1),
	[TBRDMA_ATTR_BACKEND]		= { .type = NLA_NUL_STRING, .len = 15 },
	[TBRDMA_ATTR_STATE]		= NLA_POLICY_MAX(NLA_U8, TBRDMA_STATE_UP),
	[TBRDMA_ATTR_RAILS_UP]		= { .type = NLA_U32 },
	[TBRDMA_ATTR_RAILS_TOTAL]	= { .type = NLA_U32 },
	[TBRDMA_ATTR_LINKS]		= { .type = NLA_U32 },
	[TBRDMA_ATTR_TX_DEPTH]		= { .type = NLA_U32 },
	[TBRDMA_ATTR_RX_DEPTH]		= { .type = NLA_U32 },
	[TBRDMA_ATTR_TX_CREDITS]	= { .type = NLA_U32 },
	[TBRDMA_ATTR_DROP_PPM]		= NLA_POLICY_FULL_RANGE(NLA_U32, &tbr_ppm_range),
	[TBRDMA_ATTR_DUP_PPM]		= NLA_POLICY_FULL_RANGE(NLA_U32, &tbr_ppm_range),
	[TBRDMA_ATTR_REORDER]		= NLA_POLICY_MAX(NLA_U32, 1024),
	[TBRDMA_ATTR_DELAY_US]		= NLA_POLICY_FULL_RANGE(NLA_U32, &tbr_delay_range),
	[TBRDMA_ATTR_RATE_BPS]		= { .type = NLA_U64 },
	[TBRDMA_ATTR_CUT]		= NLA_POLICY_MAX(NLA_U8, 1),
	[TBRDMA_ATTR_STATS]		= { .type = NLA_NESTED },
	[TBRDMA_ATTR_LOOP_STATS]	= { .type = NLA_NESTED },
	[TBRDMA_ATTR_EVENT]		= { .type = NLA_U8 },
	[TBRDMA_ATTR_MGMT_DATA]		= NLA_POLICY_RANGE(NLA_BINARY, 1, TBRDMA_MGMT_MAX),
	[TBRDMA_ATTR_CUT_STATE]		= { .type = NLA_U8 },
	[TBRDMA_ATTR_ETH_IFNAME]	= { .type = NLA_NUL_STRING, .len = IFNAMSIZ - 1 },
	[TBRDMA_ATTR_ETH_IFINDEX]	= { .type = NLA_U32 },
	[TBRDMA_ATTR_ETH_PEER_MAC]	= NLA_POLICY_EXACT_LEN(ETH_ALEN),
	[TBRDMA_ATTR_MAX_FRAME]		= { .type = NLA_U32 },
	[TBRDMA_ATTR_LANE_MBPS]		= { .type = NLA_U32 },
	[TBRDMA_ATTR_LANES]		= { .type = NLA_U32 },
	[TBRDMA_ATTR_RING_MS ... TBRDMA_ATTR_RX_MEAN_PPM] = { .type = NLA_U32 },
	[TBRDMA_ATTR_RX_HOLD_US]	= NLA_POLICY_FULL_RANGE(NLA_U32, &tbr_delay_range),
	[TBRDMA_ATTR_ONE_WAY]		= { .type = NLA_FLAG },
	[TBRDMA_ATTR_ETH_PEERS]		= { .type = NLA_U32 },
	[TBRDMA_ATTR_ETH_HELLO_TX]	= { .type = NLA_U64 },
	[TBRDMA_ATTR_ETH_HELLO_RX]	= { .type = NLA_U64 },
	[TBRDMA_ATTR_ETH_RX_FOREIGN]	= { .type = NLA_U64 },
	[TBRDMA_ATTR_ROUTE_VERSION]	= { .type = NLA_U32 },
	[TBRDMA_ATTR_ROUTES]		= { .type = NLA_NESTED },
	[TBRDMA_ATTR_ROUTE]		= { .type = NLA_NESTED },
	[TBRDMA_ATTR_ROUTE_DST]		= { .type = NLA_U64 },
	[TBRDMA_ATTR_ROUTE_NEXT_HOP]	= { .type = NLA_U64 },
	[TBRDMA_ATTR_ROUTE_HOPS]	= NLA_POLICY_RANGE(NLA_U32, 1, TBRDMA_ROUTE_HOPS_MAX),
	[TBRDMA_ATTR_PDF]		= NLA_POLICY_RANGE(NLA_U8, TBR_PDF_MGMT, TBR_PDF_ROUTED),
	[TBRDMA_ATTR_TRUST]		= NLA_POLICY_MAX(NLA_U8, TBRDMA_TRUST_REJECTED),
	[TBRDMA_ATTR_PKEYS]		= { .type = NLA_NESTED },
	[TBRDMA_ATTR_PKEY]		= { .type = NLA_U16 },
	[TBRDMA_ATTR_LINKS_HELD]	= { .type = NLA_U32 },
	[TBRDMA_ATTR_SNAPLEN]		= { .type = NLA_U32 },
	[TBRDMA_ATTR_AUTH_KEY]		= NLA_POLICY_RANGE(NLA_BINARY, TBR_AUTH_KEY_MIN,
							   TBR_AUTH_KEY_MAX),
	[TBRDMA_ATTR_AUTH_GRACE_MS]	= { .type = NLA_U32 },
	[TBRDMA_ATTR_AUTH_KEYED]	= { .type = NLA_U8 },
	[TBRDMA_ATTR_AUTH_REFUSED]	= { .type = NLA_U64 },
	[TBRDMA_ATTR_DRAIN_RATE]	= { .type = NLA_U32 },
};

/* ---- message builders ----------------------------------------------------- */

static const u8 tbr_stat_attr[TBR_CNT_MAX] = {
	[TBR_CNT_TX_FRAMES]	= TBRDMA_STAT_TX_FRAMES,
	[TBR_CNT_TX_BYTES]	= TBRDMA_STAT_TX_BYTES,
	[TBR_CNT_RX_FRAMES]	= TBRDMA_STAT_RX_FRAMES,
	[TBR_CNT_RX_BYTES]	= TBRDMA_STAT_RX_BYTES,
	[TBR_CNT_TX_LOST]	= TBRDMA_STAT_TX_LOST,
	[TBR_CNT_RX_NOBUF]	= TBRDMA_STAT_RX_NOBUF,
	[TBR_CNT_DROPS]		= TBRDMA_STAT_DROPS,
	[TBR_CNT_DUPS]		= TBRDMA_STAT_DUPS,
	[TBR_CNT_CREDIT_STALLS]	= TBRDMA_STAT_CREDIT_STALLS,
	[TBR_CNT_RX_ERRORS]	= TBRDMA_STAT_RX_ERRORS,
	[TBR_CNT_MGMT_TX]	= TBRDMA_STAT_MGMT_TX,
	[TBR_CNT_MGMT_RX]	= TBRDMA_STAT_MGMT_RX,
	[TBR_CNT_FRAG_TX]	= TBRDMA_STAT_FRAG_TX,
	[TBR_CNT_FRAG_RX]	= TBRDMA_STAT_FRAG_RX,
	[TBR_CNT_FRAG_DROPS]	= TBRDMA_STAT_FRAG_DROPS,
	[TBR_CNT_FWD]		= TBRDMA_STAT_FWD,
	[TBR_CNT_ROUTED_RX]	= TBRDMA_STAT_ROUTED_RX,
	[TBR_CNT_FWD_DROP_HOPS]	= TBRDMA_STAT_FWD_DROP_HOPS,
	[TBR_CNT_FWD_DROP_NOROUTE] = TBRDMA_STAT_FWD_DROP_NOROUTE,
	[TBR_CNT_FWD_DROP_LOOP]	= TBRDMA_STAT_FWD_DROP_LOOP,
	[TBR_CNT_FWD_DROP_FULL]	= TBRDMA_STAT_FWD_DROP_FULL,
	[TBR_CNT_BUNDLED]	= TBRDMA_STAT_BUNDLED,
	[TBR_CNT_TX_ZEROCOPY]	= TBRDMA_STAT_TX_ZEROCOPY,
	[TBR_CNT_HELD]		= TBRDMA_STAT_HELD,
	[TBR_CNT_HELD_DROPS]	= TBRDMA_STAT_HELD_DROPS,
	[TBR_CNT_FWD_DROP_RPF]	= TBRDMA_STAT_FWD_DROP_RPF,
	[TBR_CNT_PKEY_VIOLATIONS] = TBRDMA_STAT_PKEY_VIOLATIONS,
	[TBR_CNT_RATE_WAITS]	= TBRDMA_STAT_RATE_WAITS,
};

static int tbr_put_stats_as(struct sk_buff *msg, int attr, atomic64_t *cnt)
{
	struct nlattr *nest;
	int i;

	nest = nla_nest_start(msg, attr);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < TBR_CNT_MAX; i++)
		if (nla_put_u64_64bit(msg, tbr_stat_attr[i], atomic64_read(&cnt[i]),
				      TBRDMA_STAT_PAD))
			goto cancel;
	nla_nest_end(msg, nest);
	return 0;
cancel:
	nla_nest_cancel(msg, nest);
	return -EMSGSIZE;
}

static int tbr_put_stats(struct sk_buff *msg, atomic64_t *cnt)
{
	return tbr_put_stats_as(msg, TBRDMA_ATTR_STATS, cnt);
}

static int tbr_put_dev(struct sk_buff *msg, struct tbr_dev *tdev)
{
	u32 nlinks = 0, held = 0;
	struct tbr_link *link;

	list_for_each_entry(link, &tdev->rails.links, node) {	/* tbr_ctl_mutex */
		nlinks++;
		held += READ_ONCE(link->trust) != TBR_TRUST_USED;
	}
	if (nla_put_string(msg, TBRDMA_ATTR_DEV_NAME, tbr_dev_name(tdev)) ||
	    nla_put_u32(msg, TBRDMA_ATTR_DEV_INDEX, tdev->ibdev.index) ||
	    nla_put_string(msg, TBRDMA_ATTR_NETDEV_NAME, tdev->netdev->name) ||
	    nla_put_u32(msg, TBRDMA_ATTR_NETDEV_IFINDEX, tdev->netdev->ifindex) ||
	    nla_put_u64_64bit(msg, TBRDMA_ATTR_DEV_GUID, tbr_dev_guid(tdev),
			      TBRDMA_ATTR_PAD) ||
	    (tdev->rails.host && nla_put_flag(msg, TBRDMA_ATTR_HOST)) ||
	    nla_put_u32(msg, TBRDMA_ATTR_LINKS, nlinks) ||
	    nla_put_u32(msg, TBRDMA_ATTR_RAILS_UP, tdev->rails.rails_up) ||
	    nla_put_u32(msg, TBRDMA_ATTR_LINKS_HELD, held) ||
	    nla_put_u8(msg, TBRDMA_ATTR_AUTH_KEYED, tbr_link_auth_keyed(tdev)) ||
	    nla_put_u64_64bit(msg, TBRDMA_ATTR_AUTH_REFUSED,
			      tbr_link_auth_refused_count(tdev), TBRDMA_ATTR_PAD) ||
	    tbr_put_stats(msg, tdev->rails.cnt))	/* the device's totals */
		return -EMSGSIZE;
	/* frames the device sent to itself (loop.c); the link is the device's */
	if (tdev->rails.loop &&
	    tbr_put_stats_as(msg, TBRDMA_ATTR_LOOP_STATS, tdev->rails.loop->cnt))
		return -EMSGSIZE;
	return 0;
}

static int tbr_put_link(struct sk_buff *msg, struct tbr_link *link)
{
	if (nla_put_string(msg, TBRDMA_ATTR_DEV_NAME, tbr_dev_name(link->tdev)) ||
	    nla_put_u32(msg, TBRDMA_ATTR_LINK_ID, link->id) ||
	    nla_put_u64_64bit(msg, TBRDMA_ATTR_PEER_GUID, link->peer_guid,
			      TBRDMA_ATTR_PAD) ||
	    nla_put_u8(msg, TBRDMA_ATTR_STATE, READ_ONCE(link->rails_up) ?
		       TBRDMA_STATE_UP : TBRDMA_STATE_DOWN) ||
	    nla_put_u32(msg, TBRDMA_ATTR_RAILS_UP, READ_ONCE(link->rails_up)) ||
	    nla_put_u32(msg, TBRDMA_ATTR_RAILS_TOTAL, READ_ONCE(link->nrails)) ||
	    nla_put_u8(msg, TBRDMA_ATTR_TRUST, READ_ONCE(link->trust)))
		return -EMSGSIZE;
	return 0;
}

static int tbr_put_rail(struct sk_buff *msg, struct tbr_rail *rail)
{
	struct tbr_link *link = rail->link;

	if (nla_put_string(msg, TBRDMA_ATTR_DEV_NAME, tbr_dev_name(link->tdev)) ||
	    nla_put_u32(msg, TBRDMA_ATTR_LINK_ID, link->id) ||
	    nla_put_u32(msg, TBRDMA_ATTR_RAIL_ID, rail->id) ||
	    nla_put_u64_64bit(msg, TBRDMA_ATTR_PEER_GUID, link->peer_guid,
			      TBRDMA_ATTR_PAD) ||
	    nla_put_string(msg, TBRDMA_ATTR_BACKEND, rail->backend->kind) ||
	    nla_put_u8(msg, TBRDMA_ATTR_STATE, READ_ONCE(rail->up) ?
		       TBRDMA_STATE_UP : TBRDMA_STATE_DOWN))
		return -EMSGSIZE;
	return 0;
}

void *tbr_nl_msg_put(struct sk_buff *msg, u32 portid, u32 seq, int flags, u8 cmd)
{
	return genlmsg_put(msg, portid, seq, &tbr_genl, flags, cmd);
}

void *tbr_nl_reply_put(struct sk_buff *msg, struct genl_info *info, u8 cmd)
{
	return genlmsg_put_reply(msg, info, &tbr_genl, 0, cmd);
}

/* ---- events (the link layer's observer) ------------------------------------ */

static struct sk_buff *tbr_nl_event_new(u8 cmd, void **hdr, size_t size, gfp_t gfp)
{
	struct sk_buff *msg = genlmsg_new(size, gfp);

	if (!msg)
		return NULL;
	*hdr = tbr_nl_msg_put(msg, 0, 0, 0, cmd);
	if (!*hdr) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/*
 * @msg (consumed) to group mgmt of every network namespace whose owner is
 * the initial user namespace: only there does the group's
 * GENL_MCAST_CAP_NET_ADMIN mean CAP_NET_ADMIN of the host (see the top).
 * genlmsg_multicast_allns() without the namespaces of other user
 * namespaces. Context: any (GFP_ATOMIC); takes rcu_read_lock.
 */
static void tbr_nl_mcast_mgmt(struct sk_buff *msg)
{
	struct net *net, *prev = NULL;
	struct sk_buff *tmp;

	rcu_read_lock();
	for_each_net_rcu(net) {
		if (net->user_ns != &init_user_ns)
			continue;
		if (prev) {
			tmp = skb_clone(msg, GFP_ATOMIC);
			if (!tmp)
				break;
			genlmsg_multicast_netns(&tbr_genl, prev, tmp, 0,
						TBR_MCGRP_MGMT, GFP_ATOMIC);
		}
		prev = net;
	}
	if (prev)	/* init_net is always one */
		genlmsg_multicast_netns(&tbr_genl, prev, msg, 0, TBR_MCGRP_MGMT,
					GFP_ATOMIC);
	else
		nlmsg_free(msg);
	rcu_read_unlock();
}

/* @err: what filling @msg returned; @event 0: none (a datagram) */
static void tbr_nl_event_send(struct sk_buff *msg, void *hdr, int err, u8 event,
			      unsigned int group)
{
	if (err || (event && nla_put_u8(msg, TBRDMA_ATTR_EVENT, event))) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	if (group == TBR_MCGRP_MGMT)
		tbr_nl_mcast_mgmt(msg);
	else
		genlmsg_multicast_allns(&tbr_genl, msg, 0, group);
}

/* One event: DEV_EVENT (@tdev), LINK_EVENT (@link) or RAIL_EVENT (@rail). */
static void tbr_nl_obj_event(u8 cmd, enum tbr_obs_event ev, struct tbr_dev *tdev,
			     struct tbr_link *link, struct tbr_rail *rail)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = tbr_nl_event_new(cmd, &hdr, NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	err = rail ? tbr_put_rail(msg, rail) : link ? tbr_put_link(msg, link) :
	      tbr_put_dev(msg, tdev);
	tbr_nl_event_send(msg, hdr, err, ev, TBR_MCGRP_EVENTS);
}

static void tbr_nl_dev_event(struct tbr_dev *tdev, enum tbr_obs_event ev)
{
	tbr_nl_obj_event(TBRDMA_CMD_DEV_EVENT, ev, tdev, NULL, NULL);
}

static void tbr_nl_link_event(struct tbr_link *link, enum tbr_obs_event ev)
{
	tbr_nl_obj_event(TBRDMA_CMD_LINK_EVENT, ev, NULL, link, NULL);
}

static void tbr_nl_rail_event(struct tbr_rail *rail, enum tbr_obs_event ev)
{
	tbr_nl_obj_event(TBRDMA_CMD_RAIL_EVENT, ev, NULL, NULL, rail);
}

/* Context "bh": a MGMT frame's RX completion. */
static void tbr_nl_mgmt_recv(struct tbr_rail *rail, u64 src, u8 pdf, const void *data,
			     u32 len)
{
	struct tbr_link *link = rail->link;
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (pdf != TBR_PDF_MGMT)
		return;
	msg = tbr_nl_event_new(TBRDMA_CMD_MGMT_RECV, &hdr, len + 256, GFP_ATOMIC);
	if (!msg)
		return;
	err = nla_put_string(msg, TBRDMA_ATTR_DEV_NAME, tbr_dev_name(link->tdev)) ||
	      nla_put_u32(msg, TBRDMA_ATTR_LINK_ID, link->id) ||
	      nla_put_u32(msg, TBRDMA_ATTR_RAIL_ID, rail->id) ||
	      nla_put_u64_64bit(msg, TBRDMA_ATTR_PEER_GUID, link->peer_guid,
				TBRDMA_ATTR_PAD) ||
	      nla_put(msg, TBRDMA_ATTR_MGMT_DATA, len, data);
	tbr_nl_event_send(msg, hdr, err, 0, TBR_MCGRP_MGMT);
}

static struct tbr_link_observer tbr_nl_observer = {
	.dev_event = tbr_nl_dev_event,
	.link_event = tbr_nl_link_event,
	.rail_event = tbr_nl_rail_event,
	.rx = tbr_nl_mgmt_recv,
};

/* ---- helpers for commands ------------------------------------------------- */

struct tbr_dev *tbr_nl_dev(struct genl_info *info, int attr)
{
	struct tbr_dev *tdev;

	if (GENL_REQ_ATTR_CHECK(info, attr))
		return ERR_PTR(-EINVAL);
	tdev = tbr_ctl_dev_find(nla_data(info->attrs[attr]));
	if (!tdev) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[attr],
				    "no such tbrdma device");
		return ERR_PTR(-ENODEV);
	}
	return tdev;
}

static struct tbr_link *tbr_nl_link(struct genl_info *info, struct tbr_dev *tdev)
{
	struct tbr_link *link = NULL;

	if (info->attrs[TBRDMA_ATTR_LINK_ID])
		link = tbr_link_get_by_id(tdev,
				nla_get_u32(info->attrs[TBRDMA_ATTR_LINK_ID]));
	else if (info->attrs[TBRDMA_ATTR_PEER_GUID])
		link = tbr_link_get_by_guid(tdev,
				nla_get_u64(info->attrs[TBRDMA_ATTR_PEER_GUID]));
	else {
		GENL_SET_ERR_MSG(info, "missing TBRDMA_ATTR_LINK_ID or TBRDMA_ATTR_PEER_GUID");
		return ERR_PTR(-EINVAL);
	}
	if (!link) {
		GENL_SET_ERR_MSG(info, "no such link on this device");
		return ERR_PTR(-ENOENT);
	}
	return link;
}

/* ---- commands ------------------------------------------------------------- */

static int tbr_nl_dev_reply(struct genl_info *info, struct tbr_dev *tdev, u8 cmd)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = tbr_nl_reply_put(msg, info, cmd);
	if (!hdr || tbr_put_dev(msg, tdev)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int tbr_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct tbr_dev *tdev;
	int err;

	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_nl_dev(info, TBRDMA_ATTR_DEV_NAME);
	err = IS_ERR(tdev) ? PTR_ERR(tdev) :
	      tbr_nl_dev_reply(info, tdev, TBRDMA_CMD_DEV_GET);
	mutex_unlock(&tbr_ctl_mutex);
	return err;
}

static int tbr_nl_dev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned long skip = cb->args[0], i = 0;
	struct tbr_dev *tdev;
	void *hdr;

	mutex_lock(&tbr_ctl_mutex);
	list_for_each_entry(tdev, &tbr_devices, rails.node) {
		if (i++ < skip)
			continue;
		hdr = tbr_nl_msg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, NLM_F_MULTI, TBRDMA_CMD_DEV_GET);
		if (!hdr)
			goto full;
		if (tbr_put_dev(skb, tdev)) {
			genlmsg_cancel(skb, hdr);
			goto full;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = i;
	}
	mutex_unlock(&tbr_ctl_mutex);
	return 0;	/* complete, see "Dumps" above */
full:
	mutex_unlock(&tbr_ctl_mutex);
	return skb->len;
}

static int tbr_nl_dev_new(struct sk_buff *skb, struct genl_info *info)
{
	struct tbr_dev *tdev;
	int err;

	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_ctl_dev_new(false, NULL);
	if (IS_ERR(tdev)) {
		GENL_SET_ERR_MSG(info, "creating the device failed");
		err = PTR_ERR(tdev);
	} else {
		err = tbr_nl_dev_reply(info, tdev, TBRDMA_CMD_DEV_NEW);
		err = 0;	/* the device exists even if the reply was lost */
	}
	mutex_unlock(&tbr_ctl_mutex);
	return err;
}

static int tbr_nl_dev_del(struct sk_buff *skb, struct genl_info *info)
{
	struct tbr_dev *tdev;
	int err;

	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_nl_dev(info, TBRDMA_ATTR_DEV_NAME);
	if (IS_ERR(tdev)) {
		err = PTR_ERR(tdev);
	} else if (tdev->rails.host) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[TBRDMA_ATTR_DEV_NAME],
				    "the host device lives as long as the module");
		err = -EBUSY;
	} else {
		err = tbr_ctl_dev_del(tdev);
	}
	mutex_unlock(&tbr_ctl_mutex);
	return err;
}

/*
 * Link and rail dumps walk devices, links and rails in list order; the
 * cursor is (device ordinal, link ordinal, rail slot) in cb->args[0..2].
 */
static int tbr_nl_link_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned long di = 0, li;
	struct tbr_link *link;
	struct tbr_dev *tdev;
	void *hdr;

	mutex_lock(&tbr_ctl_mutex);
	list_for_each_entry(tdev, &tbr_devices, rails.node) {
		if (di++ < cb->args[0])
			continue;
		li = 0;
		list_for_each_entry(link, &tdev->rails.links, node) {
			if (li++ < cb->args[1])
				continue;
			hdr = tbr_nl_msg_put(skb, NETLINK_CB(cb->skb).portid,
					  cb->nlh->nlmsg_seq, NLM_F_MULTI,
					  TBRDMA_CMD_LINK_GET);
			if (!hdr)
				goto full;
			if (tbr_put_link(skb, link) ||
			    nla_put_u32(skb, TBRDMA_ATTR_TX_CREDITS,
					tbr_link_tx_credits(link)) ||
			    nla_put_u32(skb, TBRDMA_ATTR_MAX_FRAME,
					tbr_link_max_frame(link)) ||
			    tbr_put_stats(skb, link->cnt)) {
				genlmsg_cancel(skb, hdr);
				goto full;
			}
			genlmsg_end(skb, hdr);
			cb->args[1] = li;
		}
		cb->args[0] = di;
		cb->args[1] = 0;
	}
	mutex_unlock(&tbr_ctl_mutex);
	return 0;
full:
	mutex_unlock(&tbr_ctl_mutex);
	return skb->len;
}

static int tbr_put_rail_full(struct sk_buff *skb, struct tbr_rail *rail)
{
	unsigned int credits = READ_ONCE(rail->tx_free);
	const struct tbr_backend_ctl *ctl;
	struct tbr_ring_occ tx, rx;
	u32 drain;

	if (tbr_put_rail(skb, rail) ||
	    nla_put_u32(skb, TBRDMA_ATTR_TX_DEPTH, rail->tx_depth) ||
	    nla_put_u32(skb, TBRDMA_ATTR_RX_DEPTH, rail->rx_depth) ||
	    nla_put_u32(skb, TBRDMA_ATTR_TX_CREDITS, rail->up ? credits : 0) ||
	    nla_put_u32(skb, TBRDMA_ATTR_MAX_FRAME, READ_ONCE(rail->max_frame)))
		return -EMSGSIZE;
	/* ring occupancy since the rail came up; none while it is down */
	if (tbr_rail_ring_occ(rail, &tx, &rx) &&
	    (nla_put_u32(skb, TBRDMA_ATTR_RING_MS,
			 min_t(u64, div_u64(tx.elapsed_ns, NSEC_PER_MSEC), U32_MAX)) ||
	     nla_put_u32(skb, TBRDMA_ATTR_TX_FULL_PPM, tx.full_ppm) ||
	     nla_put_u32(skb, TBRDMA_ATTR_TX_EMPTY_PPM, tx.empty_ppm) ||
	     nla_put_u32(skb, TBRDMA_ATTR_TX_MEAN_PPM, tx.mean_ppm) ||
	     nla_put_u32(skb, TBRDMA_ATTR_RX_FULL_PPM, rx.full_ppm) ||
	     nla_put_u32(skb, TBRDMA_ATTR_RX_EMPTY_PPM, rx.empty_ppm) ||
	     nla_put_u32(skb, TBRDMA_ATTR_RX_MEAN_PPM, rx.mean_ppm)))
		return -EMSGSIZE;
	/* what its medium trained at, when the backend knows */
	if (rail->lanes &&
	    (nla_put_u32(skb, TBRDMA_ATTR_LANE_MBPS, rail->lane_mbps) ||
	     nla_put_u32(skb, TBRDMA_ATTR_LANES, rail->lanes)))
		return -EMSGSIZE;
	/* the drain rate striping goes by (link/stripe.c), once measured */
	drain = tbr_rail_drain_rate(rail);
	if (drain && nla_put_u32(skb, TBRDMA_ATTR_DRAIN_RATE, drain))
		return -EMSGSIZE;
	/* the backend's own: eth its netdev, emu its fault knobs and cut state */
	ctl = rail->backend->ctl;
	if (ctl && ctl->fill_rail && ctl->fill_rail(rail, skb))
		return -EMSGSIZE;
	return tbr_put_stats(skb, rail->cnt);
}

static int tbr_nl_rail_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned long di = 0, li;
	struct tbr_link *link;
	struct tbr_dev *tdev;
	struct tbr_rail *rail;
	unsigned int ri;
	void *hdr;

	mutex_lock(&tbr_ctl_mutex);
	list_for_each_entry(tdev, &tbr_devices, rails.node) {
		if (di++ < cb->args[0])
			continue;
		li = 0;
		list_for_each_entry(link, &tdev->rails.links, node) {
			if (li++ < cb->args[1])
				continue;
			for (ri = cb->args[2]; ri < TBR_LINK_MAX_RAILS; ri++) {
				rail = link->rails[ri];
				if (!rail)
					continue;
				hdr = tbr_nl_msg_put(skb, NETLINK_CB(cb->skb).portid,
						  cb->nlh->nlmsg_seq, NLM_F_MULTI,
						  TBRDMA_CMD_RAIL_GET);
				if (!hdr)
					goto full;
				if (tbr_put_rail_full(skb, rail)) {
					genlmsg_cancel(skb, hdr);
					goto full;
				}
				genlmsg_end(skb, hdr);
				cb->args[2] = ri + 1;
			}
			cb->args[1] = li;
			cb->args[2] = 0;
		}
		cb->args[0] = di;
		cb->args[1] = 0;
	}
	mutex_unlock(&tbr_ctl_mutex);
	return 0;
full:
	mutex_unlock(&tbr_ctl_mutex);
	return skb->len;
}

static int tbr_nl_rail_set(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct tbr_rail_fault fault = {};
	bool knobs = a[TBRDMA_ATTR_DROP_PPM] || a[TBRDMA_ATTR_DUP_PPM] ||
		     a[TBRDMA_ATTR_REORDER] || a[TBRDMA_ATTR_DELAY_US] ||
		     a[TBRDMA_ATTR_RATE_BPS] || a[TBRDMA_ATTR_RX_HOLD_US];
	struct tbr_rail *rail = NULL;
	struct tbr_link *link;
	struct tbr_dev *tdev;
	int err = 0;

	if (GENL_REQ_ATTR_CHECK(info, TBRDMA_ATTR_LINK_ID) ||
	    GENL_REQ_ATTR_CHECK(info, TBRDMA_ATTR_RAIL_ID))
		return -EINVAL;
	if (!knobs && !a[TBRDMA_ATTR_CUT]) {
		GENL_SET_ERR_MSG(info, "nothing to set");
		return -EINVAL;
	}
	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_nl_dev(info, TBRDMA_ATTR_DEV_NAME);
	if (IS_ERR(tdev)) {
		err = PTR_ERR(tdev);
		goto out;
	}
	link = tbr_nl_link(info, tdev);
	if (IS_ERR(link)) {
		err = PTR_ERR(link);
		goto out;
	}
	rail = link->rails[nla_get_u32(a[TBRDMA_ATTR_RAIL_ID])];
	tbr_link_put(link);	/* the mutex keeps link and rail alive */
	if (!rail) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[TBRDMA_ATTR_RAIL_ID], "no such rail");
		err = -ENOENT;
		goto out;
	}
	if ((knobs && !rail->ops->set_fault) || (a[TBRDMA_ATTR_CUT] && !rail->ops->set_cut)) {
		GENL_SET_ERR_MSG(info, "this rail's backend has no fault knobs");
		err = -EOPNOTSUPP;
		goto out;
	}
	if (knobs) {
		rail->ops->get_fault(rail, &fault);
		if (a[TBRDMA_ATTR_DROP_PPM])
			fault.drop_ppm = nla_get_u32(a[TBRDMA_ATTR_DROP_PPM]);
		if (a[TBRDMA_ATTR_DUP_PPM])
			fault.dup_ppm = nla_get_u32(a[TBRDMA_ATTR_DUP_PPM]);
		if (a[TBRDMA_ATTR_REORDER])
			fault.reorder = nla_get_u32(a[TBRDMA_ATTR_REORDER]);
		if (a[TBRDMA_ATTR_DELAY_US])
			fault.delay_us = nla_get_u32(a[TBRDMA_ATTR_DELAY_US]);
		if (a[TBRDMA_ATTR_RATE_BPS]) {
			fault.rate_bps = nla_get_u64(a[TBRDMA_ATTR_RATE_BPS]);
			if (fault.rate_bps && fault.rate_bps < 8 * TBR_FRAME_SIZE_MAX) {
				NL_SET_ERR_MSG_ATTR(info->extack, a[TBRDMA_ATTR_RATE_BPS],
						    "rate below one frame per second");
				err = -EINVAL;
				goto out;
			}
		}
		if (a[TBRDMA_ATTR_RX_HOLD_US])
			fault.rx_hold_us = nla_get_u32(a[TBRDMA_ATTR_RX_HOLD_US]);
		err = rail->ops->set_fault(rail, &fault, nla_get_flag(a[TBRDMA_ATTR_ONE_WAY]));
		if (err)
			goto out;
	}
	if (a[TBRDMA_ATTR_CUT])
		err = rail->ops->set_cut(rail, nla_get_u8(a[TBRDMA_ATTR_CUT]));
out:
	mutex_unlock(&tbr_ctl_mutex);
	return err;
}

static int tbr_nl_mgmt_send(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *data = info->attrs[TBRDMA_ATTR_MGMT_DATA];
	u8 pdf = TBR_PDF_MGMT;
	struct tbr_link *link;
	struct tbr_dev *tdev;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, TBRDMA_ATTR_MGMT_DATA))
		return -EINVAL;
	/* a routed frame as a neighbour would send it (no DATA, no IP) */
	if (info->attrs[TBRDMA_ATTR_PDF])
		pdf = nla_get_u8(info->attrs[TBRDMA_ATTR_PDF]);
	if (pdf != TBR_PDF_MGMT && pdf != TBR_PDF_ROUTED) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[TBRDMA_ATTR_PDF],
				    "only MGMT (2) or ROUTED (4)");
		return -EINVAL;
	}
	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_nl_dev(info, TBRDMA_ATTR_DEV_NAME);
	if (IS_ERR(tdev)) {
		err = PTR_ERR(tdev);
		goto out;
	}
	link = tbr_nl_link(info, tdev);
	if (IS_ERR(link)) {
		err = PTR_ERR(link);
		goto out;
	}
	err = tbr_link_xmit(link, pdf, nla_data(data), nla_len(data));
	tbr_link_put(link);
	if (err == -ENETDOWN)
		GENL_SET_ERR_MSG(info, "no rail of this link is up, or it is held");
	else if (err == -ENOBUFS)
		GENL_SET_ERR_MSG(info, "every TX ring of this link is full; retry");
out:
	mutex_unlock(&tbr_ctl_mutex);
	return err;
}

/* the device's capture monitor, made (or the one it has) down: its name */
static int tbr_nl_capture_new(struct sk_buff *skb, struct genl_info *info)
{
	struct net_device *ndev;
	struct tbr_dev *tdev;
	struct sk_buff *msg;
	u32 snaplen = 0;
	void *hdr;
	int err;

	if (info->attrs[TBRDMA_ATTR_SNAPLEN])
		snaplen = nla_get_u32(info->attrs[TBRDMA_ATTR_SNAPLEN]);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_nl_dev(info, TBRDMA_ATTR_DEV_NAME);
	ndev = IS_ERR(tdev) ? ERR_CAST(tdev) : tbr_cap_new(tdev, snaplen);
	if (IS_ERR(ndev)) {
		err = PTR_ERR(ndev);
		goto err;
	}
	hdr = genlmsg_put_reply(msg, info, &tbr_genl, 0, TBRDMA_CMD_CAPTURE_NEW);
	if (!hdr || nla_put_string(msg, TBRDMA_ATTR_NETDEV_NAME, ndev->name) ||
	    nla_put_u32(msg, TBRDMA_ATTR_NETDEV_IFINDEX, ndev->ifindex)) {
		err = -EMSGSIZE;
		goto err;
	}
	mutex_unlock(&tbr_ctl_mutex);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
err:
	mutex_unlock(&tbr_ctl_mutex);
	nlmsg_free(msg);
	return err;
}

static int tbr_nl_capture_del(struct sk_buff *skb, struct genl_info *info)
{
	struct tbr_dev *tdev;
	int err;

	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_nl_dev(info, TBRDMA_ATTR_DEV_NAME);
	err = IS_ERR(tdev) ? PTR_ERR(tdev) : tbr_cap_del(tdev);
	if (err == -ENOENT)
		GENL_SET_ERR_MSG(info, "the device has no capture monitor");
	mutex_unlock(&tbr_ctl_mutex);
	return err;
}

static const struct genl_small_ops tbr_genl_ops[] = {
	{
		.cmd = TBRDMA_CMD_DEV_GET,
		.doit = tbr_nl_dev_get_doit,
		.dumpit = tbr_nl_dev_get_dumpit,
	},
	{
		.cmd = TBRDMA_CMD_DEV_NEW,
		.doit = tbr_nl_dev_new,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TBRDMA_CMD_DEV_DEL,
		.doit = tbr_nl_dev_del,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TBRDMA_CMD_LINK_GET,
		.dumpit = tbr_nl_link_get_dumpit,
	},
	{
		.cmd = TBRDMA_CMD_RAIL_GET,
		.dumpit = tbr_nl_rail_get_dumpit,
	},
	{
		.cmd = TBRDMA_CMD_RAIL_SET,
		.doit = tbr_nl_rail_set,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TBRDMA_CMD_MGMT_SEND,
		.doit = tbr_nl_mgmt_send,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TBRDMA_CMD_CAPTURE_NEW,
		.doit = tbr_nl_capture_new,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TBRDMA_CMD_CAPTURE_DEL,
		.doit = tbr_nl_capture_del,
		.flags = GENL_ADMIN_PERM,
	},
};

const struct nla_policy *tbr_nl_policy(void)
{
	return tbr_policy;
}

static struct genl_family tbr_genl = {
	.name = TBRDMA_GENL_NAME,
	.version = TBRDMA_GENL_VERSION,
	.maxattr = TBRDMA_ATTR_MAX,
	.policy = tbr_policy,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.mcgrps = tbr_mcgrps,
	.n_mcgrps = ARRAY_SIZE(tbr_mcgrps),
};

/* the generic commands above, the caller's and every backend's own */
static struct genl_small_ops *tbr_genl_all_ops;

int tbr_nl_init(const struct genl_small_ops *more, unsigned int n_more)
{
	const struct tbr_backend *const *bk;
	unsigned int i, n, nbk;
	int err;

	nbk = tbr_ctl_backends(&bk);
	n = ARRAY_SIZE(tbr_genl_ops) + n_more;
	for (i = 0; i < nbk; i++)
		n += bk[i]->ctl ? bk[i]->ctl->n_nl_ops : 0;
	tbr_genl_all_ops = kcalloc(n, sizeof(*tbr_genl_all_ops), GFP_KERNEL);
	if (!tbr_genl_all_ops)
		return -ENOMEM;
	memcpy(tbr_genl_all_ops, tbr_genl_ops, sizeof(tbr_genl_ops));
	n = ARRAY_SIZE(tbr_genl_ops);
	memcpy(tbr_genl_all_ops + n, more, n_more * sizeof(*tbr_genl_all_ops));
	n += n_more;
	for (i = 0; i < nbk; i++) {
		if (!bk[i]->ctl)
			continue;
		memcpy(tbr_genl_all_ops + n, bk[i]->ctl->nl_ops,
		       bk[i]->ctl->n_nl_ops * sizeof(*tbr_genl_all_ops));
		n += bk[i]->ctl->n_nl_ops;
	}
	tbr_genl.small_ops = tbr_genl_all_ops;
	tbr_genl.n_small_ops = n;
	err = genl_register_family(&tbr_genl);
	if (err) {
		kfree(tbr_genl_all_ops);
		return err;
	}
	tbr_link_observer_add(&tbr_nl_observer);
	return 0;
}

/* After this no event is built; mgmt events in flight finish first. */
void tbr_nl_exit(void)
{
	tbr_link_observer_del(&tbr_nl_observer);
	genl_unregister_family(&tbr_genl);
	kfree(tbr_genl_all_ops);
}
