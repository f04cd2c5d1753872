// SPDX-License-Identifier: GPL-2.0
/*
 * tbsim: XDomains (one per cable), their discovery (UUID, then the property
 * block, re-read when the peer says its properties changed), services,
 * HopIDs and DMA paths. Mirrors drivers/thunderbolt/xdomain.c's contracts:
 * the XDomain device is added (uevent "add") only once the peer's properties
 * are read, a later change is a "change" uevent; a service device exists
 * exactly while the peer publishes its directory; HopIDs come from
 * [8, local_max_hopid] (input) and [8, remote_max_hopid] (output, the peer's
 * "maxhopid" property); enabling paths is a connection-manager operation
 * that talks to the host router over the control channel.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/version.h>

#include "tbsim.h"

#define XDP_RETRIES		10
#define XDP_TIMEOUT_MS		1000	/* XDOMAIN_DEFAULT_TIMEOUT */

struct xdp_uuid_resp {
	struct tbsim_xdp_hdr hdr;
	uuid_t src_uuid;
	u32 src_route_hi, src_route_lo;
};

struct xdp_props_req {
	struct tbsim_xdp_hdr hdr;
	uuid_t src_uuid, dst_uuid;
	u16 offset, reserved;
};

struct xdp_props_resp {
	struct tbsim_xdp_hdr hdr;
	uuid_t src_uuid, dst_uuid;
	u16 offset, data_length;
	u32 generation;
	u32 data[TBSIM_PROP_CHUNK];
};

struct xdp_changed {
	struct tbsim_xdp_hdr hdr;
	uuid_t src_uuid;
};

static_assert(sizeof(struct xdp_props_resp) <= TBSIM_CTL_MAX);

struct xdp_error {
	struct tbsim_xdp_hdr hdr;
	u32 error;
};

static struct tbsim_xd *to_sxd(struct tb_xdomain *xd)
{
	return container_of(xd, struct tbsim_xd, xd);
}

/* ---- sysfs and device types ---------------------------------------------- */

static ssize_t device_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%#x\n", tb_to_xdomain(dev)->device);
}
static DEVICE_ATTR_RO(device);

static ssize_t device_name_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%s\n", tb_to_xdomain(dev)->device_name ?: "");
}
static DEVICE_ATTR_RO(device_name);

static ssize_t vendor_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%#x\n", tb_to_xdomain(dev)->vendor);
}
static DEVICE_ATTR_RO(vendor);

static ssize_t vendor_name_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%s\n", tb_to_xdomain(dev)->vendor_name ?: "");
}
static DEVICE_ATTR_RO(vendor_name);

static ssize_t maxhopid_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", tb_to_xdomain(dev)->remote_max_hopid);
}
static DEVICE_ATTR_RO(maxhopid);

static ssize_t unique_id_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%pUb\n", tb_to_xdomain(dev)->remote_uuid);
}
static DEVICE_ATTR_RO(unique_id);

static ssize_t speed_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u.0 Gb/s\n", tb_to_xdomain(dev)->link_speed);
}
static DEVICE_ATTR(rx_speed, 0444, speed_show, NULL);
static DEVICE_ATTR(tx_speed, 0444, speed_show, NULL);

static ssize_t lanes_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", container_of(tb_to_xdomain(dev), struct tbsim_xd, xd)->lanes);
}
static DEVICE_ATTR(rx_lanes, 0444, lanes_show, NULL);
static DEVICE_ATTR(tx_lanes, 0444, lanes_show, NULL);

static struct attribute *xd_attrs[] = {
	&dev_attr_device.attr, &dev_attr_device_name.attr, &dev_attr_maxhopid.attr,
	&dev_attr_rx_lanes.attr, &dev_attr_rx_speed.attr, &dev_attr_tx_lanes.attr,
	&dev_attr_tx_speed.attr, &dev_attr_unique_id.attr, &dev_attr_vendor.attr,
	&dev_attr_vendor_name.attr, NULL,
};
ATTRIBUTE_GROUPS(xd);

static bool tbsim_xd_connected(struct tbsim_xd *sxd);

static void xd_release(struct device *dev)
{
	struct tbsim_xd *sxd = to_sxd(tb_to_xdomain(dev));

	tb_property_free_dir(sxd->xd.remote_properties);
	ida_destroy(&sxd->xd.service_ids);
	ida_destroy(&sxd->xd.in_hopids);
	ida_destroy(&sxd->xd.out_hopids);
	kfree(sxd->xd.vendor_name);
	kfree(sxd->xd.device_name);
	kfree(sxd);
}

TBSIM_TYPE_CONST struct device_type tb_xdomain_type = {
	.name = "thunderbolt_xdomain",
	.groups = xd_groups,
	.release = xd_release,
};

#define SVC_ATTR(name, fmt)							\
static ssize_t name##_show(struct device *dev, struct device_attribute *a,	\
			   char *buf)						\
{										\
	return sysfs_emit(buf, fmt "\n", tb_to_service(dev)->name);		\
}										\
static DEVICE_ATTR_RO(name)

SVC_ATTR(key, "%s");
SVC_ATTR(prtcid, "%u");
SVC_ATTR(prtcvers, "%u");
SVC_ATTR(prtcrevs, "%u");
SVC_ATTR(prtcstns, "0x%08x");

static int svc_modalias(struct tb_service *svc, char *buf, size_t size)
{
	return snprintf(buf, size, "tbsvc:k%sp%08Xv%08Xr%08X", svc->key,
			svc->prtcid, svc->prtcvers, svc->prtcrevs);
}

