// SPDX-License-Identifier: GPL-2.0
/*
 * tbsim: the thunderbolt bus, the domain (created when the PCI device that
 * plays the NHI probes: QEMU's "edu", 1234:11e8, as a real NHI creates its
 * domain), the host router "0-0" under it, service driver matching, and the
 * module. Without that PCI device the module loads and does nothing, as
 * thunderbolt.ko without a controller.
 */
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/version.h>

#include "tbsim.h"

unsigned int tbsim_lanes = 2;
module_param_named(lanes, tbsim_lanes, uint, 0444);
MODULE_PARM_DESC(lanes, "lanes of every cable's link: 1 or 2 (default 2)");
unsigned int tbsim_speed = 20;
module_param_named(speed, tbsim_speed, uint, 0444);
MODULE_PARM_DESC(speed, "link speed per lane in Gb/s (default 20, USB4 Gen 3)");
/*
 * A cable that trained lower than the hosts support (its EEPROM says so, or a
 * bad contact): the one plugged into lane adapter slow_port (1, 3, 5, ...: the
 * first, second, third cable) links at slow_speed Gb/s x slow_lanes. Read
 * when a cable's XDomain appears, so a change applies at its next plug.
 */
unsigned int tbsim_slow_port;
module_param_named(slow_port, tbsim_slow_port, uint, 0644);
MODULE_PARM_DESC(slow_port, "lane adapter of the cable that trains lower (0: none)");
unsigned int tbsim_slow_speed = 10;
module_param_named(slow_speed, tbsim_slow_speed, uint, 0644);
MODULE_PARM_DESC(slow_speed, "its link speed per lane in Gb/s (default 10, USB4 Gen 2)");
unsigned int tbsim_slow_lanes = 1;
module_param_named(slow_lanes, tbsim_slow_lanes, uint, 0644);
MODULE_PARM_DESC(slow_lanes, "its lanes: 1 or 2 (default 1)");
unsigned int tbsim_fw_cm;
module_param_named(fw_cm, tbsim_fw_cm, uint, 0444);
MODULE_PARM_DESC(fw_cm, "connection manager: 0 software (tb.c), 1 firmware as icm.c's older "
		 "controllers (icm_fr: xd->link set), 2 firmware as Titan Ridge and later "
		 "(icm_tr: xd->link 0); firmware: one DMA tunnel per XDomain");
bool tbsim_fw_cm_needs_uuid;
module_param_named(fw_cm_needs_uuid, tbsim_fw_cm_needs_uuid, bool, 0444);
MODULE_PARM_DESC(fw_cm_needs_uuid, "test only: with fw_cm, XDomains still get needs_uuid (as "
		 "the software CM's), so a driver cannot recognise the firmware CM from it");
unsigned int tbsim_e2e_window = TBSIM_E2E_WINDOW;
module_param_named(e2e_window, tbsim_e2e_window, uint, 0444);
MODULE_PARM_DESC(e2e_window, "most E2E credits one HopID has on the cable: 4.."
		 __stringify(TBSIM_E2E_WINDOW_MAX) " (default " __stringify(TBSIM_E2E_WINDOW)
		 "; more only on a lossless cable, ring.c)");
unsigned int tbsim_fault_drop, tbsim_fault_crc, tbsim_fault_overrun;
module_param_named(fault_drop, tbsim_fault_drop, uint, 0644);
MODULE_PARM_DESC(fault_drop, "lose every Nth transmitted ring frame (0: never)");
module_param_named(fault_crc, tbsim_fault_crc, uint, 0644);
MODULE_PARM_DESC(fault_crc, "every Nth transmitted ring frame arrives with a CRC error");
module_param_named(fault_overrun, tbsim_fault_overrun, uint, 0644);
MODULE_PARM_DESC(fault_overrun, "every Nth received ring frame reports an RX buffer overrun");

struct tbsim tbsim;

static const char * const tbsim_cm_name[] = {
	[TBSIM_CM_SW] = "software",
	[TBSIM_CM_ICM_FR] = "firmware (icm_fr: older controllers)",
	[TBSIM_CM_ICM_TR] = "firmware (icm_tr: Titan Ridge and later)",
};

/* ---- bus -------------------------------------------------------------------- */

