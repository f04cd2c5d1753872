// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: tbrN, the RoCE netdev of a tbrdma device. Its IP addresses become
 * the device's RoCE v2 GIDs (the RDMA core fills the GID table from them).
 * The carrier is on while at least one peer link has a rail up; with no link
 * the netdev is a down Ethernet port and drops what it is given, counted.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>

#include "tbrdma.h"
#include "rail.h"

static netdev_tx_t tbr_netdev_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	ndev->stats.tx_dropped++;
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops tbr_netdev_ops = {
	.ndo_start_xmit		= tbr_netdev_xmit,
	.ndo_set_mac_address	= eth_mac_addr,
	.ndo_validate_addr	= eth_validate_addr,
};

static void tbr_netdev_setup(struct net_device *ndev)
{
	ether_setup(ndev);
	ndev->netdev_ops = &tbr_netdev_ops;
	ndev->needs_free_netdev = false;
	ndev->min_mtu = ETH_MIN_MTU;
	ndev->max_mtu = 4096 - ETH_HLEN;
	ndev->mtu = 4096 - ETH_HLEN;
	eth_hw_addr_random(ndev);
}

/* Context: process, may sleep. Returns the registered tbrN or an ERR_PTR. */
struct net_device *tbr_netdev_create(void)
{
	struct net_device *ndev;
	int err;

	ndev = alloc_netdev(0, "tbr%d", NET_NAME_ENUM, tbr_netdev_setup);
	if (!ndev)
		return ERR_PTR(-ENOMEM);
	netif_carrier_off(ndev);
	err = register_netdev(ndev);
	if (err)
		goto err_free;
	return ndev;

err_free:
	free_netdev(ndev);
	return ERR_PTR(err);
}

/* Context: process, may sleep; the ib_device using @ndev is unregistered. */
void tbr_netdev_destroy(struct net_device *ndev)
{
	unregister_netdev(ndev);
	free_netdev(ndev);
}

/*
 * Carrier of tbrN follows the rails: on while any link of the device has a
 * rail up (the port is ACTIVE then, if tbrN is up), off when the last rail
 * goes. Consumers of asynchronous events get PORT_ACTIVE / PORT_ERR.
 * Context: process (the rail layer calls it with tbr_ctl_mutex held).
 */
void tbr_netdev_set_carrier(struct tbr_dev *tdev, bool on)
{
	struct ib_event ev = {
		.device = &tdev->ibdev,
		.element.port_num = 1,
		.event = on ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR,
	};

	if (on)
		netif_carrier_on(tdev->netdev);
	else
		netif_carrier_off(tdev->netdev);
	ib_dispatch_event(&ev);
}