static ssize_t modalias_show(struct device *dev, struct device_attribute *a, char *buf)
{
	char m[64];

	svc_modalias(tb_to_service(dev), m, sizeof(m));
	return sysfs_emit(buf, "%s\n", m);
}
static DEVICE_ATTR_RO(modalias);

static struct attribute *svc_attrs[] = {
	&dev_attr_key.attr, &dev_attr_modalias.attr, &dev_attr_prtcid.attr,
	&dev_attr_prtcvers.attr, &dev_attr_prtcrevs.attr, &dev_attr_prtcstns.attr,
	NULL,
};
ATTRIBUTE_GROUPS(svc);

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
static int svc_uevent(const struct device *dev, struct kobj_uevent_env *env)
#else
static int svc_uevent(struct device *dev, struct kobj_uevent_env *env)
#endif
{
	char m[64];

	svc_modalias(container_of(dev, struct tb_service, dev), m, sizeof(m));
	return add_uevent_var(env, "MODALIAS=%s", m);
}

static void svc_release(struct device *dev)
{
	struct tb_service *svc = tb_to_service(dev);
	struct tb_xdomain *xd = tb_service_parent(svc);

	ida_free(&xd->service_ids, svc->id);
	kfree(svc->key);
	kfree(svc);
}

TBSIM_TYPE_CONST struct device_type tb_service_type = {
	.name = "thunderbolt_service",
	.groups = svc_groups,
	.uevent = svc_uevent,
	.release = svc_release,
};

/* ---- services ------------------------------------------------------------- */

static u32 dir_value(struct tb_property_dir *dir, const char *key)
{
	struct tb_property *p = tb_property_find(dir, key, TB_PROPERTY_TYPE_VALUE);

	return p ? p->value.immediate : 0;
}

static int svc_remove_stale(struct device *dev, void *data)
{
	struct tb_property_dir *root = data;
	struct tb_service *svc;
	struct tb_property *p;

	if (!tb_is_service(dev))
		return 0;
	svc = tb_to_service(dev);
	p = root ? tb_property_find(root, svc->key, TB_PROPERTY_TYPE_DIRECTORY) : NULL;
	if (!p || dir_value(p->value.dir, "prtcid") != svc->prtcid ||
	    dir_value(p->value.dir, "prtcvers") != svc->prtcvers ||
	    dir_value(p->value.dir, "prtcrevs") != svc->prtcrevs ||
	    dir_value(p->value.dir, "prtcstns") != svc->prtcstns)
		device_unregister(dev);
	return 0;
}

static int svc_match_key(struct device *dev, void *key)
{
	return tb_is_service(dev) && !strcmp(tb_to_service(dev)->key, key);
}

/* enumerate_services(): a device per directory of the peer's properties */
static void svc_enumerate(struct tbsim_xd *sxd)
{
	struct tb_xdomain *xd = &sxd->xd;
	struct tb_property *p = NULL;
	struct tb_service *svc;
	struct device *dev;
	int id;

	device_for_each_child_reverse(&xd->dev, xd->remote_properties, svc_remove_stale);
	while ((p = tb_property_get_next(xd->remote_properties, p))) {
		if (p->type != TB_PROPERTY_TYPE_DIRECTORY)
			continue;
		dev = device_find_child(&xd->dev, p->key, svc_match_key);
		if (dev) {
			put_device(dev);
			continue;
		}
		svc = kzalloc(sizeof(*svc), GFP_KERNEL);
		if (!svc)
			return;
		svc->key = kstrdup(p->key, GFP_KERNEL);
		id = ida_alloc(&xd->service_ids, GFP_KERNEL);
		if (!svc->key || id < 0) {
			if (id >= 0)
				ida_free(&xd->service_ids, id);
			kfree(svc->key);
			kfree(svc);
			return;
		}
		svc->id = id;
		svc->prtcid = dir_value(p->value.dir, "prtcid");
		svc->prtcvers = dir_value(p->value.dir, "prtcvers");
		svc->prtcrevs = dir_value(p->value.dir, "prtcrevs");
		svc->prtcstns = dir_value(p->value.dir, "prtcstns");
		svc->dev.bus = &tb_bus_type;
		svc->dev.type = &tb_service_type;
		svc->dev.parent = &xd->dev;
		dev_set_name(&svc->dev, "%s.%d", dev_name(&xd->dev), svc->id);
		if (device_register(&svc->dev)) {
			put_device(&svc->dev);
			return;
		}
	}
}

/* ---- discovery -------------------------------------------------------------- */

static void xdp_fill(struct tbsim_xd *sxd, struct tbsim_xdp_hdr *h, size_t size,
		     u32 type, u8 sn)
{
	memset(h, 0, sizeof(*h));
	h->route_hi = upper_32_bits(sxd->xd.route);
	h->route_lo = lower_32_bits(sxd->xd.route);
	h->length_sn = ((size - 12) / 4) & TBSIM_LENGTH_MASK;
	h->length_sn |= ((u32)sn << TBSIM_SN_SHIFT) & TBSIM_SN_MASK;
	uuid_copy(&h->uuid, tbsim_xdp_proto());
	h->type = type;
}

static int xdp_uuid(struct tbsim_xd *sxd)
{
	struct tbsim_xdp_hdr req;
	struct xdp_uuid_resp res;
	int ret;

	xdp_fill(sxd, &req, sizeof(req), XDP_UUID_REQUEST, sxd->sn++);
	memset(&res, 0, sizeof(res));
	ret = tb_xdomain_request(&sxd->xd, &req, sizeof(req), TB_CFG_PKG_XDOMAIN_REQ,
				 &res, sizeof(res), TB_CFG_PKG_XDOMAIN_RESP, XDP_TIMEOUT_MS);
	if (ret)
		return ret;
	if (res.hdr.type != XDP_UUID_RESPONSE)
		return -EIO;
	if (uuid_equal(&res.src_uuid, &tbsim.uuid))
		return -ELOOP;	/* a loop back to ourselves */
	uuid_copy(&sxd->ruuid, &res.src_uuid);
	return 0;
}

