// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Min-hop routes from the sweep's database (docs/sweep.md "Routes"), in the spirit of opensm's
 * minhop engine: hop counts from every host to every destination first (a breadth-first search
 * from each destination over the two-way links, as a switch's min-hop table holds them per
 * port), then for each destination the next hop is a neighbour one hop closer. Where several
 * are, opensm balances by the number of routes already on each port; here every link has a
 * weight (a hash of its two GUIDs) and a rank (its place among all links by weight), and of
 * the min-hop paths between two hosts the one with the least sum of weights, then the least
 * sum of 2^rank (unique to a set of links: no tie is left), is the one: so every host computes
 * the same path from the same database, the path a frame takes is the one `routes` shows, the
 * pairs spread over equal paths, and the path from a to b is the path from b to a reversed
 * (the kernel's reverse-path check, docs/protocol.md 7, needs that on even rings).
 * Each hop strictly decreases the distance, so on one database no route loops, rings included.
 */
#include <stdlib.h>
#include <string.h>

#include "routes.h"

#define FAR UINT8_MAX

static uint64_t mix(uint64_t h)
{
	/* splitmix64's finalizer: neighbouring GUIDs spread */
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

uint32_t route_edge_weight(uint64_t a, uint64_t b)
{
	uint64_t lo = a < b ? a : b, hi = a < b ? b : a;

	return (uint32_t)(mix(lo ^ mix(hi)) >> 32);
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

/* dist[x]: hops from host x to host @d, FAR if unreachable; order[0..n): the reachable hosts by
 * distance (breadth-first order); returns n */
static size_t bfs(const Fabric *f, bool adj[FABRIC_HOSTS_MAX][FABRIC_HOSTS_MAX], size_t d,
		  uint8_t dist[FABRIC_HOSTS_MAX], size_t order[FABRIC_HOSTS_MAX])
{
	size_t head = 0, tail = 0;

	memset(dist, FAR, FABRIC_HOSTS_MAX);
	dist[d] = 0;
	order[tail++] = d;
	while (head < tail) {
		size_t x = order[head++];

		for (size_t y = 0; y < f->n_hosts; y++)
			if (adj[x][y] && dist[y] == FAR) {
				dist[y] = (uint8_t)(dist[x] + 1);
				order[tail++] = y;
			}
	}
	return tail;
}

static int cmp_guid(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The edges' weights and ranks: weight from route_edge_weight(), rank: the edge's place among
 * all edges by (weight, lower GUID, higher GUID), so no two edges share one. */
typedef struct Edges {
	uint32_t w[FABRIC_HOSTS_MAX][FABRIC_HOSTS_MAX];
	uint16_t rank[FABRIC_HOSTS_MAX][FABRIC_HOSTS_MAX];
} Edges;

typedef struct EdgeKey {
	uint32_t w;
	uint64_t lo, hi;
	size_t i, j;
} EdgeKey;

static int cmp_edge(const void *a, const void *b)
{
	const EdgeKey *x = a, *y = b;

	if (x->w != y->w)
		return x->w < y->w ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static void edges(const Fabric *f, bool adj[FABRIC_HOSTS_MAX][FABRIC_HOSTS_MAX], Edges *e)
{
	static EdgeKey k[FABRIC_HOSTS_MAX * FABRIC_HOSTS_MAX / 2];
	size_t n = 0;

	for (size_t i = 0; i < f->n_hosts; i++)
		for (size_t j = i + 1; j < f->n_hosts; j++) {
			uint64_t a = f->hosts[i].guid, b = f->hosts[j].guid;

			if (!adj[i][j])
				continue;
			k[n++] = (EdgeKey){ .w = route_edge_weight(a, b), .lo = a < b ? a : b,
					    .hi = a < b ? b : a, .i = i, .j = j };
		}
	qsort(k, n, sizeof(k[0]), cmp_edge);
	for (size_t r = 0; r < n; r++) {
		e->w[k[r].i][k[r].j] = e->w[k[r].j][k[r].i] = k[r].w;
		e->rank[k[r].i][k[r].j] = e->rank[k[r].j][k[r].i] = (uint16_t)r;
	}
}

/* The best path from a host to the destination found so far: the sum of its edges' weights and
 * their ranks, highest first (read as the number sum(2^rank): unique to the set of edges). */
typedef struct Label {
	uint64_t sum;
	uint8_t n;
	uint16_t rank[FABRIC_HOSTS_MAX];
} Label;

/* element @k of @l's ranks with @extra merged in, highest first */
static uint16_t rank_at(const Label *l, uint16_t extra, size_t k)
{
	size_t p = 0;

	while (p < l->n && l->rank[p] > extra)
		p++;
	return k < p ? l->rank[k] : k == p ? extra : l->rank[k - 1];
}

/* <0: the path over edge @ea then @a is better than over @eb then @b (both min-hop, as long) */
static int cmp_via(const Label *a, uint32_t wa, uint16_t ra, const Label *b, uint32_t wb,
		   uint16_t rb)
{
	uint64_t sa = a->sum + wa, sb = b->sum + wb;

	if (sa != sb)
		return sa < sb ? -1 : 1;
	for (size_t k = 0; k <= a->n; k++) {
		uint16_t x = rank_at(a, ra, k), y = rank_at(b, rb, k);

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;	/* cannot happen: the first edges differ */
}

/* next[x]: host x's next hop towards @d (SIZE_MAX: none), the first hop of x's one best path:
 * among the min-hop paths the least by (sum of edge weights, sum of 2^rank). Breadth-first, a
 * host's best path is its best neighbour one hop closer plus the edge to it; every part of a
 * best path is the best path between its ends, and the order is the same read either way. */
static void tree(const Fabric *f, bool adj[FABRIC_HOSTS_MAX][FABRIC_HOSTS_MAX], const Edges *e,
		 size_t d, uint8_t dist[FABRIC_HOSTS_MAX], size_t next[FABRIC_HOSTS_MAX])
{
	static Label lab[FABRIC_HOSTS_MAX];
	size_t order[FABRIC_HOSTS_MAX], n;

	n = bfs(f, adj, d, dist, order);
	for (size_t x = 0; x < FABRIC_HOSTS_MAX; x++)
		next[x] = SIZE_MAX;
	memset(&lab[d], 0, sizeof(lab[d]));
	for (size_t i = 1; i < n; i++) {
		size_t x = order[i], best = SIZE_MAX;
		Label *l = &lab[x];

		for (size_t y = 0; y < f->n_hosts; y++) {
			if (!adj[x][y] || dist[y] + 1 != dist[x])
				continue;
			if (best == SIZE_MAX ||
			    cmp_via(&lab[y], e->w[x][y], e->rank[x][y],
				    &lab[best], e->w[x][best], e->rank[x][best]) < 0)
				best = y;
		}
		next[x] = best;
		l->sum = lab[best].sum + e->w[x][best];
		l->n = (uint8_t)(lab[best].n + 1);
		for (size_t k = 0; k < l->n && k < FABRIC_HOSTS_MAX; k++)
			l->rank[k] = rank_at(&lab[best], e->rank[x][best], k);
	}
}

static int cmp_route(const void *a, const void *b)
{
	return cmp_guid(&((const Route *)a)->dst, &((const Route *)b)->dst);
}

void routes_compute(const Fabric *f, RouteTable *t)
{
	static bool adj[FABRIC_HOSTS_MAX][FABRIC_HOSTS_MAX];
	static Edges e;
	uint8_t dist[FABRIC_HOSTS_MAX];
	size_t next[FABRIC_HOSTS_MAX];
	size_t self = SIZE_MAX;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < f->n_hosts; i++)
		if (f->hosts[i].guid == f->self)
			self = i;
	if (self == SIZE_MAX)
		return;
	adjacency(f, adj);
	edges(f, adj, &e);
	for (size_t d = 0; d < f->n_hosts; d++) {
		Route *r = &t->r[t->n];
		size_t x = self;

		if (d == self)
			continue;
		tree(f, adj, &e, d, dist, next);
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
			x = next[x];
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