static const struct tb_service_id *svc_match(const struct tb_service_id *id,
					     const struct tb_service *svc)
{
	for (; id->match_flags; id++) {
		if ((id->match_flags & TBSVC_MATCH_PROTOCOL_KEY) &&
		    strcmp(id->protocol_key, svc->key))
			continue;
		if ((id->match_flags & TBSVC_MATCH_PROTOCOL_ID) &&
		    id->protocol_id != svc->prtcid)
			continue;
		if ((id->match_flags & TBSVC_MATCH_PROTOCOL_VERSION) &&
		    id->protocol_version != svc->prtcvers)
			continue;
		if ((id->match_flags & TBSVC_MATCH_PROTOCOL_REVISION) &&
		    id->protocol_revision != svc->prtcrevs)
			continue;
		return id;
	}
	return NULL;
}

static const struct tb_service_driver *to_sdrv(const struct device_driver *drv)
{
	return container_of(drv, struct tb_service_driver, driver);
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
static int tb_bus_match(struct device *dev, const struct device_driver *drv)
#else
static int tb_bus_match(struct device *dev, struct device_driver *drv)
#endif
{
	const struct tb_service_driver *sd = to_sdrv(drv);

	if (!tb_is_service(dev) || !sd->id_table)
		return 0;
	return !!svc_match(sd->id_table, tb_to_service(dev));
}

static int tb_bus_probe(struct device *dev)
{
	struct tb_service *svc = tb_to_service(dev);
	const struct tb_service_driver *sd = to_sdrv(dev->driver);

	return sd->probe(svc, svc_match(sd->id_table, svc));
}

static void tb_bus_remove(struct device *dev)
{
	const struct tb_service_driver *sd = to_sdrv(dev->driver);

	if (sd->remove)
		sd->remove(tb_to_service(dev));
}

static void tb_bus_shutdown(struct device *dev)
{
	const struct tb_service_driver *sd;

	if (!dev->driver || !tb_is_service(dev))
		return;
	sd = to_sdrv(dev->driver);
	if (sd->shutdown)
		sd->shutdown(tb_to_service(dev));
}

TBSIM_TYPE_CONST struct bus_type tb_bus_type = {
	.name = "thunderbolt",
	.match = tb_bus_match,
	.probe = tb_bus_probe,
	.remove = tb_bus_remove,
	.shutdown = tb_bus_shutdown,
};

int tb_register_service_driver(struct tb_service_driver *drv)
{
	drv->driver.bus = &tb_bus_type;
	return driver_register(&drv->driver);
}

void tb_unregister_service_driver(struct tb_service_driver *drv)
{
	driver_unregister(&drv->driver);
}

/* ---- domain and host router --------------------------------------------------- */

static ssize_t security_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%s\n", tbsim_fw_cm ? "user" : "none");
}
static DEVICE_ATTR_RO(security);

static ssize_t iommu_dma_protection_show(struct device *dev, struct device_attribute *a,
					 char *buf)
{
	return sysfs_emit(buf, "0\n");
}
static DEVICE_ATTR_RO(iommu_dma_protection);

static ssize_t deauthorization_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "0\n");
}
static DEVICE_ATTR_RO(deauthorization);

/*
 * boot_acl: domain.c shows it only when the connection manager has boot ACL
 * entries (tb->nboot_acl, and only icm.c sets it: Titan Ridge's firmware
 * reports 16), one comma-separated UUID per entry, empty ones "". The
 * stand-in's ACL is empty and read-only (nothing is pre-approved at boot).
 */
#define TBSIM_NBOOT_ACL 16

static ssize_t boot_acl_show(struct device *dev, struct device_attribute *a, char *buf)
{
	int i, n = 0;

	for (i = 0; i < TBSIM_NBOOT_ACL; i++)
		n += sysfs_emit_at(buf, n, "%s", i < TBSIM_NBOOT_ACL - 1 ? "," : "\n");
	return n;
}
static DEVICE_ATTR_RO(boot_acl);

static struct attribute *domain_attrs[] = {
	&dev_attr_security.attr, &dev_attr_iommu_dma_protection.attr,
	&dev_attr_deauthorization.attr, &dev_attr_boot_acl.attr, NULL,
};

static umode_t domain_attr_is_visible(struct kobject *kobj, struct attribute *attr, int n)
{
	if (attr == &dev_attr_boot_acl.attr && tbsim_fw_cm != TBSIM_CM_ICM_TR)
		return 0;
	return attr->mode;
}