/* Reads the peer's whole property block; *gen its generation. */
static int xdp_properties(struct tbsim_xd *sxd, u32 **block, size_t *len, u32 *gen)
{
	struct xdp_props_req req;
	struct xdp_props_resp *res;
	u32 *data = NULL;
	size_t total = 0, off = 0;
	int ret = 0;

	res = kzalloc(sizeof(*res), GFP_KERNEL);
	if (!res)
		return -ENOMEM;
	do {
		xdp_fill(sxd, &req.hdr, sizeof(req), XDP_PROPERTIES_REQUEST, sxd->sn++);
		uuid_copy(&req.src_uuid, &tbsim.uuid);
		uuid_copy(&req.dst_uuid, &sxd->ruuid);
		req.offset = off;
		req.reserved = 0;
		ret = tb_xdomain_request(&sxd->xd, &req, sizeof(req), TB_CFG_PKG_XDOMAIN_REQ,
					 res, sizeof(*res), TB_CFG_PKG_XDOMAIN_RESP,
					 XDP_TIMEOUT_MS);
		if (ret)
			break;
		if (res->hdr.type != XDP_PROPERTIES_RESPONSE || res->offset != off ||
		    !res->data_length || res->data_length > 500 ||
		    (data && (res->data_length != total || res->generation != *gen))) {
			ret = -EIO;
			break;
		}
		if (!data) {
			total = res->data_length;
			*gen = res->generation;
			data = kcalloc(total, 4, GFP_KERNEL);
			if (!data) {
				ret = -ENOMEM;
				break;
			}
		}
		memcpy(&data[off], res->data, min_t(size_t, total - off, TBSIM_PROP_CHUNK) * 4);
		off += min_t(size_t, total - off, TBSIM_PROP_CHUNK);
	} while (off < total);
	kfree(res);
	if (ret) {
		kfree(data);
		return ret;
	}
	*block = data;
	*len = total;
	return 0;
}

static void xd_update_identity(struct tbsim_xd *sxd)
{
	struct tb_xdomain *xd = &sxd->xd;
	struct tb_property_dir *dir = xd->remote_properties;
	struct tb_property *p;

	xd->vendor = dir_value(dir, "vendorid");
	xd->device = dir_value(dir, "deviceid");
	p = tb_property_find(dir, "vendorid", TB_PROPERTY_TYPE_TEXT);
	kfree(xd->vendor_name);
	xd->vendor_name = p ? kstrdup(p->value.text, GFP_KERNEL) : NULL;
	p = tb_property_find(dir, "deviceid", TB_PROPERTY_TYPE_TEXT);
	kfree(xd->device_name);
	xd->device_name = p ? kstrdup(p->value.text, GFP_KERNEL) : NULL;
	xd->remote_max_hopid = dir_value(dir, "maxhopid") ?: TBSIM_MAX_HOPID;
}

/*
 * The discovery state machine (process context, system_long_wq): the
 * peer's UUID (retried while the peer's stand-in is not there yet), then
 * its properties; the device is added with the first set, services follow.
 */
static void disc_work_fn(struct work_struct *work)
{
	struct tbsim_xd *sxd = container_of(work, struct tbsim_xd, disc_work.work);
	struct tb_property_dir *dir;
	size_t len = 0;
	u32 *block = NULL, gen = 0;
	int ret;

	if (!sxd->have_uuid) {
		ret = xdp_uuid(sxd);
		if (ret) {
			if (!READ_ONCE(sxd->gone))
				queue_delayed_work(system_long_wq, &sxd->disc_work, HZ);
			return;
		}
		if (!tbsim_xd_connected(sxd))
			return;
		/*
		 * As the real handshake does: tell the peer our properties
		 * changed, so a directory registered before this link came up
		 * is seen there.
		 */
		sxd->changed_retries = 0;
		mod_delayed_work(system_long_wq, &sxd->changed_work, 0);
	}
	ret = xdp_properties(sxd, &block, &len, &gen);
	dir = ret ? NULL : tb_property_parse_dir(block, len);
	kfree(block);
	if (!dir) {
		if (sxd->disc_retries++ < XDP_RETRIES && !READ_ONCE(sxd->gone))
			queue_delayed_work(system_long_wq, &sxd->disc_work,
					   msecs_to_jiffies(XDP_TIMEOUT_MS));
		else
			dev_warn(&tbsim.host, "%s: reading the peer's properties failed: %d\n",
				 dev_name(&sxd->xd.dev), ret ?: -EBADMSG);
		return;
	}
	sxd->disc_retries = 0;
	mutex_lock(&sxd->xd.lock);
	/*
	 * Only a newer generation replaces what we have, as
	 * tb_xdomain_get_properties() decides (a plain u32 "<=", wrap
	 * included: the peer's first generation is random).
	 */
	if (sxd->added && gen <= sxd->remote_gen) {
		mutex_unlock(&sxd->xd.lock);
		tb_property_free_dir(dir);
		return;
	}
	tb_property_free_dir(sxd->xd.remote_properties);
	sxd->xd.remote_properties = dir;
	sxd->remote_gen = gen;
	xd_update_identity(sxd);
	mutex_unlock(&sxd->xd.lock);
	if (!sxd->added) {
		if (device_add(&sxd->xd.dev)) {
			dev_err(&sxd->xd.dev, "failed to add XDomain device\n");
			return;
		}
		sxd->added = true;
		dev_info(&sxd->xd.dev, "new host found, vendor=%#x device=%#x\n",
			 sxd->xd.vendor, sxd->xd.device);
		if (sxd->xd.vendor_name && sxd->xd.device_name)
			dev_info(&sxd->xd.dev, "%s %s\n", sxd->xd.vendor_name,
				 sxd->xd.device_name);
	} else {
		kobject_uevent(&sxd->xd.dev.kobj, KOBJ_CHANGE);
	}
	svc_enumerate(sxd);
}

