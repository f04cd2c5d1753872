// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The manager: owns the sd-event loop, the kernel connection and the model. The model is
 * refreshed by full dumps: on a timer (RefreshSec, for counters), soon after every kernel event
 * (debounced), after an event socket overrun, and when nlctrl announces the family. While the
 * family is absent (module not loaded) it retries every RetrySec and also reacts at once to
 * nlctrl's NEWFAMILY. READY=1 goes out after the first sync attempt, whatever its outcome: a
 * daemon without the module still serves its (empty) state.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "manager.h"
#include "protocol.h"
#include "sweep.h"
#include "udev.h"
#include "util.h"

#define EVENT_DEBOUNCE_USEC 20000ULL

static void update_status(Manager *m)
{
	char s[sizeof(m->status)];
	size_t lu = 0, ru = 0;

	if (!m->kernel_present) {
		snprintf(s, sizeof(s), "Waiting for the tbrdma kernel module (%.180s)",
			 m->kernel_error[0] ? m->kernel_error : "not connected");
	} else {
		for (size_t i = 0; i < m->model.n_links; i++)
			lu += m->model.links[i].up;
		for (size_t i = 0; i < m->model.n_rails; i++)
			ru += m->model.rails[i].up;
		snprintf(s, sizeof(s), "%zu device(s), %zu link(s) (%zu up), %zu of %zu rail(s) up",
			 m->model.n_devices, m->model.n_links, lu, ru, m->model.n_rails);
	}
	if (!m->ready) {
		m->ready = true;
		sd_notifyf(false, "READY=1\nSTATUS=%s", s);
		log_info("ready: %s", s);
	} else if (strcmp(s, m->status)) {
		sd_notifyf(false, "STATUS=%s", s);
		log_debug("status: %s", s);
	}
	snprintf(m->status, sizeof(m->status), "%s", s);
}

static void arm_sync(Manager *m, uint64_t delay, bool force)
{
	uint64_t now, when, cur = 0;
	int enabled = SD_EVENT_OFF;

	if (!m->sync_timer)
		return;
	sd_event_now(m->event, CLOCK_MONOTONIC, &now);
	when = now + delay;
	sd_event_source_get_enabled(m->sync_timer, &enabled);
	sd_event_source_get_time(m->sync_timer, &cur);
	if (!force && enabled != SD_EVENT_OFF && cur <= when)
		return;		/* an earlier sync is already due */
	sd_event_source_set_time(m->sync_timer, when);
	sd_event_source_set_enabled(m->sync_timer, SD_EVENT_ONESHOT);
}

static int kernel_io(sd_event_source *s, int fd, uint32_t revents, void *userdata);

static int attach_kernel_source(Manager *m)
{
	int fd = kernel_event_fd(&m->kernel), r;

	m->kernel_source = sd_event_source_disable_unref(m->kernel_source);
	if (fd < 0)
		return -ENOTCONN;
	r = sd_event_add_io(m->event, &m->kernel_source, fd, EPOLLIN, kernel_io, m);
	if (r < 0)
		return log_error_errno(r, "kernel event source: %m");
	return 0;
}

static void set_absent(Manager *m, int err, const char *why)
{
	if (m->kernel_present || !m->syncs)
		log_full_errno(m->kernel_present ? LOG_WARNING : LOG_NOTICE, err,
			       "kernel: %s", why);
	m->kernel_present = false;
	snprintf(m->kernel_error, sizeof(m->kernel_error), "%s", why);
	model_clear(&m->model);
}

int manager_sync(Manager *m)
{
	char msg[256] = "";
	int r;

	if (m->kernel_lost) {
		m->kernel_lost = false;
		r = kernel_disconnect(&m->kernel);
		if (r >= 0)
			r = attach_kernel_source(m);
		if (r < 0)
			log_error_errno(r, "re-opening the event socket: %m");
	}
	if (!m->kernel.req) {
		r = kernel_connect(&m->kernel, msg, sizeof(msg));
		if (r < 0) {
			set_absent(m, r, msg);
			goto out;
		}
	}
	r = kernel_dump(&m->kernel, &m->model, m->config.device, msg, sizeof(msg));
	if (r < 0) {
		char why[300];

		m->sync_errors++;
		snprintf(why, sizeof(why), "dump failed: %s%s%s", strerror(-r), msg[0] ? ": " : "", msg);
		set_absent(m, r, why);
		/* the socket may hold a half-read dump, or the family went: start over */
		m->kernel_lost = true;
		goto out;
	}
	/* what the cables trained at against what both ends showed (the peers' RAILS adverts) */
	model_flag_slow(&m->model, m->sweep ? sweep_peer_lane_mbps : NULL, m->sweep);
	if (!m->kernel_present)
		log_info("kernel: family %s present, %zu device(s), %zu link(s), %zu rail(s)%s%s",
			 m->config.family, m->model.n_devices, m->model.n_links, m->model.n_rails,
			 m->config.device ? " of " : "", m->config.device ? m->config.device : "");
	if (m->config.device && !m->model_find_warned && !model_find_device(&m->model, m->config.device)) {
		log_warning("kernel: no device %s (yet)", m->config.device);
		m->model_find_warned = true;
	}
	m->kernel_present = true;
	m->kernel_error[0] = '\0';
	m->syncs++;
	m->last_sync_usec = now_usec(CLOCK_REALTIME);
	sweep_kick(m->sweep);
	r = 0;
out:
	update_status(m);
	arm_sync(m, m->kernel_present ? m->config.refresh_usec : m->config.retry_usec, true);
	return r;
}

