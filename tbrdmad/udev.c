// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * udev discovery (sd-device): at start the Thunderbolt XDomains and services (subsystem
 * "thunderbolt") and the kernel's tbrdma links (bus "tbrdma", DEVTYPE tbrdma_link) are enumerated
 * from sysfs, then followed with a udev monitor. discovery.c decides what a device is and keeps
 * the set; here only the sd-device glue. Any change of the set re-reads the kernel over genl and
 * runs a heavy sweep (debounced: one cable brings several devices at once). Without systemd-udevd
 * (VMs, containers) the monitor is there but silent: that is logged once, and the genl events
 * keep the daemon current; events flow as soon as udevd starts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-device.h>

#include "discovery.h"
#include "log.h"
#include "manager.h"
#include "sweep.h"
#include "udev.h"
#include "util.h"

#define HOTPLUG_DEBOUNCE_USEC 100000ULL

struct Udev {
	Manager *m;
	sd_device_monitor *monitor;
	sd_event_source *timer;		/* debounced re-sync + heavy sweep */
	uint64_t events;
	char state[160];
};

static const char *get_prop(void *ud, const char *key)
{
	sd_device *dev = ud;
	const char *v = NULL;

	if (!strcmp(key, "SUBSYSTEM"))
		(void)sd_device_get_subsystem(dev, &v);
	else if (!strcmp(key, "DEVTYPE"))
		(void)sd_device_get_devtype(dev, &v);
	else if (!strcmp(key, "SYSNAME"))
		(void)sd_device_get_sysname(dev, &v);
	else if (key[0] == '@')
		(void)sd_device_get_sysattr_value(dev, key + 1, &v);
	else
		(void)sd_device_get_property_value(dev, key, &v);
	return v;
}

static const char *kind_name(DiscKind k)
{
	switch (k) {
	case DISC_XDOMAIN: return "thunderbolt peer";
	case DISC_SERVICE: return "thunderbolt service";
	case DISC_LINK: return "link";
	}
	return "?";
}

static int hotplug_cb(sd_event_source *s, uint64_t usec, void *userdata)
{
	Udev *u = userdata;

	(void)s; (void)usec;
	log_info("udev: devices changed: re-reading the kernel, heavy sweep");
	if (manager_sync(u->m) >= 0)
		sweep_request(u->m->sweep);
	return 0;
}