/* Tell the peer our properties changed (retried as the real core does). */
static void changed_work_fn(struct work_struct *work)
{
	struct tbsim_xd *sxd = container_of(work, struct tbsim_xd, changed_work.work);
	struct xdp_changed req;
	struct tbsim_xdp_hdr res;
	int ret;

	if (!sxd->have_uuid || READ_ONCE(sxd->gone))
		return;
	xdp_fill(sxd, &req.hdr, sizeof(req), XDP_PROPERTIES_CHANGED_REQUEST, sxd->sn++);
	uuid_copy(&req.src_uuid, &tbsim.uuid);
	ret = tb_xdomain_request(&sxd->xd, &req, sizeof(req), TB_CFG_PKG_XDOMAIN_REQ,
				 &res, sizeof(res), TB_CFG_PKG_XDOMAIN_RESP, XDP_TIMEOUT_MS);
	if ((ret || res.type != XDP_PROPERTIES_CHANGED_RESPONSE) &&
	    sxd->changed_retries++ < XDP_RETRIES)
		queue_delayed_work(system_long_wq, &sxd->changed_work,
				   msecs_to_jiffies(XDP_TIMEOUT_MS));
}

void tbsim_xd_properties_changed(void)
{
	struct tbsim_cable *c;

	mutex_lock(&tbsim.lock);
	list_for_each_entry(c, &tbsim.cables, node) {
		if (!c->sxd)
			continue;
		c->sxd->changed_retries = 0;
		mod_delayed_work(system_long_wq, &c->sxd->changed_work, 0);
	}
	mutex_unlock(&tbsim.lock);
}

static void xdp_send(struct tbsim_xd *sxd, void *pkt, size_t size)
{
	if (tb_xdomain_response(&sxd->xd, pkt, size, TB_CFG_PKG_XDOMAIN_RESP))
		dev_dbg(&tbsim.host, "XDomain response not sent\n");
}

/*
 * An XDomain discovery request from the control worker (tbsim.lock not
 * held). Answered from the local property block; a PROPERTIES_CHANGED
 * request makes us re-read the peer's properties.
 */
void tbsim_xdp_request(const void *buf, size_t size)
{
	const struct tbsim_xdp_hdr *h = buf;
	u64 route = ((u64)(h->route_hi & ~BIT(31)) << 32) | h->route_lo;
	u8 sn = (h->length_sn & TBSIM_SN_MASK) >> TBSIM_SN_SHIFT;
	struct tbsim_cable *c;
	struct tbsim_xd *sxd = NULL;
	union {
		struct xdp_uuid_resp u;
		struct xdp_props_resp p;
		struct tbsim_xdp_hdr h;
		struct xdp_error e;
	} *r;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return;
	mutex_lock(&tbsim.lock);
	list_for_each_entry(c, &tbsim.cables, node)
		if (c->sxd && c->sxd->xd.route == route)
			sxd = c->sxd;
	if (!sxd)
		goto out;
	switch (h->type) {
	case XDP_UUID_REQUEST:
		xdp_fill(sxd, &r->u.hdr, sizeof(r->u), XDP_UUID_RESPONSE, sn);
		uuid_copy(&r->u.src_uuid, &tbsim.uuid);
		r->u.src_route_hi = upper_32_bits(sxd->xd.route);
		r->u.src_route_lo = lower_32_bits(sxd->xd.route);
		xdp_send(sxd, &r->u, sizeof(r->u));
		break;
	case XDP_PROPERTIES_REQUEST: {
		const struct xdp_props_req *q = buf;
		size_t n;

		if (size < sizeof(*q) || !uuid_equal(&q->dst_uuid, &tbsim.uuid) ||
		    !tbsim.block || q->offset >= tbsim.block_len) {
			xdp_fill(sxd, &r->e.hdr, sizeof(r->e), XDP_ERROR_RESPONSE, sn);
			r->e.error = 1;
			xdp_send(sxd, &r->e, sizeof(r->e));
			break;
		}
		n = min_t(size_t, tbsim.block_len - q->offset, TBSIM_PROP_CHUNK);
		xdp_fill(sxd, &r->p.hdr, sizeof(r->p), XDP_PROPERTIES_RESPONSE, sn);
		uuid_copy(&r->p.src_uuid, &tbsim.uuid);
		uuid_copy(&r->p.dst_uuid, &q->src_uuid);
		r->p.offset = q->offset;
		r->p.data_length = tbsim.block_len;
		r->p.generation = tbsim.gen;
		memcpy(r->p.data, &tbsim.block[q->offset], n * 4);
		xdp_send(sxd, &r->p, sizeof(r->p));
		break;
	}
	case XDP_PROPERTIES_CHANGED_REQUEST:
		xdp_fill(sxd, &r->h, sizeof(r->h), XDP_PROPERTIES_CHANGED_RESPONSE, sn);
		xdp_send(sxd, &r->h, sizeof(r->h));
		if (sxd->have_uuid) {
			sxd->disc_retries = 0;
			mod_delayed_work(system_long_wq, &sxd->disc_work, 0);
		}
		break;
	default:
		xdp_fill(sxd, &r->e.hdr, sizeof(r->e), XDP_ERROR_RESPONSE, sn);
		r->e.error = 0;	/* ERROR_UNKNOWN_PACKET */
		xdp_send(sxd, &r->e, sizeof(r->e));
		break;
	}
out:
	mutex_unlock(&tbsim.lock);
	kfree(r);
}

