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
 * source MAC is not its sender's is dropped (tbr_netx_src_ok). The
 * carrier is on while at least one link has a rail up.
 *
 * To a neighbour that takes them (TBR_PEER_NET_FRAG), unicast packets up to
 * 64 KiB, TSO super packets and checksums left to do included, go as
 * fragment frames over every rail of the link instead, reassembled in
 * order (verbs/netx.c); the MTU may then be up to 64 KiB. Packets to other
 * hosts (routed) and to older peers are segmented and checksummed by the
 * stack first (tbr_netdev_features_check) and go one frame each, as before.
 */
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
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
#include "verbs/netdev.h"

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
	struct tbr_netdev_priv *priv = tbr_netdev_priv(ndev);
	struct tbr_dev *tdev = priv->tdev;
	struct tbr_link *link = NULL;
	bool mcast;
	__be64 guid;
	int sent = 0, err;

	if (unlikely(priv->pend))
		return NETDEV_TX_BUSY;	/* the queue is stopped for it */
	if (!tdev || skb->len < ETH_HLEN)
		goto drop;
	mcast = is_multicast_ether_addr(skb->data);	/* h_dest */
	if (!mcast) {
		addrconf_addr_eui48((u8 *)&guid, skb->data);
		link = tbr_link_get_route(tdev, be64_to_cpu(guid));
		if (!link)
			goto drop;
		if (tbr_netx_takes(priv, link)) {
			tbr_netx_xmit(ndev, link, skb);	/* takes the reference */
			return NETDEV_TX_OK;
		}
	}
	/* one frame: tbr_netdev_features_check() had the stack do the offloads */
	if (skb_is_gso(skb) ||
	    (skb->ip_summed == CHECKSUM_PARTIAL && skb_checksum_help(skb)))
		goto drop;
	if (skb->len > TBR_FRAME_SIZE_MAX) {
		if (link)
			tbr_netdev_too_big(skb, tbr_link_max_frame(link));
		goto drop;
	}
	if (skb_linearize(skb))
		goto drop;
	if (mcast) {
		rcu_read_lock();
		list_for_each_entry_rcu(link, &tdev->rails.links, node)
			if (!tbr_link_xmit(link, TBR_PDF_NET, skb->data, skb->len))
				sent++;
		list_for_each_entry_rcu(link, &tdev->rails.routed, node)
			if (!tbr_link_xmit(link, TBR_PDF_NET, skb->data, skb->len))
				sent++;
		rcu_read_unlock();
		link = NULL;
	} else {
		err = tbr_link_xmit(link, TBR_PDF_NET, skb->data, skb->len);
		if (!err)
			sent++;
		else if (err == -EMSGSIZE)
			tbr_netdev_too_big(skb, tbr_link_max_frame(link));
	}
	if (!sent)
		goto drop;
	if (link)
		tbr_link_put(link);
	ndev->stats.tx_packets++;
	ndev->stats.tx_bytes += skb->len;
	atomic64_inc(&priv->cnt[TBR_NETX_TX_LEGACY]);
	dev_consume_skb_any(skb);
	return NETDEV_TX_OK;

drop:
	if (link)
		tbr_link_put(link);
	ndev->stats.tx_dropped++;
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/*
 * Offloads only for packets that go as fragments (tbr_netx_takes): the
 * stack segments and checksums the others before tbr_netdev_xmit.
 */
static netdev_features_t tbr_netdev_features_check(struct sk_buff *skb,
						   struct net_device *ndev,
						   netdev_features_t features)
{
	struct tbr_netdev_priv *priv = tbr_netdev_priv(ndev);
	const struct ethhdr *eth = (const struct ethhdr *)skb->data;
	struct tbr_link *link = NULL;
	bool frag = false;
	__be64 guid;

	if (priv->tdev && skb_headlen(skb) >= ETH_HLEN &&
	    !is_multicast_ether_addr(eth->h_dest)) {
		addrconf_addr_eui48((u8 *)&guid, eth->h_dest);
		link = tbr_link_get_route(priv->tdev, be64_to_cpu(guid));
	}
	if (link) {
		frag = tbr_netx_takes(priv, link);
		tbr_link_put(link);
	}
	if (!frag)
		features &= ~(NETIF_F_CSUM_MASK | NETIF_F_GSO_MASK);
	return features;
}

/*
 * An Ethernet frame for tbrN arrived on a rail (observer rx, frames with
 * code NET) from host @src, directly or routed. Context: bh (rail RX
 * completion); @data is valid only during the call. A frame with a source
 * address not @src's (tbr_netx_src_ok) is dropped, counted in rx_dropped.
 */
