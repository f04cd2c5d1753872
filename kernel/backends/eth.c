// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the eth rail backend. Rails over any Ethernet netdev (virtio NICs
 * between two VMs, veth pairs, thunderbolt-net, a direct cable): every rail
 * frame is one Ethernet frame with tbrdma's own ethertype (TBR_ETH_P,
 * 0x88B5, IEEE 802 "local experimental ethertype 1"). The wire format and
 * the handshake are in docs/eth.md.
 *
 * A *binding* ties one netdev to one tbrdma device (ETH_BIND). On it, each
 * side broadcasts a HELLO every tbe_hello_ms (and at once on any change)
 * carrying its device GUID, a random session number, the largest frame its
 * MTU lets it receive, and its period; to every peer it hears it also sends
 * a unicast HELLO saying "I hear you (session S)". A *peer* is a GUID heard
 * on the binding's netdev; its rail (in the link of that GUID, so every
 * netdev reaching the same peer adds a rail to the same link) goes up when
 * both directions work: we hear the peer and the peer says it hears us. It
 * goes down when the peer is not heard for 3.5 periods (its own period), when
 * the peer stops hearing us, when the peer's session changes (it restarted),
 * when the negotiated frame size changes, or when the netdev goes down,
 * loses carrier or unregisters (hot-unplug): the rings stop, every posted
 * frame completes canceled, tbr_rail_down() — the path emu's cut takes, so
 * the transport resends what the lost rail had in flight on the others.
 *
 * Frame size: min(4096, MTU - 24) on each side, the smaller of the two is
 * used both ways (tbr_rail_set_max_frame(); tbr_link_max_frame() gives the
 * transport the link's minimum, so new connections size their frames to
 * it). A peer whose hellos say it reassembles (and tbe_fragment) gets the
 * frames above that size in pieces (eth_frag.c), so the rail keeps taking
 * frames up to 4096 bytes: an MTU shrink then only changes the negotiated
 * size, live, and the connections made before it keep their frame size.
 * Without fragmentation a size change cycles the rail (as a restart).
 *
 * Rings: TX frames queue on the rail and a work item turns them into skbs
 * (dev_queue_xmit); a frame completes when its skb is handed to the driver.
 * The TX depth is the rail's credit budget. RX: the packet_type handler
 * (softirq) copies the frame into the first posted RX buffer and runs its
 * callback; no buffer posted: dropped and counted (rx_nobuf).
 *
 * Contexts and locks: tbr_ctl_mutex (process) covers binding and rail
 * state changes; the netdevice notifier runs under RTNL and therefore never
 * takes it (the control plane takes RTNL inside tbr_ctl_mutex): it marks
 * the binding and queues work. The binding's work (hellos, peer state) only
 * trylocks tbr_ctl_mutex and retries, so unbind may cancel it synchronously
 * while holding the mutex. bind->lock (irqsave) protects the peers' hello
 * state; peer->lock (irqsave, nests inside link->lock) protects the rings.
 * Peers are added under RCU (the RX handler looks them up) and freed under
 * tbr_ctl_mutex: dead ones after a grace period (tbe_bind_expire), the rest
 * with their binding, after the packet handler is removed.
 */
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_arp.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/pkt_sched.h>
#include <linux/random.h>
#include <linux/rculist.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/netlink.h>
#include <rdma/rdma_netlink.h>

#include "tbrdma.h"
#include "ctl/ctl.h"
#include "core/tbr_eth_wire.h"
#include "backends/eth.h"
#include "backends/backends.h"
#include "uapi/tbrdma-netlink.h"

static LIST_HEAD(tbe_binds);
static DEFINE_SPINLOCK(tbe_lock);	/* tbe_binds for the notifier */
static void tbe_gc(struct work_struct *work);
static DECLARE_WORK(tbe_gc_work, tbe_gc);

/* ---- bindings ------------------------------------------------------------ */

/* tbr_ctl_mutex held; @bind is on no list any more. */
static void tbe_bind_free(struct tbe_bind *bind)
{
	struct tbe_peer *peer, *tmp;

	WRITE_ONCE(bind->gone, true);
	dev_remove_pack(&bind->pt);	/* waits for running handlers */
	cancel_delayed_work_sync(&bind->work);
	list_for_each_entry(peer, &bind->peers, node)
		if (peer->running)
			tbe_peer_stop(peer);
	list_for_each_entry_safe(peer, tmp, &bind->peers, node) {
		list_del(&peer->node);
		if (peer->rail)
			tbr_rail_remove(peer->rail);
		tbe_peer_put(peer);
	}
	netdev_put(bind->dev, &bind->tracker);
	kfree(bind);
}

