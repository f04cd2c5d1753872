// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the forwarding table's generic netlink commands (docs/netlink.md
 * "Routes"): ROUTE_SET replaces a device's table whole (tbrdmad pushes it
 * after every sweep that changed it), ROUTE_GET returns it; LINK_TRUST
 * carries the sweep's decision on a held link (docs/sweep.md "Trust"). The
 * table itself and the forwarding live in link/route.c. PKEY_SET/PKEY_GET:
 * the port's partitions, from the same sweep (docs/sweep.md "Partitions";
 * the table is the device's, verbs/device.c).
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <net/genetlink.h>

#include "tbrdma.h"
#include "ctl/ctl.h"
#include "core/tbr_route_wire.h"
#include "uapi/tbrdma-netlink.h"

static_assert(TBRDMA_PKEYS_MAX == TBR_PKEY_TBL_LEN);
static_assert(TBRDMA_ROUTES_MAX == TBR_ROUTE_TABLE_MAX &&
	      TBRDMA_ROUTE_HOPS_MAX == TBR_ROUTE_HOPS_MAX);
static_assert(TBR_TRUST_USED == (int)TBRDMA_TRUST_USED &&
	      TBR_TRUST_HELD == (int)TBRDMA_TRUST_HELD &&
	      TBR_TRUST_REJECTED == (int)TBRDMA_TRUST_REJECTED);

/*
 * The entries of ROUTES into @e (room for TBRDMA_ROUTES_MAX); count or
 * -errno. No ROUTES: an empty table (libnl drops an empty nest).
 */
static int tbr_nl_route_parse(struct genl_info *info, struct tbr_route_entry *e)
{
	struct nlattr *tb[TBRDMA_ATTR_MAX + 1], *r;
	int rem, n = 0, err;

	if (!info->attrs[TBRDMA_ATTR_ROUTES])
		return 0;
	nla_for_each_nested(r, info->attrs[TBRDMA_ATTR_ROUTES], rem) {
		if (nla_type(r) != TBRDMA_ATTR_ROUTE) {
			NL_SET_ERR_MSG_ATTR(info->extack, r, "ROUTES holds ROUTE only");
			return -EINVAL;
		}
		if (n == TBRDMA_ROUTES_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack, r, "too many routes");
			return -E2BIG;
		}
		err = nla_parse_nested(tb, TBRDMA_ATTR_MAX, r, tbr_nl_policy(),
				       info->extack);
		if (err)
			return err;
		if (!tb[TBRDMA_ATTR_ROUTE_DST] || !tb[TBRDMA_ATTR_ROUTE_NEXT_HOP] ||
		    !tb[TBRDMA_ATTR_ROUTE_HOPS]) {
			NL_SET_ERR_MSG_ATTR(info->extack, r,
					    "a ROUTE needs ROUTE_DST, ROUTE_NEXT_HOP and ROUTE_HOPS");
			return -EINVAL;
		}
		e[n].dst = nla_get_u64(tb[TBRDMA_ATTR_ROUTE_DST]);
		e[n].next_hop = nla_get_u64(tb[TBRDMA_ATTR_ROUTE_NEXT_HOP]);
		e[n].hops = nla_get_u32(tb[TBRDMA_ATTR_ROUTE_HOPS]);
		n++;
	}
	return n;
}