static void tbr_netdev_rx(struct tbr_rail *rail, u64 src, u8 pdf, const void *data, u32 len)
{
	struct net_device *ndev = rail->link->tdev->netdev;
	struct sk_buff *skb;

	if (!ndev || (pdf != TBR_PDF_NET && pdf != TBR_PDF_NETX))
		return;
	if (!netif_running(ndev))
		goto drop;
	if (pdf == TBR_PDF_NETX) {
		tbr_netx_rx(ndev, rail->link, rail->id, src, data, len);
		return;
	}
	if (len < ETH_HLEN || !tbr_netx_src_ok(data, len, src))
		goto drop;
	skb = netdev_alloc_skb_ip_align(ndev, len);
	if (!skb)
		goto drop;
	skb_put_data(skb, data, len);
	skb->protocol = eth_type_trans(skb, ndev);
	ndev->stats.rx_packets++;
	ndev->stats.rx_bytes += len;
	tbr_netx_rx_one(ndev, skb);
	return;

drop:
	ndev->stats.rx_dropped++;
}

static const struct net_device_ops tbr_netdev_ops = {
	.ndo_open		= tbr_netx_open,
	.ndo_stop		= tbr_netx_stop,
	.ndo_start_xmit		= tbr_netdev_xmit,
	.ndo_features_check	= tbr_netdev_features_check,
	.ndo_set_mac_address	= eth_mac_addr,
	.ndo_validate_addr	= eth_validate_addr,
};

/* ---- ethtool ---------------------------------------------------------------- */

static const char tbr_netx_cnt_names[TBR_NETX_CNT_MAX][ETH_GSTRING_LEN] = {
	"ip_tx_packets_striped", "ip_tx_frags", "ip_tx_stalls", "ip_tx_packets_one_frame",
	"ip_rx_packets_striped", "ip_rx_frags", "ip_rx_gso", "ip_rx_reordered",
	"ip_rx_given_up", "ip_rx_missing", "ip_rx_late_frags", "ip_rx_bad_frags",
	"ip_rx_resync", "ip_rx_giveup_rails", "ip_rx_giveup_hold", "ip_rx_giveup_cut",
	"ip_rx_giveup_window", "ip_rx_hold_ms",
};

/* per rail index (rail N of every link summed): what tbrN's traffic shares */
static const struct {
	enum tbr_cnt cnt;
	const char *name;
} tbr_netdev_rail_stats[] = {
	{ TBR_CNT_TX_FRAMES, "tx_frames" }, { TBR_CNT_TX_BYTES, "tx_bytes" },
	{ TBR_CNT_RX_FRAMES, "rx_frames" }, { TBR_CNT_RX_BYTES, "rx_bytes" },
	{ TBR_CNT_TX_LOST, "tx_lost" }, { TBR_CNT_CREDIT_STALLS, "credit_stalls" },
};

#define TBR_NETDEV_NSTATS	(TBR_NETX_CNT_MAX + \
				 TBR_LINK_MAX_RAILS * ARRAY_SIZE(tbr_netdev_rail_stats))

static void tbr_netdev_get_drvinfo(struct net_device *ndev,
				   struct ethtool_drvinfo *info)
{
	strscpy(info->driver, KBUILD_MODNAME, sizeof(info->driver));
}

static int tbr_netdev_get_link_ksettings(struct net_device *ndev,
					 struct ethtool_link_ksettings *cmd)
{
	u32 mbps = READ_ONCE(tbr_netdev_priv(ndev)->mbps);

	ethtool_link_ksettings_zero_link_mode(cmd, supported);
	ethtool_link_ksettings_zero_link_mode(cmd, advertising);
	cmd->base.speed = netif_carrier_ok(ndev) && mbps ? mbps : SPEED_UNKNOWN;
	cmd->base.duplex = DUPLEX_FULL;
	cmd->base.port = PORT_OTHER;
	cmd->base.autoneg = AUTONEG_DISABLE;
	return 0;
}

static int tbr_netdev_get_sset_count(struct net_device *ndev, int sset)
{
	return sset == ETH_SS_STATS ? TBR_NETDEV_NSTATS : -EOPNOTSUPP;
}

static void tbr_netdev_get_strings(struct net_device *ndev, u32 sset, u8 *data)
{
	u32 i, r;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < TBR_NETX_CNT_MAX; i++, data += ETH_GSTRING_LEN)
		memcpy(data, tbr_netx_cnt_names[i], ETH_GSTRING_LEN);
	for (r = 0; r < TBR_LINK_MAX_RAILS; r++)
		for (i = 0; i < ARRAY_SIZE(tbr_netdev_rail_stats); i++, data += ETH_GSTRING_LEN)
			snprintf(data, ETH_GSTRING_LEN, "rail%u_%s", r,
				 tbr_netdev_rail_stats[i].name);
}

