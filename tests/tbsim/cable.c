// SPDX-License-Identifier: GPL-2.0
/*
 * tbsim: the cable. A network interface whose MAC address starts with the
 * cable_mac prefix (a dedicated QEMU virtio-net NIC joined to the other VM's
 * one) is a Thunderbolt cable plugged into the next free USB4 port (lane
 * adapters 1, 3, 5, ...: the XDomain's route). It carries control packets
 * and ring frames as Ethernet frames of type 0x88b5: one or more records,
 * each a small header (tbsim.h) with a CRC and its payload. A TX ring's
 * frames queued together share packets up to TBSIM_BUNDLE_MAX bytes, so the
 * cable's cost per ring frame (a virtio packet through QEMU: on hardware no
 * CPU's work) does not decide a transfer's pace. Both ends send keepalives
 * every 250 ms: the link is up (an XDomain exists) while the peer's arrive,
 * and goes down (the XDomain is removed, as on a real unplug) when none came
 * for TBSIM_LINK_DEAD, so removing either VM's NIC (QMP device_del) unplugs
 * the cable on both sides, and adding it back plugs it in again.
 */
#include <linux/crc32.h>
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/module.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include "tbsim.h"

static char *cable_mac = "0e:7b:";
module_param(cable_mac, charp, 0444);
MODULE_PARM_DESC(cable_mac, "MAC address prefix of the NICs that are cables (default 0e:7b:)");

#define TBSIM_LINK_PERIOD	(HZ / 4)
#define TBSIM_LINK_DEAD		(5 * HZ)	/* a loaded TCG guest can stall for seconds */

static bool is_cable(struct net_device *dev)
{
	char mac[18];

	if (dev->type != ARPHRD_ETHER || dev->addr_len != ETH_ALEN)
		return false;
	snprintf(mac, sizeof(mac), "%pM", dev->dev_addr);
	return !strncasecmp(mac, cable_mac, strlen(cable_mac));
}

/* tbsim.lock held */
static struct tbsim_cable *cable_of(struct net_device *dev)
{
	struct tbsim_cable *c;

	list_for_each_entry(c, &tbsim.cables, node)
		if (c->held == dev)
			return c;
	return NULL;
}

static void open_work_fn(struct work_struct *work)
{
	struct tbsim_cable *c = container_of(work, struct tbsim_cable, open_work);

	rtnl_lock();
	if (!READ_ONCE(c->gone) && c->held->reg_state == NETREG_REGISTERED) {
		if (dev_set_mtu(c->held, TBSIM_CABLE_MTU) && dev_set_mtu(c->held, 9000))
			netdev_warn(c->held, "tbsim: MTU %d and 9000 refused\n", TBSIM_CABLE_MTU);
		if (dev_open(c->held, NULL))
			netdev_warn(c->held, "tbsim: cannot bring the cable up\n");
	}
	rtnl_unlock();
}

/* The link state machine: keepalive out, XDomain up or down. */
static void link_work_fn(struct work_struct *work)
{
	struct tbsim_cable *c = container_of(work, struct tbsim_cable, link_work.work);
	struct tbsim_wire w = { .kind = TBSIM_WIRE_LINK };
	struct tbsim_xd *down = NULL;
	bool alive;
	int i;

	tbsim_cable_xmit(c, &w, &tbsim.uuid, sizeof(tbsim.uuid));
	for (i = 1; i < TBSIM_HOP_COUNT; i++)
		tbsim_ring_credit_kick(i, true);	/* E2E: credits again, in case some were lost */
	mutex_lock(&tbsim.lock);
	alive = READ_ONCE(c->heard) && time_before(jiffies, READ_ONCE(c->last_rx) + TBSIM_LINK_DEAD);
	if (alive && !c->sxd && !c->gone && !c->replaced && tbsim.tb) {
		WRITE_ONCE(c->sxd, tbsim_xd_create(c));
	} else if (!alive && (c->sxd || c->replaced)) {
		down = c->sxd;
		WRITE_ONCE(c->sxd, NULL);
		WRITE_ONCE(c->heard, false);
		c->replaced = false;
	}
	mutex_unlock(&tbsim.lock);
	if (down) {
		netdev_info(c->held, "tbsim: link on port %u down\n", c->port);
		synchronize_net();
		tbsim_xd_unplug(down);
	}
	if (!READ_ONCE(c->gone))
		queue_delayed_work(tbsim.ring_wq, &c->link_work, TBSIM_LINK_PERIOD);
}

