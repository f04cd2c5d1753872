/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Routes over a multi-hop fabric (docs/sweep.md "Routes"): from the sweep's database, min-hop
 * routes from this host to every host reachable over two-way links, one path per pair of hosts
 * among equal-cost ones (the same both ways, spread by a hash of each link's GUIDs), as the
 * kernel's forwarding table wants them (docs/netlink.md ROUTE_SET: sorted by destination).
 * Pure, unit-tested in tests/test_fabric.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric.h"

#define ROUTE_HOPS_MAX	16	/* TBRDMA_ROUTE_HOPS_MAX: longer routes are left out */

typedef struct Route {
	uint64_t dst, next_hop;
	uint32_t hops;
	uint64_t path[ROUTE_HOPS_MAX];	/* the hosts after us, the last is dst (every host picks
					 * its next hop by the same rule from the same database) */
} Route;

typedef struct RouteTable {
	Route r[FABRIC_HOSTS_MAX];
	size_t n;
	size_t too_far;			/* reachable, but more than ROUTE_HOPS_MAX hops away */
} RouteTable;

/* The weight of the link between hosts @a and @b (either order): among min-hop paths the least
 * sum of weights wins, so pairs of hosts spread over equal paths. */
uint32_t route_edge_weight(uint64_t a, uint64_t b);
/* @t := the routes of f->self (none if our record is absent), sorted by destination */
void routes_compute(const Fabric *f, RouteTable *t);
/* same destinations, next hops and hop counts (what the kernel's table holds) */
bool routes_equal(const RouteTable *a, const RouteTable *b);