static void tbe_unlist(struct tbe_bind *bind)
{
	spin_lock_bh(&tbe_lock);
	list_del(&bind->node);
	spin_unlock_bh(&tbe_lock);
}

static bool tbe_is_tbr_netdev(struct net_device *dev)
{
	struct tbr_dev *tdev;

	list_for_each_entry(tdev, &tbr_devices, rails.node)
		if (tdev->netdev == dev)
			return true;
	return false;
}

/* RTNL held: the netdev's link speed in Mb/s (ethtool ksettings), 0 unknown. */
static u32 tbe_dev_speed(struct net_device *dev)
{
	struct ethtool_link_ksettings ks;

	ASSERT_RTNL();
	if (__ethtool_get_link_ksettings(dev, &ks) || ks.base.speed == SPEED_UNKNOWN)
		return 0;
	return ks.base.speed;
}

/* Bind @ndev, or the netdev named @ifname in @net, to @tdev. tbr_ctl_mutex held. */
static int tbe_bind_new(struct tbr_dev *tdev, struct net_device *ndev, struct net *net,
			const char *ifname, struct netlink_ext_ack *extack)
{
	struct tbe_bind *bind, *b;
	struct net_device *dev;
	int err = 0;

	lockdep_assert_held(&tbr_ctl_mutex);
	if (tdev->rails.dying)
		return -ENODEV;
	bind = kzalloc(sizeof(*bind), GFP_KERNEL);
	if (!bind)
		return -ENOMEM;
	rtnl_lock();
	dev = ndev ?: __dev_get_by_name(net, ifname);
	if (!dev || dev->reg_state != NETREG_REGISTERED) {
		NL_SET_ERR_MSG(extack, "no such netdev in this network namespace");
		err = -ENODEV;
	} else if (dev->type != ARPHRD_ETHER || (dev->flags & IFF_LOOPBACK) ||
		   dev->addr_len != ETH_ALEN) {
		NL_SET_ERR_MSG(extack, "not an Ethernet netdev");
		err = -EINVAL;
	} else if (tbe_is_tbr_netdev(dev)) {
		NL_SET_ERR_MSG(extack, "a tbrdma netdev cannot carry rails");
		err = -EINVAL;
	} else if (tbe_dev_max_frame(dev) < TBE_FRAME_MIN) {
		NL_SET_ERR_MSG(extack, "netdev MTU too small for tbrdma frames (>= 280 needed)");
		err = -EINVAL;
	} else {
		list_for_each_entry(b, &tbe_binds, node) {
			if (b->dev == dev) {
				NL_SET_ERR_MSG(extack, "netdev already bound to a tbrdma device");
				err = -EBUSY;
				break;
			}
		}
	}
	if (err) {
		rtnl_unlock();
		kfree(bind);
		return err;
	}
	bind->tdev = tdev;
	bind->backend = &tbr_eth_backend;
	bind->guid = tbr_dev_guid(tdev);
	bind->dev = dev;
	netdev_hold(dev, &bind->tracker, GFP_KERNEL);
	do {
		bind->session = get_random_u32();
	} while (!bind->session);
	bind->max_frame = tbe_dev_max_frame(dev);
	bind->speed_mbps = tbe_dev_speed(dev);
	spin_lock_init(&bind->lock);
	INIT_LIST_HEAD(&bind->peers);
	INIT_DELAYED_WORK(&bind->work, tbe_bind_work);
	bind->pt.type = htons(TBR_ETH_P);
	bind->pt.dev = dev;
	bind->pt.func = tbe_rcv;
	/* listed under RTNL: the notifier sees it before any unregister */
	spin_lock_bh(&tbe_lock);
	list_add_tail(&bind->node, &tbe_binds);
	spin_unlock_bh(&tbe_lock);
	rtnl_unlock();
	dev_add_pack(&bind->pt);
	queue_delayed_work(tbe_wq, &bind->work, 0);	/* hello at once */
	return 0;
}

static int tbe_unbind(struct tbr_dev *tdev, struct net *net, const char *ifname,
		      struct netlink_ext_ack *extack)
{
	struct tbe_bind *bind;

	lockdep_assert_held(&tbr_ctl_mutex);
	list_for_each_entry(bind, &tbe_binds, node) {
		if (bind->tdev != tdev || strcmp(bind->dev->name, ifname) ||
		    !net_eq(dev_net(bind->dev), net))
			continue;
		tbe_unlist(bind);
		tbe_bind_free(bind);
		return 0;
	}
	NL_SET_ERR_MSG(extack, "this netdev is not bound to this device");
	return -ENOENT;
}