static void tbr_netdev_get_stats(struct net_device *ndev,
				 struct ethtool_stats *stats, u64 *data)
{
	struct tbr_netdev_priv *priv = tbr_netdev_priv(ndev);
	u64 *rails = data + TBR_NETX_CNT_MAX;
	const u32 n = ARRAY_SIZE(tbr_netdev_rail_stats);
	struct tbr_link *link;
	struct tbr_rail *rail;
	unsigned long flags;
	u32 i, r;

	memset(data, 0, TBR_NETDEV_NSTATS * sizeof(*data));
	for (i = 0; i < TBR_NETX_CNT_MAX; i++)
		data[i] = atomic64_read(&priv->cnt[i]);
	if (!priv->tdev)
		return;
	rcu_read_lock();
	list_for_each_entry_rcu(link, &priv->tdev->rails.links, node) {
		spin_lock_irqsave(&link->lock, flags);
		for (r = 0; r < TBR_LINK_MAX_RAILS; r++) {
			rail = link->rails[r];
			if (!rail)
				continue;
			for (i = 0; i < n; i++)
				rails[r * n + i] += atomic64_read(&rail->cnt[tbr_netdev_rail_stats[i].cnt]);
		}
		spin_unlock_irqrestore(&link->lock, flags);
	}
	rcu_read_unlock();
}

static const struct ethtool_ops tbr_netdev_ethtool_ops = {
	.get_drvinfo		= tbr_netdev_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_link_ksettings	= tbr_netdev_get_link_ksettings,
	.get_sset_count		= tbr_netdev_get_sset_count,
	.get_strings		= tbr_netdev_get_strings,
	.get_ethtool_stats	= tbr_netdev_get_stats,
};

static void tbr_netdev_setup(struct net_device *ndev)
{
	ether_setup(ndev);
	ndev->netdev_ops = &tbr_netdev_ops;
	ndev->ethtool_ops = &tbr_netdev_ethtool_ops;
	ndev->needs_free_netdev = false;
	ndev->min_mtu = ETH_MIN_MTU;
	/*
	 * 4096-byte frames cross every link (tb without split frames too),
	 * so that is the default; up to 64 KiB to neighbours that take
	 * fragment frames (netx.c), larger packets to the others get "too
	 * big" (tbr_netdev_too_big). TSO super packets go whole to the former
	 * at any MTU.
	 */
	ndev->max_mtu = TBR_NETX_MTU_MAX;
	ndev->mtu = 4096 - ETH_HLEN;
	ndev->hw_features = NETIF_F_SG | NETIF_F_HW_CSUM | NETIF_F_TSO |
			    NETIF_F_TSO6 | NETIF_F_TSO_ECN | NETIF_F_HIGHDMA;
	ndev->features = ndev->hw_features;
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
	tbr_netx_init(ndev);
	netif_carrier_off(ndev);
	err = register_netdev(ndev);
	if (err)
		goto err_free;
	return ndev;

err_free:
	tbr_netx_fini(ndev);
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
	tbr_netx_fini(ndev);
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
	WRITE_ONCE(tbr_netdev_priv(tdev->netdev)->mbps, min_t(u64, mbps, U32_MAX));
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
	if (!rail->link->ops && tdev->netdev)
		tbr_netx_rail_event(tdev->netdev, rail->link, rail->id, ev == TBR_OBS_UP);
	if (tbr_port_rate_update(tdev) && tdev->rails.rails_up)
		ib_dispatch_event(&iev);
}

/* Context "process", tbr_ctl_mutex held: a rail link's state (netx.c). */
static void tbr_netdev_link_event(struct tbr_link *link, enum tbr_obs_event ev)
{
	if (link->tdev->netdev && !link->ops)
		tbr_netx_link_event(link->tdev->netdev, link, ev);
}

/* Context "bh". */
static void tbr_netdev_tx_ready(struct tbr_link *link)
{
	if (link->tdev->netdev)
		tbr_netx_tx_ready(link->tdev->netdev, link);
}

struct tbr_link_observer tbr_netdev_observer = {
	.link_event = tbr_netdev_link_event,
	.carrier = tbr_netdev_set_carrier,
	.rail_event = tbr_netdev_rail_event,
	.rx = tbr_netdev_rx,
	.tx_ready = tbr_netdev_tx_ready,
};