static void gone_work_fn(struct work_struct *work)
{
	struct tbsim_cable *c = container_of(work, struct tbsim_cable, gone_work);

	synchronize_net();
	cancel_work_sync(&c->open_work);
	cancel_delayed_work_sync(&c->link_work);
	dev_put(c->held);
	if (c->sxd)
		tbsim_xd_unplug(c->sxd);
	kfree_rcu(c, rcu);
}

/* rtnl held */
static void cable_plug(struct net_device *dev)
{
	struct tbsim_cable *c;
	unsigned long used = 0;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return;
	spin_lock_init(&c->lane_lock);
	c->lanes = tbsim_lanes;
	INIT_WORK(&c->open_work, open_work_fn);
	INIT_WORK(&c->gone_work, gone_work_fn);
	INIT_DELAYED_WORK(&c->link_work, link_work_fn);
	mutex_lock(&tbsim.lock);
	if (!tbsim.tb || cable_of(dev)) {
		mutex_unlock(&tbsim.lock);
		kfree(c);
		return;
	}
	{
		struct tbsim_cable *o;

		list_for_each_entry(o, &tbsim.cables, node)
			__set_bit(o->port / 2, &used);
	}
	c->port = 2 * find_first_zero_bit(&used, BITS_PER_LONG) + 1;
	dev_hold(dev);
	c->held = dev;
	rcu_assign_pointer(c->ndev, dev);
	list_add_tail_rcu(&c->node, &tbsim.cables);
	mutex_unlock(&tbsim.lock);
	netdev_info(dev, "tbsim: cable plugged into port %u\n", c->port);
	queue_work(tbsim.ring_wq, &c->open_work);
	queue_delayed_work(tbsim.ring_wq, &c->link_work, TBSIM_LINK_PERIOD);
}

/* rtnl held */
static void cable_unplug(struct net_device *dev)
{
	struct tbsim_cable *c;

	mutex_lock(&tbsim.lock);
	c = cable_of(dev);
	if (c) {
		WRITE_ONCE(c->gone, true);
		RCU_INIT_POINTER(c->ndev, NULL);
		list_del_rcu(&c->node);
	}
	mutex_unlock(&tbsim.lock);
	if (c) {
		netdev_info(dev, "tbsim: cable unplugged from port %u\n", c->port);
		queue_work(tbsim.ring_wq, &c->gone_work);
	}
}

static int cable_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);

	if (!is_cable(dev))
		return NOTIFY_DONE;
	if (event == NETDEV_REGISTER)
		cable_plug(dev);
	else if (event == NETDEV_UNREGISTER)
		cable_unplug(dev);
	return NOTIFY_DONE;
}

static struct notifier_block cable_nb = { .notifier_call = cable_event };

/* Softirq: one record of a packet from cable @c. rcu_read_lock held. */
static void cable_rcv_one(struct tbsim_cable *c, struct tbsim_wire *w, const void *data,
			  size_t len)
{
	struct tbsim_xd *sxd = READ_ONCE(c->sxd);
	int ring;

	w->flags = crc32_le(~0, data, len) != le32_to_cpu(w->crc);
	if (w->kind == TBSIM_WIRE_LINK) {
		if (!w->flags && len == sizeof(uuid_t) && !uuid_equal(data, &tbsim.uuid)) {
			WRITE_ONCE(c->last_rx, jiffies);
			WRITE_ONCE(c->heard, true);
		}
	} else if (w->kind == TBSIM_WIRE_CTL) {
		if (!w->flags)	/* ctl.c: checksum mismatch, packet dropped */
			tbsim_ctl_rx(c, data, len, w->eof);
	} else if (w->kind == TBSIM_WIRE_FRAME && sxd && w->sof < 16 && w->eof < 16 &&
		   tbsim_xd_path_rx(sxd, le16_to_cpu(w->hopid), &ring)) {
		tbsim_ring_rx(sxd, ring, data, len, w);
	} else if (w->kind == TBSIM_WIRE_CREDIT && sxd && !w->flags &&
		   len == sizeof(struct tbsim_credit)) {
		tbsim_ring_credit(sxd, w, data);
	}
}