/* The device goes: its bindings go. tbr_ctl_mutex held. */
static void tbe_dev_gone(struct tbr_dev *tdev)
{
	struct tbe_bind *bind, *tmp;

	lockdep_assert_held(&tbr_ctl_mutex);
	list_for_each_entry_safe(bind, tmp, &tbe_binds, node) {
		if (bind->tdev != tdev)
			continue;
		tbe_unlist(bind);
		tbe_bind_free(bind);
	}
}

/* Unregistered netdevs: free their bindings (process, takes the mutex). */
static void tbe_gc(struct work_struct *work)
{
	struct tbe_bind *bind, *tmp;

	mutex_lock(&tbr_ctl_mutex);
	list_for_each_entry_safe(bind, tmp, &tbe_binds, node) {
		if (!READ_ONCE(bind->gone))
			continue;
		pr_info("tbrdma: %s: %s unregistered, its eth rails go\n",
			tbr_dev_name(bind->tdev), bind->dev->name);
		tbe_unlist(bind);
		tbe_bind_free(bind);
	}
	mutex_unlock(&tbr_ctl_mutex);
}

/* RTNL held: never take tbr_ctl_mutex here. */
static int tbe_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct tbe_bind *bind;

	switch (event) {
	case NETDEV_UP:
	case NETDEV_GOING_DOWN:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
	case NETDEV_UNREGISTER:
		break;
	default:
		return NOTIFY_DONE;
	}
	spin_lock_bh(&tbe_lock);
	list_for_each_entry(bind, &tbe_binds, node) {
		if (bind->dev != dev)
			continue;
		if (event == NETDEV_UNREGISTER) {
			WRITE_ONCE(bind->gone, true);
			queue_work(tbe_wq, &tbe_gc_work);
		} else {
			WRITE_ONCE(bind->speed_mbps, tbe_dev_speed(dev));
			mod_delayed_work(tbe_wq, &bind->work, 0);
		}
	}
	spin_unlock_bh(&tbe_lock);
	return NOTIFY_DONE;
}

static struct notifier_block tbe_notifier = {
	.notifier_call = tbe_netdev_event,
};

static int tbe_init(void)
{
	int err;

	/*
	 * Normal priority on purpose: a receiver on this machine (veth)
	 * drains its backlog in ksoftirqd under load, which a high-priority
	 * sender would starve.
	 */
	tbe_wq = alloc_workqueue("tbrdma_eth", 0, 0);
	if (!tbe_wq)
		return -ENOMEM;
	err = register_netdevice_notifier(&tbe_notifier);
	if (err)
		destroy_workqueue(tbe_wq);
	return err;
}

/* Every binding is gone (tbr_ctl_del_all). */
static void tbe_exit(void)
{
	unregister_netdevice_notifier(&tbe_notifier);
	cancel_work_sync(&tbe_gc_work);
	destroy_workqueue(tbe_wq);
	tbe_peers_wait();	/* skbs on the wire hold their peers */
}

/* ---- genl commands (docs/netlink.md) -------------------------------------- */

/* ETH_BIND and ETH_UNBIND */
static int tbe_nl_bind(struct sk_buff *skb, struct genl_info *info)
{
	struct tbr_dev *tdev;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, TBRDMA_ATTR_ETH_IFNAME))
		return -EINVAL;
	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_nl_dev(info, TBRDMA_ATTR_DEV_NAME);
	if (IS_ERR(tdev))
		err = PTR_ERR(tdev);
	else if (info->genlhdr->cmd == TBRDMA_CMD_ETH_BIND)
		err = tbe_bind_new(tdev, NULL, genl_info_net(info),
				   nla_data(info->attrs[TBRDMA_ATTR_ETH_IFNAME]),
				   info->extack);
	else
		err = tbe_unbind(tdev, genl_info_net(info),
				 nla_data(info->attrs[TBRDMA_ATTR_ETH_IFNAME]),
				 info->extack);
	mutex_unlock(&tbr_ctl_mutex);
	return err;
}