static void hotplug(Udev *u)
{
	uint64_t now;

	sd_event_now(u->m->event, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(u->timer, now + HOTPLUG_DEBOUNCE_USEC);
	sd_event_source_set_enabled(u->timer, SD_EVENT_ONESHOT);
}

/* 1 if the set changed */
static int apply(Udev *u, sd_device *dev, DiscAction action, const char *verb)
{
	Discovery *d = &u->m->discovery;
	DiscDevice x;
	int r;

	r = disc_classify(get_prop, dev, &x);
	if (r == -EINVAL) {
		const char *n = NULL;

		(void)sd_device_get_syspath(dev, &n);
		log_warning("udev: ignoring %.200s: unexpected name or properties", n ? n : "?");
		return 0;
	}
	if (r <= 0)
		return 0;
	r = disc_apply(d, action, &x);
	if (r < 0)
		return log_warning_errno(r, "udev: %s: %m", x.name);
	if (r == 0) {
		log_debug("udev: %s %s %s: nothing new", verb, kind_name(x.kind), x.name);
		return 0;
	}
	switch (x.kind) {
	case DISC_XDOMAIN:
		/*
		 * Info once per peer (plugged, gone); its changes (a service
		 * of any protocol (un)registered over there) and the lack of a
		 * tbrdma service, which is normal until the peer's service
		 * device follows the XDomain's, at debug level.
		 */
		if (action == DISC_REMOVE)
			log_info("udev: thunderbolt peer %s gone", x.name);
		else if (action == DISC_CHANGE)
			log_debug("udev: thunderbolt peer %s changed", x.name);
		else
			log_info("udev: thunderbolt peer %s %s (%s %s, %s)", x.name, verb,
				 x.vendor_name, x.device_name, x.unique_id);
		if (action != DISC_REMOVE && !disc_xdomain_has_service(d, x.name))
			log_debug("udev: thunderbolt peer %s: no tbrdma service (yet)", x.name);
		break;
	case DISC_SERVICE:
		/* other protocols' services (thunderbolt-net's "network") at debug level */
		log_internal(x.ours ? LOG_INFO : LOG_DEBUG, 0,
			     "udev: thunderbolt service %s of peer %s %s%s", x.name, x.xdomain,
			     action == DISC_REMOVE ? "gone" : verb,
			     x.ours ? " (tbrdma)" : " (not tbrdma)");
		break;
	case DISC_LINK:
		log_info("udev: link %s %s%s", x.name, action == DISC_REMOVE ? "removed" : verb,
			 action == DISC_REMOVE ? "" : x.up ? " (up)" : " (down)");
		break;
	}
	return 1;
}

static int monitor_cb(sd_device_monitor *mon, sd_device *dev, void *userdata)
{
	Udev *u = userdata;
	sd_device_action_t a = _SD_DEVICE_ACTION_INVALID;
	DiscAction action;
	const char *verb;

	(void)mon;
	if (sd_device_get_action(dev, &a) < 0)
		return 0;
	switch (a) {
	case SD_DEVICE_ADD: action = DISC_ADD; verb = "added"; break;
	case SD_DEVICE_REMOVE: action = DISC_REMOVE; verb = "removed"; break;
	case SD_DEVICE_CHANGE: case SD_DEVICE_BIND: case SD_DEVICE_UNBIND: case SD_DEVICE_MOVE:
		action = DISC_CHANGE; verb = "changed"; break;
	default: return 0;
	}
	u->events++;
	if (apply(u, dev, action, verb) > 0)
		hotplug(u);
	return 0;
}

static int enumerate(Udev *u)
{
	_cleanup_(sd_device_enumerator_unrefp) sd_device_enumerator *e = NULL;
	int r, n = 0;

	r = sd_device_enumerator_new(&e);
	if (r >= 0)
		r = sd_device_enumerator_add_match_subsystem(e, "thunderbolt", true);
	if (r >= 0)
		r = sd_device_enumerator_add_match_subsystem(e, "tbrdma", true);
	if (r < 0)
		return r;
	for (sd_device *d = sd_device_enumerator_get_device_first(e); d;
	     d = sd_device_enumerator_get_device_next(e))
		n += apply(u, d, DISC_ADD, "found") > 0;
	return n;
}

int udev_start(Manager *m, Udev **ret)
{
	Udev *u = calloc(1, sizeof(*u));
	bool udevd;
	int r;

	*ret = NULL;
	if (!u)
		return -ENOMEM;
	u->m = m;
	r = sd_event_add_time(m->event, &u->timer, CLOCK_MONOTONIC, UINT64_MAX, 0, hotplug_cb, u);
	if (r < 0) {
		free(u);
		return log_error_errno(r, "udev: timer: %m");
	}
	sd_event_source_set_enabled(u->timer, SD_EVENT_OFF);
	*ret = u;

	/* monitor first, then enumerate: nothing falls between the two */
	r = sd_device_monitor_new(&u->monitor);
	if (r >= 0)
		r = sd_device_monitor_filter_add_match_subsystem_devtype(u->monitor, "thunderbolt", NULL);
	if (r >= 0)
		r = sd_device_monitor_filter_add_match_subsystem_devtype(u->monitor, "tbrdma",
									 "tbrdma_link");
	if (r >= 0)
		r = sd_device_monitor_attach_event(u->monitor, m->event);
	if (r >= 0)
		r = sd_device_monitor_start(u->monitor, monitor_cb, u);
	if (r < 0) {
		log_warning_errno(r, "udev: no device monitor (%m): hot-plug is followed through the "
				  "kernel's genl events only");
		snprintf(u->state, sizeof(u->state), "no monitor: %s", strerror(-r));
		u->monitor = sd_device_monitor_unref(u->monitor);
	} else {
		udevd = access("/run/udev/control", F_OK) == 0;
		if (!udevd)
			log_notice("udev: systemd-udevd is not running: no udev events until it starts; "
				   "hot-plug is followed through the kernel's genl events meanwhile");
	}
	r = enumerate(u);
	if (r < 0)
		log_warning_errno(r, "udev: enumerating devices: %m");
	else
		log_info("udev: %zu device(s) of interest found", m->discovery.n);
	return 0;
}

Udev *udev_free(Udev *u)
{
	if (!u)
		return NULL;
	sd_device_monitor_unref(u->monitor);
	sd_event_source_disable_unref(u->timer);
	free(u);
	return NULL;
}

void udev_info(const Udev *u, const char **state, uint64_t *events)
{
	*events = u ? u->events : 0;
	if (!u)
		*state = "off";
	else if (!u->monitor)
		*state = u->state;
	else	/* udevd may have started (or stopped) since */
		*state = access("/run/udev/control", F_OK) == 0 ? "monitoring" :
			 "monitoring (no udevd)";
}
