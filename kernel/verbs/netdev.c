// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: tbrN, the RoCE netdev of a tbrdma device. Its IP addresses become
 * the device's RoCE v2 GIDs (the RDMA core fills the GID table from them).
 *
 * tbrN carries IP over the rails, so ARP/ND (and with them RoCE address
 * resolution, rdma_cm and the out-of-band TCP of perftest) work between
 * hosts: an Ethernet frame of at most 4096 bytes rides as one rail frame with
 * code TBR_PDF_NET. A unicast frame goes to the link of the peer that owns
 * the destination MAC (a peer's node GUID is the EUI-64 of its tbrN MAC):
 * a neighbour's link, or the routed link the forwarding table made for a
 * host further away (link/route.c); broadcast and multicast go to every
 * link and, routed, to every host further away (one copy each: ARP and ND
 * reach every host of the fabric, no flooding, no loop). A frame whose
 * source MAC is not its sender's is dropped (tbr_netdev_src_ok). The
 * carrier is on while at least one link has a rail up.
 */
#include <linux/etherdevice.h>
#include <linux/icmpv6.h>
#include <linux/if_arp.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <net/addrconf.h>
#include <net/icmp.h>
#include <net/ndisc.h>

#include "tbrdma.h"
#include "link/rail.h"

struct tbr_netdev_priv {
	struct tbr_dev *tdev;	/* set once the ib_device exists */
};

/*
 * A unicast packet its link refused as too large (a routed link's frames
 * carry 24 bytes less than its first hop's, docs/protocol.md 7): tell the
 * sender the link's largest frame as the path MTU, as a tunnel does, so TCP
 * and PMTU discovery shrink their packets; the packet is dropped. IPv4
 * without DF: dropped only.
 */
static void tbr_netdev_too_big(struct sk_buff *skb, u32 frame)
{
	u32 mtu = frame - ETH_HLEN;

	if (skb->protocol == htons(ETH_P_IP) &&
	    pskb_network_may_pull(skb, sizeof(struct iphdr)) &&
	    (ip_hdr(skb)->frag_off & htons(IP_DF)))
		icmp_ndo_send(skb, ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED, htonl(mtu));
	else if (skb->protocol == htons(ETH_P_IPV6) && mtu >= IPV6_MIN_MTU)
		icmpv6_ndo_send(skb, ICMPV6_PKT_TOOBIG, 0, mtu);
}

/* Context: softirq or process with BH off (ndo_start_xmit). */
static netdev_tx_t tbr_netdev_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct tbr_dev *tdev = ((struct tbr_netdev_priv *)netdev_priv(ndev))->tdev;
	const struct ethhdr *eth = (const struct ethhdr *)skb->data;
	struct tbr_link *link;
	__be64 guid;
	int sent = 0;

	if (!tdev || skb->len < ETH_HLEN || skb->len > TBR_FRAME_SIZE_MAX ||
	    skb_linearize(skb))
		goto drop;
	eth = (const struct ethhdr *)skb->data;
	if (is_multicast_ether_addr(eth->h_dest)) {
		rcu_read_lock();
		list_for_each_entry_rcu(link, &tdev->rails.links, node)
			if (!tbr_link_xmit(link, TBR_PDF_NET, skb->data, skb->len))
				sent++;
		list_for_each_entry_rcu(link, &tdev->rails.routed, node)
			if (!tbr_link_xmit(link, TBR_PDF_NET, skb->data, skb->len))
				sent++;
		rcu_read_unlock();
	} else {
		addrconf_addr_eui48((u8 *)&guid, eth->h_dest);
		link = tbr_link_get_route(tdev, be64_to_cpu(guid));
		if (link) {
			int err = tbr_link_xmit(link, TBR_PDF_NET, skb->data, skb->len);

			if (!err)
				sent++;
			else if (err == -EMSGSIZE)
				tbr_netdev_too_big(skb, tbr_link_max_frame(link));
			tbr_link_put(link);
		}
	}
	if (!sent)
		goto drop;
	ndev->stats.tx_packets++;
	ndev->stats.tx_bytes += skb->len;
	dev_consume_skb_any(skb);
	return NETDEV_TX_OK;

drop:
	ndev->stats.tx_dropped++;
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/*
 * ND options that name a link-layer address (RFC 4861 4.6.1): source (1) in
 * RS, RA and NS, target (2) in NA; each must be @mac (0: none, or all
 * @mac). Redirects (137) name another host's address by design: not
 * checked (the stack takes them from the current router only). Only ND
 * right after the IPv6 header is looked at, as the stack sends it.
 */
static bool tbr_netdev_nd_ok(const u8 *p, u32 len, const u8 *mac)
{
	const struct ipv6hdr *ip6 = (const struct ipv6hdr *)p;
	u32 off;

	if (len < sizeof(*ip6) + 8 || ip6->nexthdr != IPPROTO_ICMPV6)
		return true;
	p += sizeof(*ip6);
	len = min_t(u32, len - sizeof(*ip6), ntohs(ip6->payload_len));
	if (len < 8)
		return true;	/* the stack drops it */
	switch (p[0]) {		/* ICMPv6 type */
	case NDISC_ROUTER_SOLICITATION:
		off = 8;
		break;
	case NDISC_ROUTER_ADVERTISEMENT:
		off = 16;
		break;
	case NDISC_NEIGHBOUR_SOLICITATION:
	case NDISC_NEIGHBOUR_ADVERTISEMENT:
		off = 24;
		break;
	default:
		return true;
	}
	/* options: type, length in units of 8 bytes (0 is invalid), data */
	while (off + 2 <= len && p[off + 1]) {
		if ((p[off] == ND_OPT_SOURCE_LL_ADDR || p[off] == ND_OPT_TARGET_LL_ADDR) &&
		    (off + 2 + ETH_ALEN > len || !ether_addr_equal(p + off + 2, mac)))
			return false;
		off += p[off + 1] * 8;
	}
	return true;
}

/*
 * Whether a frame of @len bytes from host @src may enter tbrN: every tbrN's
 * MAC is the EUI-48 of its node GUID (a peer's unicast goes to the link of
 * the GUID its MAC names, tbr_netdev_xmit), so the Ethernet source must be
 * @src's, and the link-layer addresses the stack learns neighbours from
 * too: an ARP sender's hardware address, ND's source/target link-layer
 * address options. Otherwise a neighbour could make hosts map addresses to
 * another host's MAC, or to one no host has (issue 46). Bridging tbrN,
 * which forwards other MACs, is therefore not possible (as IPoIB's).
 */
static bool tbr_netdev_src_ok(const u8 *data, u32 len, u64 src)
{
	const struct ethhdr *eth = (const struct ethhdr *)data;
	const struct arphdr *arp;
	__be64 guid;

	addrconf_addr_eui48((u8 *)&guid, eth->h_source);
	if (be64_to_cpu(guid) != src)
		return false;
	data += ETH_HLEN;
	len -= ETH_HLEN;
	switch (eth->h_proto) {
	case htons(ETH_P_ARP):
		/* the stack takes Ethernet ARP only: sender address first */
		arp = (const struct arphdr *)data;
		return len >= sizeof(*arp) + ETH_ALEN && arp->ar_hln == ETH_ALEN &&
		       ether_addr_equal(data + sizeof(*arp), eth->h_source);
	case htons(ETH_P_IPV6):
		return tbr_netdev_nd_ok(data, len, eth->h_source);
	default:
		return true;
	}
}

/*
 * An Ethernet frame for tbrN arrived on a rail (observer rx, frames with
 * code NET) from host @src, directly or routed. Context: bh (rail RX
 * completion); @data is valid only during the call. A frame with a source
 * address not @src's (tbr_netdev_src_ok) is dropped, counted in rx_dropped.
 */
static void tbr_netdev_rx(struct tbr_rail *rail, u64 src, u8 pdf, const void *data, u32 len)
{
	struct net_device *ndev = rail->link->tdev->netdev;
	struct sk_buff *skb;

	if (pdf != TBR_PDF_NET)
		return;
	if (len < ETH_HLEN || !netif_running(ndev) || !tbr_netdev_src_ok(data, len, src))
		goto drop;
	skb = netdev_alloc_skb_ip_align(ndev, len);
	if (!skb)
		goto drop;
	skb_put_data(skb, data, len);
	skb->protocol = eth_type_trans(skb, ndev);
	ndev->stats.rx_packets++;
	ndev->stats.rx_bytes += len;
	netif_rx(skb);
	return;

drop:
	ndev->stats.rx_dropped++;
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
	/*
	 * 4096-byte frames cross every link (tb without split frames too);
	 * larger ones up to a whole transport frame where the links carry them
	 */
	ndev->max_mtu = TBR_FRAME_SIZE_MAX - ETH_HLEN;
	ndev->mtu = 4096 - ETH_HLEN;
	/* keep the route on the skb: "too big" ICMPs need it (tbr_netdev_too_big) */
	netif_keep_dst(ndev);
	eth_hw_addr_random(ndev);
}

/*
 * Context: process, may sleep. Returns the registered tbrN, with MAC @mac
 * (random if NULL), or an ERR_PTR.
 */
struct net_device *tbr_netdev_create(const u8 *mac)
{
	struct net_device *ndev;
	int err;

	ndev = alloc_netdev(sizeof(struct tbr_netdev_priv), "tbr%d",
			    NET_NAME_ENUM, tbr_netdev_setup);
	if (!ndev)
		return ERR_PTR(-ENOMEM);
	if (mac)
		eth_hw_addr_set(ndev, mac);
	netif_carrier_off(ndev);
	err = register_netdev(ndev);
	if (err)
		goto err_free;
	return ndev;

err_free:
	free_netdev(ndev);
	return ERR_PTR(err);
}

/* Context: process. Frames of @ndev may now reach @tdev's links. */
void tbr_netdev_bind(struct net_device *ndev, struct tbr_dev *tdev)
{
	((struct tbr_netdev_priv *)netdev_priv(ndev))->tdev = tdev;
}

/*
 * Context: process, may sleep; the ib_device using @ndev is unregistered and
 * still allocated (tbrN may transmit until it is unregistered here).
 */
void tbr_netdev_destroy(struct net_device *ndev)
{
	unregister_netdev(ndev);
	free_netdev(ndev);
}

/* IB lane speeds in Mb/s as ibv_devinfo shows them (FDR10 as 10, EDR 25) */
static const struct {
	u8 speed;
	u32 mbps;
} tbr_ib_speeds[] = {
	{ IB_SPEED_SDR, 2500 }, { IB_SPEED_DDR, 5000 }, { IB_SPEED_QDR, 10000 },
	{ IB_SPEED_FDR, 14000 }, { IB_SPEED_EDR, 25000 }, { IB_SPEED_HDR, 50000 },
	{ IB_SPEED_NDR, 100000 },
};

static const u8 tbr_ib_widths[] = {
	IB_WIDTH_1X, IB_WIDTH_2X, IB_WIDTH_4X, IB_WIDTH_8X, IB_WIDTH_12X
};

/*
 * The width and speed whose product is closest to @mbps (the lower one on a
 * tie, the narrower width for equal products). 0: 4X QDR, what the port
 * said before rails reported speeds (emu rails know none).
 */
static void tbr_port_rate_encode(u64 mbps, u8 *width, u8 *speed)
{
	u64 best = U64_MAX, rate, diff;
	unsigned int w, s;

	*width = IB_WIDTH_4X;
	*speed = IB_SPEED_QDR;
	if (!mbps)
		return;
	for (w = 0; w < ARRAY_SIZE(tbr_ib_widths); w++) {
		for (s = 0; s < ARRAY_SIZE(tbr_ib_speeds); s++) {
			rate = (u64)ib_width_enum_to_int(tbr_ib_widths[w]) *
			       tbr_ib_speeds[s].mbps;
			diff = rate > mbps ? rate - mbps : mbps - rate;
			if (diff < best || (diff == best && rate < mbps)) {
				best = diff;
				*width = tbr_ib_widths[w];
				*speed = tbr_ib_speeds[s].speed;
			}
		}
	}
}

/*
 * Recompute the port's active width and speed from the up rails, each
 * medium counted once; true when they changed. tbr_ctl_mutex held.
 */
static bool tbr_port_rate_update(struct tbr_dev *tdev)
{
	const void *seen[TBR_LINK_MAX_RAILS * 4];
	unsigned int nseen = 0, i, r;
	struct tbr_link *link;
	struct tbr_rail *rail;
	u8 width, speed;
	u64 mbps = 0;

	lockdep_assert_held(&tbr_ctl_mutex);
	list_for_each_entry(link, &tdev->rails.links, node) {
		for (r = 0; r < link->nrails; r++) {
			rail = link->rails[r];
			if (!rail || !READ_ONCE(rail->up) || !READ_ONCE(rail->lanes))
				continue;
			for (i = 0; i < nseen && seen[i] != rail->medium; i++)
				;
			if (i < nseen)
				continue;	/* its medium is counted */
			if (nseen < ARRAY_SIZE(seen))
				seen[nseen++] = rail->medium;
			mbps += (u64)rail->lane_mbps * rail->lanes;
		}
	}
	tbr_port_rate_encode(mbps, &width, &speed);
	if (width == tdev->port_width && speed == tdev->port_speed)
		return false;
	WRITE_ONCE(tdev->port_width, width);
	WRITE_ONCE(tdev->port_speed, speed);
	return true;
}

/*
 * Carrier of tbrN follows the rails: on while any link of the device has a
 * rail up (the port is ACTIVE then, if tbrN is up), off when the last rail
 * goes. Consumers of asynchronous events get PORT_ACTIVE / PORT_ERR.
 * Context: process (the link layer's observer call, tbr_ctl_mutex held).
 */
static void tbr_netdev_set_carrier(struct tbr_dev *tdev, bool on)
{
	struct ib_event ev = {
		.device = &tdev->ibdev,
		.element.port_num = 1,
		.event = on ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR,
	};

	tbr_port_rate_update(tdev);	/* before PORT_ACTIVE: with its rate */
	if (on)
		netif_carrier_on(tdev->netdev);
	else
		netif_carrier_off(tdev->netdev);
	ib_dispatch_event(&ev);
}

/*
 * A rail came up or went down with the carrier staying on: when the port's
 * active width or speed changed (tbr_port_rate_update), PORT_ACTIVE again,
 * so consumers query the port anew. Context as above; the carrier call of
 * the device's first rail up or last down comes first.
 */
static void tbr_netdev_rail_event(struct tbr_rail *rail, enum tbr_obs_event ev)
{
	struct tbr_dev *tdev = rail->link->tdev;
	struct ib_event iev = {
		.device = &tdev->ibdev,
		.element.port_num = 1,
		.event = IB_EVENT_PORT_ACTIVE,
	};

	if (ev != TBR_OBS_UP && ev != TBR_OBS_DOWN)
		return;
	if (tbr_port_rate_update(tdev) && tdev->rails.rails_up)
		ib_dispatch_event(&iev);
}

struct tbr_link_observer tbr_netdev_observer = {
	.carrier = tbr_netdev_set_carrier,
	.rail_event = tbr_netdev_rail_event,
	.rx = tbr_netdev_rx,
};