static int tbe_nl_put_bind(struct sk_buff *skb, struct tbe_bind *bind)
{
	struct net_device *dev = bind->dev;
	bool oper = netif_running(dev) && netif_carrier_ok(dev) && !READ_ONCE(bind->gone);
	unsigned long flags;
	u32 peers;

	spin_lock_irqsave(&bind->lock, flags);
	peers = bind->npeers;
	spin_unlock_irqrestore(&bind->lock, flags);
	if (nla_put_string(skb, TBRDMA_ATTR_DEV_NAME, tbr_dev_name(bind->tdev)) ||
	    nla_put_string(skb, TBRDMA_ATTR_ETH_IFNAME, dev->name) ||
	    nla_put_u32(skb, TBRDMA_ATTR_ETH_IFINDEX, dev->ifindex) ||
	    nla_put_u8(skb, TBRDMA_ATTR_STATE, oper ? TBRDMA_STATE_UP : TBRDMA_STATE_DOWN) ||
	    nla_put_u32(skb, TBRDMA_ATTR_MAX_FRAME, tbe_dev_max_frame(dev)) ||
	    nla_put_u32(skb, TBRDMA_ATTR_ETH_PEERS, peers) ||
	    nla_put_u64_64bit(skb, TBRDMA_ATTR_ETH_HELLO_TX, atomic64_read(&bind->hello_tx),
			      TBRDMA_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, TBRDMA_ATTR_ETH_HELLO_RX, atomic64_read(&bind->hello_rx),
			      TBRDMA_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, TBRDMA_ATTR_ETH_RX_FOREIGN, atomic64_read(&bind->rx_foreign),
			      TBRDMA_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, TBRDMA_ATTR_AUTH_REFUSED, atomic64_read(&bind->auth_refused),
			      TBRDMA_ATTR_PAD))
		return -EMSGSIZE;
	return 0;
}

/* ETH_GET: every binding */
static int tbe_nl_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct tbe_bind *bind;
	unsigned long i = 0;
	void *hdr;

	mutex_lock(&tbr_ctl_mutex);
	list_for_each_entry(bind, &tbe_binds, node) {
		if (i++ < cb->args[0])
			continue;
		hdr = tbr_nl_msg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				     NLM_F_MULTI, TBRDMA_CMD_ETH_GET);
		if (!hdr)
			goto full;
		if (tbe_nl_put_bind(skb, bind)) {
			genlmsg_cancel(skb, hdr);
			goto full;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = i;
	}
	mutex_unlock(&tbr_ctl_mutex);
	return 0;	/* complete: see "Dumps" in ctl/netlink.c */
full:
	mutex_unlock(&tbr_ctl_mutex);
	return skb->len;
}

static const struct genl_small_ops tbe_nl_ops[] = {
	{
		.cmd = TBRDMA_CMD_ETH_BIND,
		.doit = tbe_nl_bind,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TBRDMA_CMD_ETH_UNBIND,
		.doit = tbe_nl_bind,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TBRDMA_CMD_ETH_GET,
		.dumpit = tbe_nl_get_dumpit,
	},
};

/* ---- rdma link (iproute2's `rdma link add NAME type tbrdma netdev ETH`) ---- */

/*
 * The RDMA core's way to make a software device on a netdev, as rxe and siw
 * do: a new device NAME (tbrN its RoCE netdev, as any tbrdma device) with
 * an eth binding on @ndev, so its rails come up with every peer heard on
 * it. Called by the RDMA core's netlink handler (process context, a
 * reference on @ndev held). `rdma link delete` is refused (the device is
 * not IBK_ALLOW_USER_UNREG): DEV_DEL (tbrdma-ctl) deletes it, rails first.
 */
static int tbe_rdma_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct tbr_dev *tdev;
	int err;

	mutex_lock(&tbr_ctl_mutex);
	tdev = tbr_ctl_dev_new(false, ibdev_name);
	if (IS_ERR(tdev)) {
		err = PTR_ERR(tdev);
	} else {
		err = tbe_bind_new(tdev, ndev, NULL, NULL, NULL);
		if (err)
			tbr_ctl_dev_del(tdev);
	}
	mutex_unlock(&tbr_ctl_mutex);
	if (err)
		pr_info("tbrdma: rdma link add %s netdev %s: error %d\n", ibdev_name,
			ndev->name, err);
	return err;
}

static struct rdma_link_ops tbe_rdma_link_ops = {
	.type = "tbrdma",
	.newlink = tbe_rdma_newlink,
};
MODULE_ALIAS_RDMA_LINK("tbrdma");

/* Once tbrdma0 and the registry exist; unregistering waits for a newlink. */
static int tbe_start(void)
{
	rdma_link_register(&tbe_rdma_link_ops);
	return 0;
}

static void tbe_stop(void)
{
	rdma_link_unregister(&tbe_rdma_link_ops);
}

static const struct tbr_backend_ctl tbe_ctl = {
	.nl_ops = tbe_nl_ops,
	.n_nl_ops = ARRAY_SIZE(tbe_nl_ops),
	.fill_rail = tbe_fill_info,
};

const struct tbr_backend tbr_eth_backend = {
	.kind = "eth",
	.rail_ops = &tbe_rail_ops,
	.init = tbe_init,
	.start = tbe_start,
	.stop = tbe_stop,
	.dev_gone = tbe_dev_gone,
	.exit = tbe_exit,
	.ctl = &tbe_ctl,
#ifdef CONFIG_NET_RX_BUSY_POLL
	.busy_poll = tbe_busy_poll,
#endif
};