/* ---- creation and unplug ------------------------------------------------------ */

/* A new XDomain behind cable @c; discovery starts. tbsim.lock held. */
struct tbsim_xd *tbsim_xd_create(struct tbsim_cable *c)
{
	struct tbsim_xd *sxd = kzalloc(sizeof(*sxd), GFP_KERNEL);
	struct tb_xdomain *xd;

	if (!sxd)
		return NULL;
	xd = &sxd->xd;
	sxd->cable = c;
	spin_lock_init(&sxd->paths_lock);
	INIT_DELAYED_WORK(&sxd->disc_work, disc_work_fn);
	INIT_DELAYED_WORK(&sxd->changed_work, changed_work_fn);
	xd->tb = tbsim.tb;
	xd->local_uuid = &tbsim.uuid;
	xd->route = c->port;
	xd->local_max_hopid = TBSIM_MAX_HOPID;
	xd->remote_max_hopid = TBSIM_MAX_HOPID;
	xd->link_speed = tbsim_speed;
	sxd->lanes = tbsim_lanes;
	if (c->port == READ_ONCE(tbsim_slow_port)) {
		xd->link_speed = READ_ONCE(tbsim_slow_speed);
		sxd->lanes = READ_ONCE(tbsim_slow_lanes) == 2 ? 2 : 1;
	}
	WRITE_ONCE(c->lanes, sxd->lanes);	/* its lanes pace its paths (ring.c) */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	xd->link_width = sxd->lanes == 2 ? TB_LINK_WIDTH_DUAL : TB_LINK_WIDTH_SINGLE;
#else
	xd->link_width = sxd->lanes;
#endif
	xd->link_usb4 = true;
	/*
	 * Software CM (tb.c tb_scan_xdomain()) allocates the XDomain with no
	 * remote UUID: tb_xdomain_alloc() sets needs_uuid and the driver asks
	 * the peer for it. The firmware (icm.c add_xdomain()) reports the
	 * remote UUID with the connection: needs_uuid stays false. Only
	 * icm_fr_xdomain_connected() sets link and depth (each cable its own
	 * physical port: tb_phy_port_from_link() differs per cable);
	 * icm_tr_xdomain_connected() passes link 0, depth 0.
	 */
	xd->needs_uuid = tbsim_fw_cm == TBSIM_CM_SW || tbsim_fw_cm_needs_uuid;
	if (tbsim_fw_cm == TBSIM_CM_ICM_FR) {
		xd->link = c->port;
		xd->depth = 1;
	}
	atomic_set(&xd->ntunnels, 0);
	mutex_init(&xd->lock);
	ida_init(&xd->service_ids);
	ida_init(&xd->in_hopids);
	ida_init(&xd->out_hopids);
	device_initialize(&xd->dev);
	xd->dev.parent = &tbsim.host;
	xd->dev.bus = &tb_bus_type;
	xd->dev.type = &tb_xdomain_type;
	dev_set_name(&xd->dev, "%u-%llx", tbsim.tb->index, xd->route);
	queue_delayed_work(system_long_wq, &sxd->disc_work, 0);
	return sxd;
}

static int svc_unregister(struct device *dev, void *data)
{
	if (tb_is_service(dev))
		device_unregister(dev);
	return 0;
}

/*
 * The XDomain goes: services, then the device, with tb->lock held across
 * it, as both connection managers do (tb.c tb_handle_hotplug(), icm.c
 * icm_handle_notification()), so service drivers' remove runs with
 * tb->lock held. @unplugged: its cable is gone. Software CM (tb.c
 * tb_handle_hotplug(), via switch.c, 6.1 and 6.12) sets is_unplugged first
 * (tb_xdomain_disable_paths() then takes no lock and does nothing, drivers
 * skip talking to the peer), removes services and the XDomain device
 * (tb_xdomain_remove()), then tears down every DMA path the drivers left
 * (__tb_disconnect_xdomain_paths(tb, xd, -1, -1, -1, -1)). The firmware CM
 * removes the XDomain on its "XDomain disconnected" event
 * (icm_tr_xdomain_disconnected(), icm_fr_xdomain_disconnected():
 * remove_xdomain(), tb_xdomain_remove()) and on a same-UUID replacement
 * without setting is_unplugged (only its suspend path,
 * icm_unplug_children(), does): drivers see a removal with is_unplugged
 * false. The real tb_xdomain_remove() logs "host disconnected". The
 * stand-in's discovery works (no counterpart in the kernel) are stopped
 * before tb->lock is taken: a discovery work may itself remove another
 * XDomain (a same-UUID replacement). Process context, no tbsim lock.
 */
