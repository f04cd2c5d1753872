// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma: the device registry. The list of devices (tbrdma0, made at module
 * load, and those made over genl), their creation and deletion, and the
 * table of rail backends, whose hooks it runs at module load and unload,
 * when a device goes (a backend removes that device's rails) and when its
 * fabric key changes. Everything
 * runs under tbr_ctl_mutex; observers (link.h) hear of every device.
 */
#include <linux/mutex.h>

#include "tbrdma.h"
#include "ctl/ctl.h"

LIST_HEAD(tbr_devices);

static const struct tbr_backend *const *tbr_backends;
static unsigned int tbr_nbackends;

unsigned int tbr_ctl_backends(const struct tbr_backend *const **backends)
{
	*backends = tbr_backends;
	return tbr_nbackends;
}

int tbr_ctl_init(const struct tbr_backend *const *backends, unsigned int n)
{
	unsigned int i;
	int err;

	for (i = 0; i < n; i++) {
		err = backends[i]->init ? backends[i]->init() : 0;
		if (err)
			goto err;
	}
	tbr_backends = backends;
	tbr_nbackends = n;
	return 0;
err:
	while (i--)
		if (backends[i]->exit)
			backends[i]->exit();
	return err;
}

void tbr_ctl_start(void)
{
	unsigned int i;
	int err;

	for (i = 0; i < tbr_nbackends; i++) {
		if (!tbr_backends[i]->start)
			continue;
		err = tbr_backends[i]->start();
		if (err)
			pr_info("tbrdma: no %s rails (%d)\n", tbr_backends[i]->kind, err);
	}
}

void tbr_ctl_stop(void)
{
	unsigned int i = tbr_nbackends;

	while (i--)
		if (tbr_backends[i]->stop)
			tbr_backends[i]->stop();
}

void tbr_ctl_exit(void)
{
	unsigned int i = tbr_nbackends;

	while (i--)
		if (tbr_backends[i]->exit)
			tbr_backends[i]->exit();
	tbr_nbackends = 0;
}

/* tbr_ctl_mutex held: every backend removes the rails of @tdev. */
static void tbr_ctl_dev_rails_gone(struct tbr_dev *tdev)
{
	unsigned int i;

	for (i = 0; i < tbr_nbackends; i++)
		if (tbr_backends[i]->dev_gone)
			tbr_backends[i]->dev_gone(tdev);
}

void tbr_ctl_key_set(struct tbr_dev *tdev)
{
	unsigned int i;

	lockdep_assert_held(&tbr_ctl_mutex);
	for (i = 0; i < tbr_nbackends; i++)
		if (tbr_backends[i]->key_set)
			tbr_backends[i]->key_set(tdev);
}

struct tbr_dev *tbr_ctl_dev_find(const char *name)
{
	struct tbr_dev *tdev;

	lockdep_assert_held(&tbr_ctl_mutex);
	list_for_each_entry(tdev, &tbr_devices, rails.node)
		if (!strcmp(tbr_dev_name(tdev), name))
			return tdev;
	return NULL;
}

/* The lowest slot no device has (0 is the host device's). */
static unsigned int tbr_ctl_free_slot(bool host)
{
	unsigned int slot = host ? 0 : 1;
	struct tbr_dev *tdev;

again:
	list_for_each_entry(tdev, &tbr_devices, rails.node) {
		if (tdev->rails.slot == slot) {
			slot++;
			goto again;
		}
	}
	return slot;
}

struct tbr_dev *tbr_ctl_dev_new(bool host, const char *name)
{
	unsigned int slot = tbr_ctl_free_slot(host);
	struct tbr_dev *tdev;

	lockdep_assert_held(&tbr_ctl_mutex);
	tdev = tbr_dev_create(slot, name);
	if (IS_ERR(tdev))
		return tdev;
	INIT_LIST_HEAD(&tdev->rails.links);
	tbr_route_init(tdev);
	tdev->rails.host = host;
	tdev->rails.slot = slot;
	list_add_tail(&tdev->rails.node, &tbr_devices);
	tbr_link_notify_dev(tdev, TBR_OBS_NEW);
	return tdev;
}

int tbr_ctl_dev_del(struct tbr_dev *tdev)
{
	lockdep_assert_held(&tbr_ctl_mutex);
	tbr_dev_unregister(tdev);
	tdev->rails.dying = true;
	tbr_ctl_dev_rails_gone(tdev);
	if (WARN_ON(!list_empty(&tdev->rails.links)))
		return -EBUSY;
	tbr_route_flush(tdev);		/* its routed links go with the rails */
	tbr_link_auth_release(tdev);
	list_del(&tdev->rails.node);
	tbr_link_notify_dev(tdev, TBR_OBS_DEL);
	tbr_dev_destroy(tdev);
	return 0;
}

/*
 * Unload, before any rail goes: unregister every ib_device, so the kernel
 * ULPs bound to it (nvme-rdma, nvmet-rdma, rpcrdma: the RDMA core's client
 * remove callbacks) shut down over rails that still carry their last
 * commands, rather than waiting for them to time out.
 */
void tbr_ctl_unregister_all(void)
{
	struct tbr_dev *tdev;

	mutex_lock(&tbr_ctl_mutex);
	list_for_each_entry_reverse(tdev, &tbr_devices, rails.node)
		tbr_dev_unregister(tdev);
	mutex_unlock(&tbr_ctl_mutex);
}

void tbr_ctl_del_all(void)
{
	struct tbr_dev *tdev, *tmp;

	mutex_lock(&tbr_ctl_mutex);
	/* cables first (they join devices), then devices, newest first */
	list_for_each_entry(tdev, &tbr_devices, rails.node)
		tbr_ctl_dev_rails_gone(tdev);
	list_for_each_entry_safe_reverse(tdev, tmp, &tbr_devices, rails.node)
		tbr_ctl_dev_del(tdev);
	mutex_unlock(&tbr_ctl_mutex);
}