/* Softirq: a packet from a cable: its records in order, up to one that does not fit. */
static int cable_rcv(struct sk_buff *skb, struct net_device *dev,
		     struct packet_type *pt, struct net_device *orig)
{
	struct tbsim_cable *c, *found = NULL;
	struct tbsim_wire w;
	size_t off = 0, len;

	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		return NET_RX_DROP;
	rcu_read_lock();
	list_for_each_entry_rcu(c, &tbsim.cables, node)
		if (rcu_access_pointer(c->ndev) == dev)
			found = c;
	if (!found || tbsim_cable_muted() || skb_linearize(skb))
		goto drop;
	/* (a short packet is padded with zeros: kind 0 ends it) */
	while (skb->len - off >= sizeof(w)) {
		memcpy(&w, skb->data + off, sizeof(w));
		off += sizeof(w);
		len = le16_to_cpu(w.len);
		if (!w.kind || len > skb->len - off)
			break;
		cable_rcv_one(found, &w, skb->data + off, len);
		off += len;
	}
drop:
	rcu_read_unlock();
	kfree_skb(skb);
	return NET_RX_SUCCESS;
}

static struct packet_type cable_pt = {
	.type = cpu_to_be16(TBSIM_ETH_P),
	.func = cable_rcv,
};

/*
 * Send @n records (at most TBSIM_BUNDLE_FRAMES) in one packet on cable @c.
 * Any context but hard IRQ; rcu_read_lock held. TBSIM_WIRE_CRC in a record's
 * w.flags corrupts its CRC (fault injection). 0 or -errno (no interface,
 * not up, no memory, the queue refused it).
 */
int tbsim_cable_xmitv(struct tbsim_cable *c, const struct tbsim_rec *recs, unsigned int n)
{
	struct net_device *dev = rcu_dereference(c->ndev);
	struct tbsim_wire *h;
	struct sk_buff *skb;
	size_t size = 0;
	unsigned int i;

	if (!dev || !(dev->flags & IFF_UP) || tbsim_cable_muted())
		return -ENOTCONN;
	for (i = 0; i < n; i++)
		size += sizeof(*h) + recs[i].len;
	skb = alloc_skb(LL_RESERVED_SPACE(dev) + size + dev->needed_tailroom, GFP_ATOMIC);
	if (!skb)
		return -ENOMEM;
	skb_reserve(skb, LL_RESERVED_SPACE(dev));
	skb_reset_network_header(skb);
	for (i = 0; i < n; i++) {
		const struct tbsim_rec *r = &recs[i];

		h = skb_put(skb, sizeof(*h));
		*h = r->w;
		h->len = cpu_to_le16(r->len);
		h->crc = cpu_to_le32(crc32_le(~0, r->data, r->len) ^
				     (r->w.flags & TBSIM_WIRE_CRC ? ~0U : 0));
		h->flags = 0;
		skb_put_data(skb, r->data, r->len);
	}
	skb->dev = dev;
	skb->protocol = htons(TBSIM_ETH_P);
	if (dev_hard_header(skb, dev, TBSIM_ETH_P, dev->broadcast, NULL, skb->len) < 0) {
		kfree_skb(skb);
		return -EINVAL;
	}
	return dev_queue_xmit(skb) == NET_XMIT_SUCCESS ? 0 : -ENOBUFS;
}

/* One packet of one record on cable @c (tbsim_cable_xmitv). Any context but hard IRQ. */
int tbsim_cable_xmit(struct tbsim_cable *c, const struct tbsim_wire *w,
		     const void *payload, size_t len)
{
	struct tbsim_rec r = { .w = *w, .data = payload, .len = len };
	int ret;

	rcu_read_lock();
	ret = tbsim_cable_xmitv(c, &r, 1);
	rcu_read_unlock();
	return ret;
}

/* Bytes of records one packet on cable @c may carry; rcu_read_lock held. */
size_t tbsim_cable_room(struct tbsim_cable *c)
{
	struct net_device *dev = rcu_dereference(c->ndev);

	return dev ? min_t(size_t, dev->mtu, TBSIM_BUNDLE_MAX) : 0;
}

int tbsim_cable_init(void)
{
	dev_add_pack(&cable_pt);
	return register_netdevice_notifier(&cable_nb);	/* replays existing NICs */
}

/* Every cable unplugged (the notifier replays the unregistrations). */
void tbsim_cable_exit(void)
{
	unregister_netdevice_notifier(&cable_nb);
	dev_remove_pack(&cable_pt);
	flush_workqueue(tbsim.ring_wq);
	rcu_barrier();
}