static void tbsim_xd_remove(struct tbsim_xd *sxd, bool unplugged)
{
	struct tb *tb = sxd->xd.tb;

	WRITE_ONCE(sxd->gone, true);	/* no discovery, no new paths */
	cancel_delayed_work_sync(&sxd->disc_work);
	cancel_delayed_work_sync(&sxd->changed_work);
	mutex_lock(&tb->lock);
	if (unplugged && tbsim_fw_cm == TBSIM_CM_SW)
		WRITE_ONCE(sxd->xd.is_unplugged, true);
	tbsim_cm_removing();
	mutex_lock(&sxd->xd.lock);
	sxd->xd.removing = true;	/* as tb_xdomain_remove(), either CM */
	mutex_unlock(&sxd->xd.lock);
	WRITE_ONCE(sxd->cable, NULL);
	if (sxd->added) {
		device_for_each_child_reverse(&sxd->xd.dev, NULL, svc_unregister);
		dev_info(&sxd->xd.dev, "host disconnected\n");
		device_del(&sxd->xd.dev);
	}
	spin_lock_bh(&sxd->paths_lock);
	atomic_sub(sxd->npaths, &tbsim_cm_paths);
	sxd->npaths = 0;
	spin_unlock_bh(&sxd->paths_lock);
	mutex_unlock(&tb->lock);
	put_device(&sxd->xd.dev);
}

/* The cable is gone. Process context, no tbsim lock. */
void tbsim_xd_unplug(struct tbsim_xd *sxd)
{
	tbsim_xd_remove(sxd, true);
}

/*
 * Discovery learned the remote UUID of @sxd: with the firmware CM, its
 * "XDomain connected" event, which carries it. As icm_tr_xdomain_connected()
 * and icm_fr_xdomain_connected(): an XDomain with that remote UUID on
 * another port is removed (tb_xdomain_find_by_uuid(), remove_xdomain());
 * the firmware reports that cable's connection only once, so it stays
 * without an XDomain until its link drops and comes back
 * (cable->replaced). False if @sxd itself was replaced meanwhile (two
 * cables discovered at once: the first to get here wins). disc_work,
 * no tbsim lock held.
 */
static bool tbsim_xd_connected(struct tbsim_xd *sxd)
{
	struct tbsim_cable *c, *mine;
	struct tbsim_xd *old = NULL;

	mutex_lock(&tbsim.lock);
	mine = READ_ONCE(sxd->cable);
	if (!mine || mine->sxd != sxd) {
		mutex_unlock(&tbsim.lock);
		return false;
	}
	sxd->have_uuid = true;
	sxd->xd.remote_uuid = &sxd->ruuid;
	list_for_each_entry(c, &tbsim.cables, node) {
		if (tbsim_fw_cm == TBSIM_CM_SW || c == mine || !c->sxd ||
		    !c->sxd->have_uuid || !uuid_equal(&c->sxd->ruuid, &sxd->ruuid))
			continue;
		old = c->sxd;
		WRITE_ONCE(c->sxd, NULL);
		c->replaced = true;
		break;
	}
	mutex_unlock(&tbsim.lock);
	if (old) {
		dev_info(&tbsim.host,
			 "tbsim: firmware CM: the host behind XDomain %s connects again on port %u: %s removed\n",
			 dev_name(&old->xd.dev), mine->port, dev_name(&old->xd.dev));
		synchronize_net();
		tbsim_xd_remove(old, false);
	}
	return true;
}

struct tb_xdomain *tb_xdomain_find_by_uuid(struct tb *tb, const uuid_t *uuid)
{
	struct tb_xdomain *found = NULL;
	struct tbsim_cable *c;

	mutex_lock(&tbsim.lock);
	list_for_each_entry(c, &tbsim.cables, node)
		if (c->sxd && c->sxd->have_uuid && uuid_equal(&c->sxd->ruuid, uuid) && !found)
			found = tb_xdomain_get(&c->sxd->xd);
	mutex_unlock(&tbsim.lock);
	return found;
}

struct tb_xdomain *tb_xdomain_find_by_route(struct tb *tb, u64 route)
{
	struct tb_xdomain *found = NULL;
	struct tbsim_cable *c;

	mutex_lock(&tbsim.lock);
	list_for_each_entry(c, &tbsim.cables, node)
		if (c->sxd && c->sxd->xd.route == route && !found)
			found = tb_xdomain_get(&c->sxd->xd);
	mutex_unlock(&tbsim.lock);
	return found;
}

/* ---- HopIDs, paths, lanes ------------------------------------------------------ */

int tb_xdomain_alloc_in_hopid(struct tb_xdomain *xd, int hopid)
{
	if (hopid < 0)
		hopid = TBSIM_MIN_HOPID;
	if (hopid < TBSIM_MIN_HOPID || hopid > xd->local_max_hopid)
		return -EINVAL;
	hopid = ida_alloc_range(&xd->in_hopids, hopid, xd->local_max_hopid, GFP_KERNEL);
	if (hopid >= 0)
		atomic_inc(&tbsim_cm_in_hopids);
	return hopid;
}

int tb_xdomain_alloc_out_hopid(struct tb_xdomain *xd, int hopid)
{
	if (hopid < 0)
		hopid = TBSIM_MIN_HOPID;
	if (hopid < TBSIM_MIN_HOPID || hopid > xd->remote_max_hopid)
		return -EINVAL;
	hopid = ida_alloc_range(&xd->out_hopids, hopid, xd->remote_max_hopid, GFP_KERNEL);
	if (hopid >= 0)
		atomic_inc(&tbsim_cm_out_hopids);
	return hopid;
}

void tb_xdomain_release_in_hopid(struct tb_xdomain *xd, int hopid)
{
	ida_free(&xd->in_hopids, hopid);
	atomic_dec(&tbsim_cm_in_hopids);
}

void tb_xdomain_release_out_hopid(struct tb_xdomain *xd, int hopid)
{
	ida_free(&xd->out_hopids, hopid);
	atomic_dec(&tbsim_cm_out_hopids);
}