static const struct attribute_group domain_group = {
	.attrs = domain_attrs,
	.is_visible = domain_attr_is_visible,
};
__ATTRIBUTE_GROUPS(domain);

static void domain_release(struct device *dev)
{
	kfree(container_of(dev, struct tb, dev));
}

static struct device_type tb_domain_type = {
	.name = "thunderbolt_domain",
	.groups = domain_groups,
	.release = domain_release,
};

static ssize_t unique_id_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%pUb\n", &tbsim.uuid);
}
static DEVICE_ATTR_RO(unique_id);

static ssize_t generation_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "4\n");
}
static DEVICE_ATTR_RO(generation);

static struct attribute *host_attrs[] = {
	&dev_attr_unique_id.attr, &dev_attr_generation.attr, NULL,
};
ATTRIBUTE_GROUPS(host);

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
static int host_uevent(const struct device *dev, struct kobj_uevent_env *env)
#else
static int host_uevent(struct device *dev, struct kobj_uevent_env *env)
#endif
{
	return add_uevent_var(env, "USB4_TYPE=host");
}

static void host_release(struct device *dev)
{
}

static struct device_type tb_switch_type = {
	.name = "thunderbolt_device",
	.groups = host_groups,
	.uevent = host_uevent,
	.release = host_release,
};

/* The NHI probed: domain0 and its host router. Process context. */
int tbsim_domain_add(struct pci_dev *pdev)
{
	struct tb_nhi *nhi = &tbsim.nhi;
	struct tb *tb;
	int ret;

	tb = kzalloc(sizeof(*tb), GFP_KERNEL);
	if (!tb)
		return -ENOMEM;
	nhi->pdev = pdev;
	nhi->hop_count = TBSIM_HOP_COUNT;
	nhi->tx_rings = kcalloc(TBSIM_HOP_COUNT, sizeof(*nhi->tx_rings), GFP_KERNEL);
	nhi->rx_rings = kcalloc(TBSIM_HOP_COUNT, sizeof(*nhi->rx_rings), GFP_KERNEL);
	if (!nhi->tx_rings || !nhi->rx_rings) {
		ret = -ENOMEM;
		goto err_rings;
	}
	mutex_init(&tb->lock);
	tb->nhi = nhi;
	tb->index = 0;
	tb->security_level = tbsim_fw_cm ? TB_SECURITY_USER : TB_SECURITY_NONE;
	device_initialize(&tb->dev);
	tb->dev.parent = &pdev->dev;
	tb->dev.bus = &tb_bus_type;
	tb->dev.type = &tb_domain_type;
	dev_set_name(&tb->dev, "domain%d", tb->index);
	ret = device_add(&tb->dev);
	if (ret)
		goto err_dev;
	device_initialize(&tbsim.host);
	tbsim.host.parent = &tb->dev;
	tbsim.host.bus = &tb_bus_type;
	tbsim.host.type = &tb_switch_type;
	dev_set_name(&tbsim.host, "%d-0", tb->index);
	ret = device_add(&tbsim.host);
	if (ret)
		goto err_host;
	mutex_lock(&tbsim.lock);
	tbsim.tb = tb;
	mutex_unlock(&tbsim.lock);
	dev_info(&tb->dev, "tbsim: domain %pUb, %s connection manager, %u x %u Gb/s links\n",
		 &tbsim.uuid, tbsim_cm_name[tbsim_fw_cm], tbsim_lanes, tbsim_speed);
	return 0;

err_host:
	put_device(&tbsim.host);
	device_del(&tb->dev);
err_dev:
	put_device(&tb->dev);
	tb = NULL;
err_rings:
	kfree(nhi->tx_rings);
	kfree(nhi->rx_rings);
	nhi->tx_rings = nhi->rx_rings = NULL;
	kfree(tb);
	return ret;
}

/* Cables are gone already (tbsim_cable_exit). */
void tbsim_domain_remove(void)
{
	struct tb *tb = tbsim.tb;

	mutex_lock(&tbsim.lock);
	tbsim.tb = NULL;
	mutex_unlock(&tbsim.lock);
	spin_lock_irq(&tbsim.nhi.lock);
	tbsim.nhi.going_away = true;
	spin_unlock_irq(&tbsim.nhi.lock);
	device_unregister(&tbsim.host);
	device_unregister(&tb->dev);
	kfree(tbsim.nhi.tx_rings);
	kfree(tbsim.nhi.rx_rings);
	tbsim.nhi.tx_rings = tbsim.nhi.rx_rings = NULL;
}

