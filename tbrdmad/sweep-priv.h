/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The sweep's state, shared by its files: sweep.c (the loop and its phases), sweep-send.c (our
 * database to the peer of every up link), sweep-json.c (the "fabric" reply). Nobody else
 * includes this. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "auth.h"
#include "fabric.h"
#include "manager.h"
#include "railneg.h"
#include "routes.h"
#include "sweep.h"
#include "util.h"

struct Sweep {
	Manager *m;
	sd_event_source *timer;
	Fabric db;
	Pool pool;
	Pool6 pool6;
	char addr6_netdev[MODEL_NAME_MAX];	/* where the IPv6 address was applied, "" not yet */
	uint64_t addr6_guid;
	AddrMap map;
	char map_path[4096];
	char device[MODEL_NAME_MAX], netdev[MODEL_NAME_MAX];
	uint64_t master, digest;
	uint32_t epoch;
	uint32_t addr;			/* applied to tbrN */
	uint32_t want;			/* what the master says */
	bool claimed;			/* looked at tbrN's addresses once */
	uint64_t light, heavy, tx, rx, rx_bad, tx_err;
	uint64_t rx_unauth;		/* dropped by auth_unwrap() */
	Auth *auth;			/* FabricKeyFile=, NULL: no key */
	bool auth_full_logged;		/* auth_unwrap() said -ENOSPC once (warning) */
	uint64_t last_heavy_usec;
	uint64_t last_run_usec;		/* when run() was last called, 0 never */
	uint64_t start_usec;		/* first run with our device: discovery for 2 hellos */
	bool pending_heavy;		/* forced by request */
	RailNeg *neg;			/* rail negotiation per link */
	RouteTable routes;		/* what the kernel's forwarding table holds (pushed) */
	bool routes_set;		/* routes went to the kernel (version route_version) */
	uint32_t route_version;		/* of the last ROUTE_SET that succeeded */
	uint32_t route_dev_index;	/* the device's RDMA index then */
	uint64_t route_errors;		/* ROUTE_SETs that failed */
	uint32_t held_logged[FABRIC_NEIGH_MAX];	/* held links reported once (ids, 0 free) */
	uint64_t confirmed;		/* held links confirmed (LINK_TRUST) */
	/* authenticated links (docs/sweep.md "Trust"): the fabric key in the kernel */
	bool key_set;			/* AUTH_KEY_SET succeeded for the device of key_dev_index */
	uint32_t key_dev_index;
	uint64_t key_errors;		/* AUTH_KEY_SETs that failed */
	/* partitions (docs/sweep.md "Partitions") */
	uint16_t pkeys[PARTITIONS_MAX];	/* what the kernel was given (PKEY_SET) */
	unsigned n_pkeys;
	bool pkeys_set;			/* PKEY_SET succeeded for the device of pkeys_dev_index */
	uint32_t pkeys_dev_index;
	uint64_t pkey_errors;		/* PKEY_SETs that failed */
	bool pkey_config_logged;	/* the master's [Partition]s were refused, said once */
	struct {			/* what frame_warn() last said per link */
		uint32_t link, frame;
		unsigned parts, skipped;
	} split[FABRIC_NEIGH_MAX];
};

/* the datagram of our database (STATE, our record first) to the peer of every up link of @d,
 * split to each link's frame size; counts tx/tx_err */
void sweep_send_state(Sweep *s, const Device *d);
