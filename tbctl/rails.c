// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl rails [DEVICE]: one line per rail (ring pair), like `ip link`: by default what is read
 * first (a terminal's width): state, the speed its medium trained at (Gb/s, lanes x per lane;
 * SLOW: a Thunderbolt cable below what both hosts showed, see docs/json.md), ring
 * occupancy since the rail came up (TX-FULL: the share of time its TX ring was full,
 * credit-stalled; RX-EMPTY: the share its RX ring had every buffer posted, nothing arriving),
 * frames and losses (at most 120 columns with 12-digit counters and SLOW). -v adds the cut
 * flag, the free TX descriptors (CREDITS: TX-FULL says how often there were none), what a tb cable should have trained at (EXPECT: two
 * lanes at the best per-lane speed both hosts showed), the rest of the ring figures (TX-EMPTY,
 * TX-MEAN, RX-FULL: no buffer left to receive into, RX-MEAN), the eth backend's fragmentation
 * and, for an eth rail, the frames its NIC dropped as not from a peer's MAC (rx_foreign: the
 * NIC's count, shared by its rails); --json all of it. */
#include <inttypes.h>

#include "tbctl.h"

typedef struct Column {
	const char *name;
	bool verbose;				/* only with -v */
	void (*fill)(struct libscols_line *l, size_t col, json_object *o, const char *key);
	const char *key;			/* the counter or ring figure it shows */
} Column;

static void c_device(struct libscols_line *l, size_t col, json_object *o, const char *key)
{
	cell(l, col, "%s", jstr(o, "device"));
}

static void c_link(struct libscols_line *l, size_t col, json_object *o, const char *key)
{
	cell(l, col, "%lld", (long long)jint(o, "link"));
}

static void c_rail(struct libscols_line *l, size_t col, json_object *o, const char *key)
{
	cell(l, col, "%lld", (long long)jint(o, "id"));
}

static void c_backend(struct libscols_line *l, size_t col, json_object *o, const char *key)
{
	cell(l, col, "%s", jstr(o, "backend"));
}

static void c_state(struct libscols_line *l, size_t col, json_object *o, const char *key)
{
	cell_state(l, col, jstr(o, "state"));
}

static void c_cut(struct libscols_line *l, size_t col, json_object *o, const char *key)
{
	cell(l, col, "%s", jbool(o, "cut") ? "yes" : "no");
}

/* what the medium trained at: "40 (2x20)", SLOW when below what both ends showed (tbrdmad) */
static void c_speed(struct libscols_line *l, size_t col, json_object *o, const char *key)
{
	if (jget(o, "lanes"))
		cell(l, col, "%g (%lldx%g)%s", (double)jint(o, "lane_mbps") * jint(o, "lanes") / 1000,
		     (long long)jint(o, "lanes"), (double)jint(o, "lane_mbps") / 1000,
		     jbool(o, "slow") ? " SLOW" : "");
	else
		cell(l, col, "-");
}

/* what both ends showed they do (tbrdmad's bound for SLOW): 2 lanes x the per-lane figure */
static void c_expect(struct libscols_line *l, size_t col, json_object *o, const char *key)
{
	if (jget(o, "expected_lane_mbps"))
		cell(l, col, "%g (2x%g)", (double)jint(o, "expected_lane_mbps") * 2 / 1000,
		     (double)jint(o, "expected_lane_mbps") / 1000);
	else
		cell(l, col, "-");
}

static void c_peer(struct libscols_line *l, size_t col, json_object *o, const char *key)
{
	cell(l, col, "%s", jstr(o, "peer_guid"));
}

static void c_credits(struct libscols_line *l, size_t col, json_object *o, const char *key)
{
	cell(l, col, "%lld", (long long)jint(o, "tx_credits"));
}

/* a ring figure (a share of 0..1) as a percentage; "-" while the rail is down (null) */
static void c_ring(struct libscols_line *l, size_t col, json_object *o, const char *key)
{
	json_object *ring = jget(o, "ring");

	if (ring)
		cell(l, col, "%.1f%%", jdouble(ring, key) * 100);
	else
		cell(l, col, "-");
}

static void c_counter(struct libscols_line *l, size_t col, json_object *o, const char *key)
{
	cell(l, col, "%" PRIu64, juint(jget(o, "counters"), key));
}

static void c_foreign(struct libscols_line *l, size_t col, json_object *o, const char *key)
{
	json_object *eth = jget(o, "eth");

	if (eth)
		cell(l, col, "%" PRIu64, juint(eth, "rx_foreign"));
	else
		cell(l, col, "-");
}

/* in table order; the verbose ones only with -v */
static const Column columns[] = {
	{ "DEVICE", false, c_device, NULL },
	{ "LINK", false, c_link, NULL },
	{ "RAIL", false, c_rail, NULL },
	{ "BACKEND", false, c_backend, NULL },
	{ "STATE", false, c_state, NULL },
	{ "CUT", true, c_cut, NULL },
	{ "GB/S", false, c_speed, NULL },
	{ "EXPECT", true, c_expect, NULL },
	{ "PEER", false, c_peer, NULL },
	{ "CREDITS", true, c_credits, NULL },
	{ "TX-FULL", false, c_ring, "tx_full" },
	{ "TX-EMPTY", true, c_ring, "tx_empty" },
	{ "TX-MEAN", true, c_ring, "tx_mean" },
	{ "RX-FULL", true, c_ring, "rx_full" },
	{ "RX-EMPTY", false, c_ring, "rx_empty" },
	{ "RX-MEAN", true, c_ring, "rx_mean" },
	{ "TX-FRAMES", false, c_counter, "tx_frames" },
	{ "RX-FRAMES", false, c_counter, "rx_frames" },
	{ "LOST", false, c_counter, "tx_lost" },
	{ "DROPS", false, c_counter, "drops" },
	{ "FRAG-TX", true, c_counter, "frag_tx" },
	{ "FRAG-RX", true, c_counter, "frag_rx" },
	{ "FRAG-DROPS", true, c_counter, "frag_drops" },
	{ "RX-FOREIGN", true, c_foreign, NULL },
};

static const char *names[ELEMENTSOF(columns)];

static bool shown(const Column *c)
{
	return !c->verbose || arg.verbose;
}

static void row(struct libscols_line *l, json_object *o, const char *array)
{
	size_t col = 0;

	for (size_t i = 0; i < ELEMENTSOF(columns); i++)
		if (shown(&columns[i]))
			columns[i].fill(l, col++, o, columns[i].key);
}

int verb_rails(int argc, char **argv)
{
	static const char *const arrays[] = { "rails", NULL };
	ListVerb v = {
		.name = "rails",
		.device = true,
		.columns = names,
		.arrays = arrays,
		.row = row,
		.noun = "rail",
	};

	for (size_t i = 0; i < ELEMENTSOF(columns); i++)
		if (shown(&columns[i]))
			names[v.n_columns++] = columns[i].name;
	return list_verb(&v, argc, argv);
}