/* ---- the NHI's PCI device -------------------------------------------------------- */

static int nhi_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int ret;

	if (tbsim.tb)
		return -EBUSY;	/* one domain */
	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	return tbsim_domain_add(pdev);
}

static void nhi_remove(struct pci_dev *pdev)
{
	if (tbsim.tb && tbsim.nhi.pdev == pdev)
		tbsim_domain_remove();
}

static const struct pci_device_id nhi_ids[] = {
	{ PCI_DEVICE(0x1234, 0x11e8) },	/* QEMU edu */
	{ },
};
/* as the real module's NHI ids: udev's coldplug loads the stand-in once it is installed */
MODULE_DEVICE_TABLE(pci, nhi_ids);

static struct pci_driver nhi_driver = {
	.name = "thunderbolt",
	.id_table = nhi_ids,
	.probe = nhi_probe,
	.remove = nhi_remove,
};

/* ---- module ------------------------------------------------------------------------- */

static int __init tbsim_init(void)
{
	int ret;

	mutex_init(&tbsim.lock);
	spin_lock_init(&tbsim.nhi.lock);
	INIT_LIST_HEAD(&tbsim.cables);
	INIT_LIST_HEAD(&tbsim.dirs);
	uuid_gen(&tbsim.uuid);
	/* xdomain.c tb_xdomain_init(): the first property block generation is random */
	tbsim.gen = get_random_u32();
	if (tbsim_lanes < 1 || tbsim_lanes > 2)
		tbsim_lanes = 2;
	if (tbsim_fw_cm > TBSIM_CM_ICM_TR) {
		pr_err("tbsim: fw_cm %u is not 0, 1 or 2\n", tbsim_fw_cm);
		return -EINVAL;
	}
	if (tbsim_e2e_window < 4 || tbsim_e2e_window > TBSIM_E2E_WINDOW_MAX) {
		pr_err("tbsim: e2e_window %u is outside 4..%d\n", tbsim_e2e_window,
		       TBSIM_E2E_WINDOW_MAX);
		return -EINVAL;
	}
	mutex_lock(&tbsim.lock);
	ret = tbsim_local_block_update();
	mutex_unlock(&tbsim.lock);
	if (ret)
		return ret;
	ret = -ENOMEM;
	tbsim.wq = alloc_ordered_workqueue("tbsim-ctl", 0);
	tbsim.ring_wq = alloc_workqueue("tbsim-ring", WQ_HIGHPRI, 0);
	if (!tbsim.wq || !tbsim.ring_wq)
		goto err_wq;
	tbsim_cm_init();
	ret = tbsim_ctl_init();
	if (ret)
		goto err_wq;
	ret = bus_register(&tb_bus_type);
	if (ret)
		goto err_ctl;
	ret = pci_register_driver(&nhi_driver);
	if (ret)
		goto err_bus;
	ret = tbsim_cable_init();
	if (ret)
		goto err_pci;
	pr_info("tbsim: Thunderbolt stand-in loaded (test only; cables are NICs)\n");
	return 0;

err_pci:
	pci_unregister_driver(&nhi_driver);
err_bus:
	bus_unregister(&tb_bus_type);
err_ctl:
	tbsim_ctl_exit();
err_wq:
	if (tbsim.ring_wq)
		destroy_workqueue(tbsim.ring_wq);
	if (tbsim.wq)
		destroy_workqueue(tbsim.wq);
	kfree(tbsim.block);
	return ret;
}
module_init(tbsim_init);

static void __exit tbsim_exit(void)
{
	tbsim_cm_exit();
	tbsim_cable_exit();
	pci_unregister_driver(&nhi_driver);
	bus_unregister(&tb_bus_type);
	tbsim_ctl_exit();
	destroy_workqueue(tbsim.ring_wq);
	destroy_workqueue(tbsim.wq);
	kfree(tbsim.block);
}
module_exit(tbsim_exit);

MODULE_DESCRIPTION("Test-only stand-in for the Thunderbolt/USB4 driver (tbrdma VM tests)");
MODULE_LICENSE("GPL");