int tb_xdomain_lane_bonding_enable(struct tb_xdomain *xd)
{
	return container_of(xd, struct tbsim_xd, xd)->lanes == 2 ? 0 : -EOPNOTSUPP;
}

void tb_xdomain_lane_bonding_disable(struct tb_xdomain *xd)
{
}

/*
 * The connection manager sets up a DMA path pair: our TX ring to the
 * peer's input HopID @transmit_path, the peer's frames on @receive_path to
 * our RX ring. As xdomain.c tb_xdomain_enable_paths(): the CM's
 * approve_xdomain_paths, then xd->ntunnels++ on success; the host router is
 * programmed (software CM) or the firmware asked (ICM_APPROVE_XDOMAIN) over
 * the control channel. Only the software CM takes tb->lock (tb.c
 * tb_approve_xdomain_paths(), tb_disconnect_xdomain_paths()); icm.c's path
 * operations take only its request_lock, so a driver's remove that disables
 * paths while the ICM removes the XDomain under tb->lock does not block.
 *
 * Software CM (tb.c tb_approve_xdomain_paths()): a DMA tunnel per call,
 * any number per XDomain, each HopID and ring in at most one (-EBUSY); no
 * look at is_unplugged: paths enabled on an XDomain removed meanwhile are
 * a tunnel nobody tears down (counted, cm.c late_paths).
 * Firmware CM (icm.c icm_fr_approve_xdomain_paths() and
 * icm_tr_approve_xdomain_paths(), the same check): with xd->ntunnels >= 1
 * already, tb_warn "only one tunnel is supported by the firmware" and
 * -EOPNOTSUPP before asking the firmware, whichever driver holds that one
 * tunnel. Process context.
 */
int tb_xdomain_enable_paths(struct tb_xdomain *xd, int transmit_path,
			    int transmit_ring, int receive_path, int receive_ring)
{
	bool sw = tbsim_fw_cm == TBSIM_CM_SW;
	struct tbsim_xd *sxd = to_sxd(xd);
	struct tbsim_path *p;
	unsigned int i;
	int ret;

	if (transmit_path < TBSIM_MIN_HOPID || transmit_path > xd->remote_max_hopid ||
	    receive_path < TBSIM_MIN_HOPID || receive_path > xd->local_max_hopid ||
	    transmit_ring <= 0 || transmit_ring >= TBSIM_HOP_COUNT ||
	    receive_ring <= 0 || receive_ring >= TBSIM_HOP_COUNT)
		return -EINVAL;
	tbsim_fault_step(TBSIM_STEP_ENABLE_PATHS, NULL, 0);
	if (sw)
		mutex_lock(&xd->tb->lock);
	if (tbsim_fw_cm != TBSIM_CM_SW && atomic_read(&xd->ntunnels) >= 1) {
		dev_warn(&xd->tb->nhi->pdev->dev, "only one tunnel is supported by the firmware\n");
		ret = -EOPNOTSUPP;
		goto unlock;
	}
	if (READ_ONCE(xd->is_unplugged)) {
		atomic_inc(&tbsim_cm_late_paths);
		ret = 0;
		goto unlock;
	}
	ret = -ENODEV;
	if (READ_ONCE(sxd->gone))
		goto unlock;
	ret = tbsim_ctl_roundtrip();
	if (ret)
		goto unlock;
	spin_lock_bh(&sxd->paths_lock);
	ret = -EBUSY;
	if (sxd->npaths >= TBSIM_MAX_PATHS)
		goto out;
	for (i = 0; i < sxd->npaths; i++) {
		p = &sxd->paths[i];
		if (p->tx_hopid == transmit_path || p->rx_hopid == receive_path ||
		    p->tx_ring == transmit_ring || p->rx_ring == receive_ring)
			goto out;
	}
	p = &sxd->paths[sxd->npaths++];
	p->tx_hopid = transmit_path;
	p->tx_ring = transmit_ring;
	p->rx_hopid = receive_path;
	p->rx_ring = receive_ring;
	atomic_inc(&tbsim_cm_paths);
	ret = 0;
out:
	spin_unlock_bh(&sxd->paths_lock);
	if (!ret) {
		atomic_inc(&xd->ntunnels);
		tbsim_ring_credit_kick(receive_ring, false);	/* E2E: the peer's first credits */
	}
unlock:
	if (sw)
		mutex_unlock(&xd->tb->lock);
	if (!ret)
		tbsim_fault_step(TBSIM_STEP_PATHS_ON, NULL, 0);
	return ret;
}

static bool wild_eq(int want, int have)
{
	return want < 0 || want == have;
}

/*
 * As xdomain.c tb_xdomain_disable_paths(): the CM's
 * disconnect_xdomain_paths, then xd->ntunnels-- on success, whether or not
 * this caller's paths were on. Software CM (tb.c
 * tb_disconnect_xdomain_paths()): the tunnels matching the arguments (-1:
 * any). Firmware CM: the arguments are not used; icm_tr_disconnect_xdomain_paths()
 * tears down every DMA path of the XDomain (ICM_DISCONNECT_XDOMAIN, stages
 * 1 and 2), icm_fr_disconnect_xdomain_paths() every path of its physical
 * port (NHI mailbox DISCONNECT_PA/PB; a cable is a port here) and returns 0.
 * So under the firmware CM one driver's disable takes another driver's
 * tunnel down too. Process context.
 */
