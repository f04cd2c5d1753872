// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Min-hop routes from the sweep's database (docs/sweep.md "Routes"), in the spirit of opensm's
 * minhop engine: hop counts from every host to every destination first (a breadth-first search
 * from each destination over the two-way links, as a switch's min-hop table holds them per
 * port), then for each destination the next hop is a neighbour one hop closer. Where several
 * are, opensm balances by the number of routes already on each port; here a hash of the
 * destination GUID picks among them, so that every host computes the same choice for a
 * destination from the same database and the path a frame takes is the one `routes` shows.
 * Each hop strictly decreases the distance, so on one database no route loops, rings included.
 */
#include <stdlib.h>
#include <string.h>

#include "routes.h"

#define FAR UINT8_MAX

uint64_t route_pick(uint64_t dst, const uint64_t *cand, size_t n)
{
	uint64_t h = dst;

	if (!n)
		return 0;
	/* splitmix64's finalizer: neighbouring GUIDs spread */
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return cand[h % n];
}

/* two-way: each of hosts i and j lists the other as a neighbour */
static void adjacency(const Fabric *f, bool adj[FABRIC_HOSTS_MAX][FABRIC_HOSTS_MAX])
{
	memset(adj, 0, sizeof(bool) * FABRIC_HOSTS_MAX * FABRIC_HOSTS_MAX);
	for (size_t i = 0; i < f->n_hosts; i++)
		for (size_t j = 0; j < f->n_hosts; j++) {
			const HostRecord *a = &f->hosts[i], *b = &f->hosts[j];
			bool ab = false, ba = false;

			if (i == j)
				continue;
			for (unsigned k = 0; k < a->n_neigh; k++)
				ab |= a->neigh[k] == b->guid;
			for (unsigned k = 0; k < b->n_neigh; k++)
				ba |= b->neigh[k] == a->guid;
			adj[i][j] = ab && ba;
		}
}

/* dist[x]: hops from host x to host @d, FAR if unreachable */
static void bfs(const Fabric *f, bool adj[FABRIC_HOSTS_MAX][FABRIC_HOSTS_MAX], size_t d,
		uint8_t dist[FABRIC_HOSTS_MAX])
{
	size_t queue[FABRIC_HOSTS_MAX], head = 0, tail = 0;

	memset(dist, FAR, FABRIC_HOSTS_MAX);
	dist[d] = 0;
	queue[tail++] = d;
	while (head < tail) {
		size_t x = queue[head++];

		for (size_t y = 0; y < f->n_hosts; y++)
			if (adj[x][y] && dist[y] == FAR) {
				dist[y] = (uint8_t)(dist[x] + 1);
				queue[tail++] = y;
			}
	}
}

static int cmp_guid(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* the index of @from's next hop towards the destination whose distances are @dist */
static size_t next_of(const Fabric *f, bool adj[FABRIC_HOSTS_MAX][FABRIC_HOSTS_MAX],
		      const uint8_t *dist, uint64_t dst, size_t from)
{
	uint64_t cand[FABRIC_HOSTS_MAX], pick;
	size_t n = 0;

	for (size_t y = 0; y < f->n_hosts; y++)
		if (adj[from][y] && dist[y] + 1 == dist[from])
			cand[n++] = f->hosts[y].guid;
	qsort(cand, n, sizeof(cand[0]), cmp_guid);
	pick = route_pick(dst, cand, n);
	for (size_t y = 0; y < f->n_hosts; y++)
		if (f->hosts[y].guid == pick)
			return y;
	return SIZE_MAX;
}

static int cmp_route(const void *a, const void *b)
{
	return cmp_guid(&((const Route *)a)->dst, &((const Route *)b)->dst);
}

void routes_compute(const Fabric *f, RouteTable *t)
{
	static bool adj[FABRIC_HOSTS_MAX][FABRIC_HOSTS_MAX];
	uint8_t dist[FABRIC_HOSTS_MAX];
	size_t self = SIZE_MAX;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < f->n_hosts; i++)
		if (f->hosts[i].guid == f->self)
			self = i;
	if (self == SIZE_MAX)
		return;
	adjacency(f, adj);
	for (size_t d = 0; d < f->n_hosts; d++) {
		Route *r = &t->r[t->n];
		size_t x = self;

		if (d == self)
			continue;
		bfs(f, adj, d, dist);
		if (dist[self] == FAR)
			continue;
		if (dist[self] > ROUTE_HOPS_MAX) {
			t->too_far++;
			continue;
		}
		memset(r, 0, sizeof(*r));
		r->dst = f->hosts[d].guid;
		r->hops = dist[self];
		for (uint32_t k = 0; k < r->hops; k++) {
			x = next_of(f, adj, dist, r->dst, x);
			if (x == SIZE_MAX)
				break;	/* cannot happen: a host at distance n has one at n-1 */
			r->path[k] = f->hosts[x].guid;
		}
		r->next_hop = r->path[0];
		if (x == d)
			t->n++;
	}
	qsort(t->r, t->n, sizeof(t->r[0]), cmp_route);
}

bool routes_equal(const RouteTable *a, const RouteTable *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].dst != b->r[i].dst || a->r[i].next_hop != b->r[i].next_hop ||
		    a->r[i].hops != b->r[i].hops)
			return false;
	return true;
}
