/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The daemon's state: event loop, kernel connection, model, state socket and its clients. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "config.h"
#include "discovery.h"
#include "genl.h"
#include "model.h"
#include "request.h"

typedef struct Client Client;
struct Sweep;
struct Udev;

typedef struct Manager {
	sd_event *event;
	Config config;

	Kernel kernel;
	sd_event_source *kernel_source;	/* the event socket */
	sd_event_source *sync_timer;	/* next sync (refresh, retry, after events) */
	bool kernel_lost;		/* the family went away: reconnect before the next sync */
	bool kernel_present;
	bool model_find_warned;		/* warned that Device= is not there */
	uint64_t syncs, sync_errors, events;
	uint64_t last_sync_usec;	/* CLOCK_REALTIME */
	char kernel_error[256];
	Model model;

	int listen_fd;
	bool socket_activated;		/* the fd came from systemd: do not unlink the path */
	sd_event_source *listen_source;
	Client *clients;
	unsigned n_clients;
	size_t out_peak;		/* the longest output queue of any client so far */

	struct Sweep *sweep;		/* sweep.c; NULL with Sweep=no */
	struct Udev *udev;		/* udev.c */
	Discovery discovery;		/* what udev shows: Thunderbolt peers, tbrdma links */

	uint64_t start_usec;		/* CLOCK_MONOTONIC */
	bool ready;
	char status[256];
} Manager;

int manager_new(Manager **ret, Config *config);	/* takes over @config */
Manager *manager_free(Manager *m);
int manager_start(Manager *m);
int manager_run(Manager *m);

/* re-read the kernel state now (0, or -errno with the reason in m->kernel_error) */
int manager_sync(Manager *m);
void manager_daemon_info(Manager *m, DaemonInfo *info);
extern const RequestOps manager_request_ops;

/* state-socket.c */
int state_socket_open(Manager *m);
void state_socket_close(Manager *m);