static int sync_timer_cb(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s; (void)usec;
	manager_sync(userdata);
	return 0;
}

static void kernel_event(void *userdata, KernelEventKind kind, const char *text)
{
	Manager *m = userdata;

	switch (kind) {
	case KERNEL_EVENT_OBJECT:
		m->events++;
		log_info("event: %s", text);
		arm_sync(m, EVENT_DEBOUNCE_USEC, false);
		break;
	case KERNEL_EVENT_FAMILY_NEW:
		log_info("kernel: generic netlink family %s registered", m->config.family);
		m->kernel_lost = m->kernel.req != NULL;	/* a reload we did not see go */
		arm_sync(m, 0, false);
		break;
	case KERNEL_EVENT_FAMILY_DEL:
		log_notice("kernel: generic netlink family %s unregistered (module unloaded)",
			   m->config.family);
		m->kernel_lost = true;
		arm_sync(m, 0, false);
		break;
	case KERNEL_EVENT_OVERRUN:
		log_warning("kernel: %s, re-syncing", text);
		arm_sync(m, 0, false);
		break;
	}
}

static int kernel_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	Manager *m = userdata;
	int r;

	(void)s; (void)fd; (void)revents;
	r = kernel_process_events(&m->kernel, kernel_event, m);
	if (r < 0) {
		log_warning_errno(r, "kernel event socket: %m; re-opening it");
		m->kernel_lost = true;
		/* stop polling the broken socket until the sync re-opens it */
		sd_event_source_set_enabled(m->kernel_source, SD_EVENT_OFF);
		arm_sync(m, m->config.retry_usec, false);
	}
	return 0;
}

/* ---- changing operations (request.c calls them for root only) ------------------------------ */

static int op_rail_set_cut(void *userdata, const char *device, uint32_t link, uint32_t rail,
			   bool cut, char *msg, size_t msglen)
{
	Manager *m = userdata;
	int r;

	r = kernel_rail_set_cut(&m->kernel, device, link, rail, cut, msg, msglen);
	if (r < 0) {
		log_warning_errno(r, "rail %s/%u/%u %s refused: %m%s%s", device, link, rail,
				  cut ? "disable" : "enable", msg[0] ? ": " : "", msg);
		return r;
	}
	log_info("rail %s/%u/%u %s by request", device, link, rail, cut ? "disabled" : "enabled");
	manager_sync(m);	/* reply with the state the kernel now has */
	return 0;
}

static int op_sweep(void *userdata, char *msg, size_t msglen)
{
	Manager *m = userdata;
	int r;

	log_info("sweep requested");
	r = manager_sync(m);
	if (r < 0)
		snprintf(msg, msglen, "%s", m->kernel_error);
	else
		sweep_request(m->sweep);
	return r;
}

static int op_fabric(void *userdata, json_object *reply)
{
	Manager *m = userdata;

	if (!m->sweep)
		return -EOPNOTSUPP;
	sweep_fabric_json(m->sweep, reply);
	return 0;
}

/* the sweep's replies: -EOPNOTSUPP with Sweep=no */
#define SWEEP_OP(name)								\
	static int op_##name(void *userdata, json_object *reply)		\
	{									\
		Manager *m = userdata;						\
										\
		if (!m->sweep)							\
			return -EOPNOTSUPP;					\
		sweep_##name##_json(m->sweep, reply);				\
		return 0;							\
	}
SWEEP_OP(routes)
SWEEP_OP(partitions)

static void op_link_json(void *userdata, const Link *l, json_object *o)
{
	Manager *m = userdata;

	sweep_link_json(m->sweep, l, o);
}