int tb_xdomain_disable_paths(struct tb_xdomain *xd, int transmit_path,
			     int transmit_ring, int receive_path, int receive_ring)
{
	struct tbsim_xd *sxd = to_sxd(xd);
	bool all = tbsim_fw_cm != TBSIM_CM_SW;
	int tx[TBSIM_MAX_PATHS], ret = 0;
	unsigned int i, n = 0;

	tbsim_fault_step(TBSIM_STEP_DISABLE_PATHS, NULL, 0);
	/*
	 * tb.c tb_disconnect_xdomain_paths(): nothing once unplugged (the CM
	 * removes every path itself after the services), else under tb->lock;
	 * the firmware CM (icm.c) does not take tb->lock.
	 */
	if (READ_ONCE(xd->is_unplugged))
		return 0;
	if (!all)
		mutex_lock(&xd->tb->lock);
	spin_lock_bh(&sxd->paths_lock);
	for (i = 0; i < sxd->npaths;) {
		struct tbsim_path *p = &sxd->paths[i];

		if (all ||
		    (wild_eq(transmit_path, p->tx_hopid) && wild_eq(transmit_ring, p->tx_ring) &&
		     wild_eq(receive_path, p->rx_hopid) && wild_eq(receive_ring, p->rx_ring))) {
			tx[n++] = p->tx_ring;
			*p = sxd->paths[--sxd->npaths];
			atomic_dec(&tbsim_cm_paths);
		} else {
			i++;
		}
	}
	spin_unlock_bh(&sxd->paths_lock);
	for (i = 0; i < n; i++) {
		/* its TX ring still streams into the peer's ingress hop going away */
		if (tbsim_ring_tx_busy(tx[i]))
			atomic_inc(&tbsim_cm_tx_busy);
	}
	if ((n || all) && !READ_ONCE(sxd->gone))
		ret = tbsim_ctl_roundtrip();
	if (!ret)
		atomic_dec(&xd->ntunnels);
	if (!all)
		mutex_unlock(&xd->tb->lock);
	return ret;
}

/* The RX ring for frames on @hopid from this XDomain's peer. Softirq. */
bool tbsim_xd_path_rx(struct tbsim_xd *sxd, int hopid, int *ring)
{
	unsigned int i;
	bool ok = false;

	spin_lock(&sxd->paths_lock);
	for (i = 0; i < sxd->npaths && !ok; i++)
		if (sxd->paths[i].rx_hopid == hopid) {
			*ring = sxd->paths[i].rx_ring;
			ok = true;
		}
	spin_unlock(&sxd->paths_lock);
	return ok;
}

/* Our TX ring for credits the peer grants on @hopid (its input HopID). Softirq. */
bool tbsim_xd_path_credit(struct tbsim_xd *sxd, int hopid, int *ring)
{
	unsigned int i;
	bool ok = false;

	spin_lock(&sxd->paths_lock);
	for (i = 0; i < sxd->npaths && !ok; i++)
		if (sxd->paths[i].tx_hopid == hopid) {
			*ring = sxd->paths[i].tx_ring;
			ok = true;
		}
	spin_unlock(&sxd->paths_lock);
	return ok;
}

/*
 * The cable and HopID of the path our TX (@tx) or RX ring @ring is on: the
 * peer's input HopID, or ours. rcu_read_lock held.
 */
bool tbsim_xd_path_of(int ring, bool tx, struct tbsim_cable **cable, int *hopid)
{
	struct tbsim_cable *c;
	unsigned int i;
	bool ok = false;

	list_for_each_entry_rcu(c, &tbsim.cables, node) {
		struct tbsim_xd *sxd = READ_ONCE(c->sxd);

		if (!sxd || READ_ONCE(c->gone))
			continue;
		spin_lock_bh(&sxd->paths_lock);
		for (i = 0; i < sxd->npaths && !ok; i++) {
			struct tbsim_path *p = &sxd->paths[i];

			if ((tx ? p->tx_ring : p->rx_ring) == ring) {
				*hopid = tx ? p->tx_hopid : p->rx_hopid;
				ok = true;
			}
		}
		spin_unlock_bh(&sxd->paths_lock);
		if (ok) {
			*cable = c;
			return true;
		}
	}
	return false;
}

/*
 * /sys/module/thunderbolt/parameters/paths: the DMA path pairs enabled, one
 * line each, with the lane of its cable its TX ring takes (ring.c
 * lane_take) (test-only: the real module shows them in debugfs at most).
 */
static int paths_get(char *buf, const struct kernel_param *kp)
{
	struct tbsim_cable *c;
	unsigned int i;
	int len = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(c, &tbsim.cables, node) {
		struct tbsim_xd *sxd = READ_ONCE(c->sxd);

		if (!sxd || READ_ONCE(c->gone))
			continue;
		spin_lock_bh(&sxd->paths_lock);
		for (i = 0; i < sxd->npaths; i++) {
			const struct tbsim_path *p = &sxd->paths[i];

			len += sysfs_emit_at(buf, len,
					     "%s tx_hopid=%d tx_ring=%d rx_hopid=%d rx_ring=%d lane=%u\n",
					     dev_name(&sxd->xd.dev), p->tx_hopid, p->tx_ring,
					     p->rx_hopid, p->rx_ring,
					     (p->tx_ring - 1) % clamp(c->lanes, 1U, 2U));
		}
		spin_unlock_bh(&sxd->paths_lock);
	}
	rcu_read_unlock();
	return len;
}

static const struct kernel_param_ops paths_ops = { .get = paths_get };
module_param_cb(paths, &paths_ops, NULL, 0444);
MODULE_PARM_DESC(paths, "DMA path pairs enabled per XDomain (read only)");