static int tbr_nl_route_set(struct sk_buff *skb, struct genl_info *info)
{
	struct tbr_route_entry *e;
	struct tbr_dev *tdev;
	u32 version;
	int n, err;

	if (GENL_REQ_ATTR_CHECK(info, TBRDMA_ATTR_ROUTE_VERSION))
		return -EINVAL;
	version = nla_get_u32(info->attrs[TBRDMA_ATTR_ROUTE_VERSION]);
	e = kvcalloc(TBRDMA_ROUTES_MAX, sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	n = tbr_nl_route_parse(info, e);
	if (n < 0) {
		err = n;
		goto out_free;
	}
	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_nl_dev(info, TBRDMA_ATTR_DEV_NAME);
	if (IS_ERR(tdev)) {
		err = PTR_ERR(tdev);
		goto out_unlock;
	}
	err = tbr_route_set(tdev, e, n, version);
	if (err == -EINVAL)
		GENL_SET_ERR_MSG(info, "invalid table: version 0, destinations not ascending, ourselves, or hops and next hop disagree");
out_unlock:
	mutex_unlock(&tbr_ctl_mutex);
out_free:
	kvfree(e);
	return err;
}

struct tbr_nl_route_fill {
	struct sk_buff *msg;
	struct nlattr *routes;
	struct tbr_dev *tdev;
};

static int tbr_nl_route_put(void *arg, u32 version, u32 n,
			    const struct tbr_route_entry *e)
{
	struct tbr_nl_route_fill *fill = arg;
	struct sk_buff *msg = fill->msg;
	struct nlattr *nest;
	struct tbr_link *link;
	int err;

	if (!e) {
		if (nla_put_u32(msg, TBRDMA_ATTR_ROUTE_VERSION, version))
			return -EMSGSIZE;
		fill->routes = nla_nest_start(msg, TBRDMA_ATTR_ROUTES);
		return fill->routes ? 0 : -EMSGSIZE;
	}
	nest = nla_nest_start(msg, TBRDMA_ATTR_ROUTE);
	if (!nest)
		return -EMSGSIZE;
	err = nla_put_u64_64bit(msg, TBRDMA_ATTR_ROUTE_DST, e->dst, TBRDMA_ATTR_PAD) ||
	      nla_put_u64_64bit(msg, TBRDMA_ATTR_ROUTE_NEXT_HOP, e->next_hop,
				TBRDMA_ATTR_PAD) ||
	      nla_put_u32(msg, TBRDMA_ATTR_ROUTE_HOPS, e->hops);
	/* the next hop's link, when there is one */
	link = err ? NULL : tbr_link_get_by_guid(fill->tdev, e->next_hop);
	if (link) {
		err = nla_put_u32(msg, TBRDMA_ATTR_LINK_ID, link->id);
		tbr_link_put(link);
	}
	if (err)
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int tbr_nl_route_get(struct sk_buff *skb, struct genl_info *info)
{
	struct tbr_nl_route_fill fill = {};
	struct tbr_dev *tdev;
	void *hdr;
	int err;

	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_nl_dev(info, TBRDMA_ATTR_DEV_NAME);
	if (IS_ERR(tdev)) {
		err = PTR_ERR(tdev);
		goto out;
	}
	fill.tdev = tdev;
	fill.msg = genlmsg_new(TBRDMA_ROUTES_MAX * 64 + 256, GFP_KERNEL);
	if (!fill.msg) {
		err = -ENOMEM;
		goto out;
	}
	hdr = tbr_nl_reply_put(fill.msg, info, TBRDMA_CMD_ROUTE_GET);
	err = hdr ? 0 : -EMSGSIZE;
	if (!err)
		err = nla_put_string(fill.msg, TBRDMA_ATTR_DEV_NAME, tbr_dev_name(tdev)) ?
		      -EMSGSIZE : tbr_route_walk(tdev, tbr_nl_route_put, &fill);
	if (err) {
		nlmsg_free(fill.msg);
		goto out;
	}
	nla_nest_end(fill.msg, fill.routes);
	genlmsg_end(fill.msg, hdr);
	err = genlmsg_reply(fill.msg, info);
out:
	mutex_unlock(&tbr_ctl_mutex);
	return err;
}

/*
 * LINK_TRUST: tbrdmad's decision on a rail link (docs/sweep.md "Trust"):
 * USED releases a held link, REJECTED refuses it, HELD holds it again.
 * Context "process"; takes tbr_ctl_mutex.
 */
static int tbr_nl_link_trust(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct tbr_link *link = NULL;
	struct tbr_dev *tdev;
	int err = 0;

	if (GENL_REQ_ATTR_CHECK(info, TBRDMA_ATTR_TRUST))
		return -EINVAL;
	if (!a[TBRDMA_ATTR_LINK_ID] && !a[TBRDMA_ATTR_PEER_GUID]) {
		GENL_SET_ERR_MSG(info, "missing TBRDMA_ATTR_LINK_ID or TBRDMA_ATTR_PEER_GUID");
		return -EINVAL;
	}
	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_nl_dev(info, TBRDMA_ATTR_DEV_NAME);
	if (IS_ERR(tdev)) {
		err = PTR_ERR(tdev);
		goto out;
	}
	link = a[TBRDMA_ATTR_LINK_ID] ?
	       tbr_link_get_by_id(tdev, nla_get_u32(a[TBRDMA_ATTR_LINK_ID])) :
	       tbr_link_get_by_guid(tdev, nla_get_u64(a[TBRDMA_ATTR_PEER_GUID]));
	if (!link) {
		GENL_SET_ERR_MSG(info, "no such link on this device");
		err = -ENOENT;
		goto out;
	}
	tbr_link_set_trust(link, nla_get_u8(a[TBRDMA_ATTR_TRUST]));
	tbr_link_put(link);
out:
	mutex_unlock(&tbr_ctl_mutex);
	return err;
}

/*
 * PKEY_SET: the P_Keys of the device's partitions, a set (PKEYS, absent or
 * empty: none, the port talks to nobody). Context "process"; takes
 * tbr_ctl_mutex.
 */
static int tbr_nl_pkey_set(struct sk_buff *skb, struct genl_info *info)
{
	u16 keys[TBRDMA_PKEYS_MAX];
	struct tbr_dev *tdev;
	struct nlattr *k;
	int rem, n = 0, err;

	if (info->attrs[TBRDMA_ATTR_PKEYS]) {
		nla_for_each_nested(k, info->attrs[TBRDMA_ATTR_PKEYS], rem) {
			if (nla_type(k) != TBRDMA_ATTR_PKEY ||
			    nla_len(k) != sizeof(u16)) {
				NL_SET_ERR_MSG_ATTR(info->extack, k,
						    "PKEYS holds u16 PKEY only");
				return -EINVAL;
			}
			if (n == TBRDMA_PKEYS_MAX) {
				NL_SET_ERR_MSG_ATTR(info->extack, k,
						    "more partitions than P_Key slots");
				return -ENOSPC;
			}
			keys[n++] = nla_get_u16(k);
		}
	}
	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_nl_dev(info, TBRDMA_ATTR_DEV_NAME);
	err = IS_ERR(tdev) ? PTR_ERR(tdev) : tbr_dev_set_pkeys(tdev, keys, n);
	if (err == -EINVAL)
		GENL_SET_ERR_MSG(info, "invalid set: partition 0, or one partition twice");
	mutex_unlock(&tbr_ctl_mutex);
	return err;
}

/* PKEY_GET: the table, slot by slot (0: empty). Takes tbr_ctl_mutex. */
static int tbr_nl_pkey_get(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg = NULL;
	struct tbr_dev *tdev;
	struct nlattr *nest;
	void *hdr;
	int err, i;

	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_nl_dev(info, TBRDMA_ATTR_DEV_NAME);
	if (IS_ERR(tdev)) {
		err = PTR_ERR(tdev);
		goto out;
	}
	err = -ENOMEM;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		goto out;
	err = -EMSGSIZE;
	hdr = tbr_nl_reply_put(msg, info, TBRDMA_CMD_PKEY_GET);
	if (!hdr || nla_put_string(msg, TBRDMA_ATTR_DEV_NAME, tbr_dev_name(tdev)))
		goto out;
	nest = nla_nest_start(msg, TBRDMA_ATTR_PKEYS);
	if (!nest)
		goto out;
	for (i = 0; i < TBRDMA_PKEYS_MAX; i++)
		if (nla_put_u16(msg, TBRDMA_ATTR_PKEY,
				tbr_pkey_get(&tdev->pkeys, i)))
			goto out;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	err = genlmsg_reply(msg, info);
	msg = NULL;
out:
	mutex_unlock(&tbr_ctl_mutex);
	nlmsg_free(msg);
	return err;
}

/*
 * AUTH_KEY_SET: the device's fabric key (docs/protocol.md "Authenticated
 * links"), from tbrdmad's FabricKeyFile: AUTH_KEY becomes the current key
 * and the current one is accepted AUTH_GRACE_MS more (a rotation, no link
 * goes down); without AUTH_KEY, no key. Admin only; the key is never read
 * back. Context "process"; takes tbr_ctl_mutex.
 */
static int tbr_nl_auth_key_set(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *k = info->attrs[TBRDMA_ATTR_AUTH_KEY];
	u32 grace = 60000;
	struct tbr_dev *tdev;
	int err;

	if (info->attrs[TBRDMA_ATTR_AUTH_GRACE_MS])
		grace = nla_get_u32(info->attrs[TBRDMA_ATTR_AUTH_GRACE_MS]);
	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_nl_dev(info, TBRDMA_ATTR_DEV_NAME);
	err = IS_ERR(tdev) ? PTR_ERR(tdev) :
	      tbr_link_auth_set(tdev, k ? nla_data(k) : NULL, k ? nla_len(k) : 0,
				grace);
	if (!err)
		tbr_ctl_key_set(tdev);	/* links up before the key: checked */
	mutex_unlock(&tbr_ctl_mutex);
	if (err && !IS_ERR(tdev))
		GENL_SET_ERR_MSG(info, "cannot key hmac(sha256)");
	return err;
}

const struct genl_small_ops tbr_route_nl_ops[] = {
	{
		.cmd = TBRDMA_CMD_ROUTE_SET,
		.doit = tbr_nl_route_set,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TBRDMA_CMD_ROUTE_GET,
		.doit = tbr_nl_route_get,
	},
	{
		.cmd = TBRDMA_CMD_LINK_TRUST,
		.doit = tbr_nl_link_trust,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TBRDMA_CMD_PKEY_SET,
		.doit = tbr_nl_pkey_set,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TBRDMA_CMD_PKEY_GET,
		.doit = tbr_nl_pkey_get,
	},
	{
		.cmd = TBRDMA_CMD_AUTH_KEY_SET,
		.doit = tbr_nl_auth_key_set,
		.flags = GENL_ADMIN_PERM,
	},
};
const unsigned int tbr_route_nl_n_ops = ARRAY_SIZE(tbr_route_nl_ops);
