/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The state socket's request parser and dispatcher: one request line in, one reply object out.
 * No I/O, no kernel: the daemon (and the unit tests, and the fuzzer) supply the model, the
 * daemon's facts and the changing operations. Never returns NULL except on ENOMEM. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "discovery.h"
#include "model.h"

typedef struct DaemonInfo {
	const char *version;
	long pid;
	uint64_t uptime_usec;
	unsigned clients;
	uint64_t output_peak;		/* bytes: the longest reply queue any client had */
	const char *device_filter;	/* NULL: every device */
	const char *family;		/* genl family name */
	bool kernel_present;
	uint64_t syncs, sync_errors, events;
	uint64_t last_sync_usec;	/* CLOCK_REALTIME µs of the last good sync, 0 never */
	const char *kernel_error;	/* why the kernel is absent / the last sync failed, or NULL */
	const Discovery *discovery;	/* udev's view, or NULL */
	const char *udev_state;		/* NULL: no "udev" key */
	uint64_t udev_events;
} DaemonInfo;

typedef struct RequestOps {
	/* RAIL_SET CUT=@cut; 0 or -errno with a message (the kernel's ext-ack) in @msg */
	int (*rail_set_cut)(void *userdata, const char *device, uint32_t link, uint32_t rail,
			    bool cut, char *msg, size_t msglen);
	/* re-read the kernel state now; 0 or -errno with @msg */
	int (*sweep)(void *userdata, char *msg, size_t msglen);
	/* adds the fabric's state to @reply (docs/json.md "fabric"); -EOPNOTSUPP with Sweep=no */
	int (*fabric)(void *userdata, json_object *reply);
	/* adds the routes (docs/json.md "routes"); -EOPNOTSUPP with Sweep=no */
	int (*routes)(void *userdata, json_object *reply);
	/* adds the partitions (docs/json.md "partitions"); -EOPNOTSUPP with Sweep=no */
	int (*partitions)(void *userdata, json_object *reply);
	/* adds what the daemon knows beyond the kernel about link @l (rail negotiation) to @o */
	void (*link_json)(void *userdata, const Link *l, json_object *o);
} RequestOps;

typedef struct RequestContext {
	uid_t uid;			/* the peer's uid (SO_PEERCRED) */
	const Model *model;
	const DaemonInfo *info;
	const RequestOps *ops;
	void *userdata;
} RequestContext;

/* The "device" parameter of @req: 0 with *@dev the name (NULL when absent and not @required),
 * or -EINVAL with an error reply for @method in *@err (wrong type, empty, too long). */
int request_device_param(json_object *req, const char *method, bool required,
			 const char **dev, json_object **err);

/* @line: one request without its newline, @len bytes (any bytes, not NUL-terminated). */
json_object *request_handle(const RequestContext *c, const char *line, size_t len);

/* The reply as one line: compact JSON plus "\n"; malloc'd, NULL on ENOMEM. */
char *reply_to_line(json_object *reply, size_t *len);