const RequestOps manager_request_ops = {
	.rail_set_cut = op_rail_set_cut,
	.sweep = op_sweep,
	.fabric = op_fabric,
	.routes = op_routes,
	.partitions = op_partitions,
	.link_json = op_link_json,
};

void manager_daemon_info(Manager *m, DaemonInfo *in)
{
	*in = (DaemonInfo){
		.version = TBRDMAD_VERSION,
		.pid = (long)getpid(),
		.uptime_usec = now_usec(CLOCK_MONOTONIC) - m->start_usec,
		.clients = m->n_clients,
		.output_peak = m->out_peak,
		.device_filter = m->config.device,
		.family = m->config.family,
		.kernel_present = m->kernel_present,
		.syncs = m->syncs,
		.sync_errors = m->sync_errors,
		.events = m->events,
		.last_sync_usec = m->last_sync_usec,
		.kernel_error = m->kernel_error[0] ? m->kernel_error : NULL,
		.discovery = &m->discovery,
	};
	udev_info(m->udev, &in->udev_state, &in->udev_events);
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

static int signal_cb(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	Manager *m = userdata;

	(void)s;
	log_info("received %s, stopping (kernel rails stay as they are)", strsignal(si->ssi_signo));
	sd_notify(false, "STOPPING=1\nSTATUS=Stopping");
	return sd_event_exit(m->event, 0);
}

int manager_new(Manager **ret, Config *config)
{
	Manager *m = calloc(1, sizeof(*m));
	int r;

	if (!m)
		return -ENOMEM;
	m->config = *config;
	*config = (Config){ 0 };
	m->listen_fd = -1;
	m->kernel.family = -1;
	m->start_usec = now_usec(CLOCK_MONOTONIC);
	r = sd_event_default(&m->event);
	if (r < 0) {
		manager_free(m);
		return r;
	}
	*ret = m;
	return 0;
}

Manager *manager_free(Manager *m)
{
	if (!m)
		return NULL;
	state_socket_close(m);
	m->sweep = sweep_free(m->sweep);
	m->udev = udev_free(m->udev);
	disc_clear(&m->discovery);
	m->kernel_source = sd_event_source_disable_unref(m->kernel_source);
	m->sync_timer = sd_event_source_disable_unref(m->sync_timer);
	kernel_done(&m->kernel);
	model_clear(&m->model);
	sd_event_unref(m->event);
	config_done(&m->config);
	free(m);
	return NULL;
}

static int mkdir_p(const char *path, mode_t mode)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1;; s++) {
		if (*s && *s != '/')
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return -errno;
		if (!c)
			break;
		*s = c;
	}
	return 0;
}

int manager_start(Manager *m)
{
	sigset_t ss;
	int r;

	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0)
		return log_error_errno(errno, "sigprocmask: %m");
	signal(SIGPIPE, SIG_IGN);
	r = sd_event_add_signal(m->event, NULL, SIGTERM, signal_cb, m);
	if (r >= 0)
		r = sd_event_add_signal(m->event, NULL, SIGINT, signal_cb, m);
	if (r < 0)
		return log_error_errno(r, "signal sources: %m");
	r = sd_event_set_watchdog(m->event, true);	/* WATCHDOG=1 pings if WATCHDOG_USEC is set */
	if (r < 0)
		log_warning_errno(r, "watchdog: %m");
	else if (r > 0)
		log_info("watchdog enabled");

	r = mkdir_p(m->config.state_dir, 0755);
	if (r < 0)
		log_warning_errno(r, "state directory %s: %m (nothing is persisted yet)",
				  m->config.state_dir);

	r = kernel_init(&m->kernel, m->config.family);
	if (r < 0)
		return r;
	r = sweep_new(m, &m->sweep);	/* before the first connect: it joins the "mgmt" group */
	if (r < 0)
		return r;
	r = attach_kernel_source(m);
	if (r < 0)
		return r;
	r = sd_event_add_time(m->event, &m->sync_timer, CLOCK_MONOTONIC, UINT64_MAX, 0,
			      sync_timer_cb, m);
	if (r < 0)
		return log_error_errno(r, "sync timer: %m");
	sd_event_source_set_enabled(m->sync_timer, SD_EVENT_OFF);

	r = state_socket_open(m);
	if (r < 0)
		return r;
	r = udev_start(m, &m->udev);
	if (r < 0)
		return r;
	manager_sync(m);	/* first sync; sends READY=1 whatever it found */
	return 0;
}

int manager_run(Manager *m)
{
	return sd_event_loop(m->event);
}
