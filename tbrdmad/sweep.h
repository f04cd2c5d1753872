/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The sweep (docs/sweep.md), run by the manager: hellos over the management channel, the
 * fabric database, election, the master's address assignment, addresses applied to tbrN. */
#pragma once

#include <json-c/json.h>

#include "model.h"

typedef struct Manager Manager;
typedef struct Sweep Sweep;

int sweep_new(Manager *m, Sweep **ret);	/* 0 with *ret NULL when Sweep=no */
Sweep *sweep_free(Sweep *s);
/* the kernel model changed (after a sync): sweep soon */
void sweep_kick(Sweep *s);
/* a heavy sweep now (the "sweep" request) */
void sweep_request(Sweep *s);
/* sends a management datagram to the peer of link @l, in an authenticated envelope when there
 * is a fabric key (auth.h); kernel_mgmt_send()'s return */
int sweep_mgmt_send(Sweep *s, const char *device, const Link *l, const uint8_t *data, size_t len,
		    char *err, size_t errlen);
/* fills the "fabric" reply */
void sweep_fabric_json(Sweep *s, json_object *reply);
/* fills the "routes" reply (docs/json.md): the forwarding table as pushed to the kernel */
void sweep_routes_json(Sweep *s, json_object *reply);
/* fills the "partitions" reply (docs/json.md): the master's partitions, our P_Keys, the kernel's
 * P_Key table */
void sweep_partitions_json(Sweep *s, json_object *reply);
/* adds the link's rail negotiation ("negotiation", docs/json.md) to its links JSON object */
void sweep_link_json(Sweep *s, const Link *l, json_object *o);
/* model_flag_slow's lookup (@ctx the Sweep): the best Mb/s per lane the peer advertised */
uint32_t sweep_peer_lane_mbps(void *ctx, const Rail *r);
