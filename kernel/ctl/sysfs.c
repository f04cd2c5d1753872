// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: every link and rail as a device on the "tbrdma" bus, so a daemon
 * discovers emu, eth and Thunderbolt links the same way, through udev:
 *
 *   /sys/bus/tbrdma/devices/tbrdma0:link1          DEVTYPE=tbrdma_link
 *   /sys/bus/tbrdma/devices/tbrdma0:link1:rail0    DEVTYPE=tbrdma_rail
 *
 * (parents: /sys/devices/tbrdma/...). Attributes: device (the RDMA device
 * name), link_id, peer_guid, state (up/down), rails_up/rails (link),
 * rail_id, backend (rail). "add"/"remove" uevents come with the objects, a
 * "change" uevent with every rail state change (and on its link).
 * Context of everything here: process, tbr_ctl_mutex held.
 */
#include <linux/device.h>
#include <linux/slab.h>

#include "tbrdma.h"
#include "ctl/ctl.h"

struct tbr_sysdev {
	struct device dev;
	struct tbr_link *link;
	struct tbr_rail *rail;		/* NULL for a link */
};

static struct device *tbr_sysfs_root;

static struct bus_type tbr_bus = {
	.name = "tbrdma",
};

static struct tbr_sysdev *to_sysdev(struct device *dev)
{
	return container_of(dev, struct tbr_sysdev, dev);
}

static ssize_t device_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", tbr_dev_name(to_sysdev(dev)->link->tdev));
}
static DEVICE_ATTR_RO(device);

static ssize_t link_id_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_sysdev(dev)->link->id);
}
static DEVICE_ATTR_RO(link_id);

static ssize_t peer_guid_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%016llx\n", to_sysdev(dev)->link->peer_guid);
}
static DEVICE_ATTR_RO(peer_guid);

static ssize_t state_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct tbr_sysdev *sd = to_sysdev(dev);
	bool up = sd->rail ? READ_ONCE(sd->rail->up) : READ_ONCE(sd->link->rails_up) > 0;

	return sysfs_emit(buf, "%s\n", up ? "up" : "down");
}
static DEVICE_ATTR_RO(state);

static ssize_t rails_up_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(to_sysdev(dev)->link->rails_up));
}
static DEVICE_ATTR_RO(rails_up);

static ssize_t rails_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(to_sysdev(dev)->link->nrails));
}
static DEVICE_ATTR_RO(rails);

static ssize_t rail_id_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_sysdev(dev)->rail->id);
}
static DEVICE_ATTR_RO(rail_id);

static ssize_t backend_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_sysdev(dev)->rail->backend->kind);
}
static DEVICE_ATTR_RO(backend);

static struct attribute *tbr_link_attrs[] = {
	&dev_attr_device.attr,
	&dev_attr_link_id.attr,
	&dev_attr_peer_guid.attr,
	&dev_attr_state.attr,
	&dev_attr_rails_up.attr,
	&dev_attr_rails.attr,
	NULL,
};
ATTRIBUTE_GROUPS(tbr_link);

static struct attribute *tbr_rail_attrs[] = {
	&dev_attr_device.attr,
	&dev_attr_link_id.attr,
	&dev_attr_peer_guid.attr,
	&dev_attr_state.attr,
	&dev_attr_rail_id.attr,
	&dev_attr_backend.attr,
	NULL,
};
ATTRIBUTE_GROUPS(tbr_rail);

static void tbr_sysdev_release(struct device *dev)
{
	kfree(to_sysdev(dev));
}

static const struct device_type tbr_link_type = {
	.name = "tbrdma_link",
	.groups = tbr_link_groups,
	.release = tbr_sysdev_release,
};

static const struct device_type tbr_rail_type = {
	.name = "tbrdma_rail",
	.groups = tbr_rail_groups,
	.release = tbr_sysdev_release,
};

static struct device *tbr_sysdev_add(struct tbr_link *link, struct tbr_rail *rail)
{
	struct tbr_sysdev *sd;
	int err;

	if (!tbr_sysfs_root)
		return NULL;
	sd = kzalloc(sizeof(*sd), GFP_KERNEL);
	if (!sd)
		return NULL;
	sd->link = link;
	sd->rail = rail;
	device_initialize(&sd->dev);
	sd->dev.bus = &tbr_bus;
	sd->dev.type = rail ? &tbr_rail_type : &tbr_link_type;
	sd->dev.parent = tbr_sysfs_root;
	if (rail)
		err = dev_set_name(&sd->dev, "%s:link%u:rail%u",
				   tbr_dev_name(link->tdev), link->id, rail->id);
	else
		err = dev_set_name(&sd->dev, "%s:link%u",
				   tbr_dev_name(link->tdev), link->id);
	if (!err)
		err = device_add(&sd->dev);
	if (err) {
		pr_warn("tbrdma: no sysfs device for a link/rail (%d)\n", err);
		put_device(&sd->dev);
		return NULL;
	}
	return &sd->dev;
}

static void tbr_sysdev_del(void **priv)
{
	struct device *dev = *priv;

	if (dev) {
		device_unregister(dev);
		*priv = NULL;
	}
}

static void tbr_sysdev_change(struct device *dev)
{
	if (dev)
		kobject_uevent(&dev->kobj, KOBJ_CHANGE);
}

static void tbr_sysfs_link_event(struct tbr_link *link, enum tbr_obs_event ev)
{
	if (ev == TBR_OBS_NEW)
		link->obs_priv = tbr_sysdev_add(link, NULL);
	else if (ev == TBR_OBS_DEL)
		tbr_sysdev_del(&link->obs_priv);
}

/* a rail's state change is a change of its link too */
static void tbr_sysfs_rail_event(struct tbr_rail *rail, enum tbr_obs_event ev)
{
	switch (ev) {
	case TBR_OBS_NEW:
		rail->obs_priv = tbr_sysdev_add(rail->link, rail);
		break;
	case TBR_OBS_DEL:
		tbr_sysdev_del(&rail->obs_priv);
		break;
	case TBR_OBS_UP:
	case TBR_OBS_DOWN:
		tbr_sysdev_change(rail->obs_priv);
		tbr_sysdev_change(rail->link->obs_priv);
		break;
	}
}

static struct tbr_link_observer tbr_sysfs_observer = {
	.link_event = tbr_sysfs_link_event,
	.rail_event = tbr_sysfs_rail_event,
};

int tbr_sysfs_init(void)
{
	int err;

	err = bus_register(&tbr_bus);
	if (err)
		return err;
	tbr_sysfs_root = root_device_register("tbrdma");
	if (IS_ERR(tbr_sysfs_root)) {
		err = PTR_ERR(tbr_sysfs_root);
		tbr_sysfs_root = NULL;
		bus_unregister(&tbr_bus);
		return err;
	}
	tbr_link_observer_add(&tbr_sysfs_observer);
	return 0;
}

void tbr_sysfs_exit(void)
{
	tbr_link_observer_del(&tbr_sysfs_observer);
	root_device_unregister(tbr_sysfs_root);
	tbr_sysfs_root = NULL;
	bus_unregister(&tbr_bus);
}
