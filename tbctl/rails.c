// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl rails [DEVICE]: one line per rail (ring pair), with state, cut flag, the speed its
 * medium trained at (Gb/s, lanes x per lane; SLOW: a Thunderbolt cable below the others, see
 * docs/json.md) and counters:
 * frames, losses, the eth backend's fragmentation and, for an eth rail, the frames its NIC
 * dropped as not from a peer's MAC (rx_foreign: the NIC's count, shared by its rails). */
#include <inttypes.h>

#include "tbctl.h"

static void row(struct libscols_line *l, json_object *o, const char *array)
{
	json_object *c = jget(o, "counters"), *eth = jget(o, "eth"), *ring = jget(o, "ring");

	cell(l, 0, "%s", jstr(o, "device"));
	cell(l, 1, "%lld", (long long)jint(o, "link"));
	cell(l, 2, "%lld", (long long)jint(o, "id"));
	cell(l, 3, "%s", jstr(o, "backend"));
	cell_state(l, 4, jstr(o, "state"));
	cell(l, 5, "%s", jbool(o, "cut") ? "yes" : "no");
	/* what the medium trained at: "40 (2x20)", SLOW when below the others */
	if (jget(o, "lanes"))
		cell(l, 6, "%g (%lldx%g)%s", (double)jint(o, "lane_mbps") * jint(o, "lanes") / 1000,
		     (long long)jint(o, "lanes"), (double)jint(o, "lane_mbps") / 1000,
		     jbool(o, "slow") ? " SLOW" : "");
	else
		cell(l, 6, "-");
	cell(l, 7, "%s", jstr(o, "peer_guid"));
	cell(l, 8, "%lld", (long long)jint(o, "tx_credits"));
	/* the share of time since the rail came up its TX ring was full, its RX ring empty */
	if (ring) {
		cell(l, 9, "%.1f%%", jdouble(ring, "tx_full") * 100);
		cell(l, 10, "%.1f%%", jdouble(ring, "rx_empty") * 100);
	} else {
		cell(l, 9, "-");
		cell(l, 10, "-");
	}
	cell(l, 11, "%" PRIu64, juint(c, "tx_frames"));
	cell(l, 12, "%" PRIu64, juint(c, "rx_frames"));
	cell(l, 13, "%" PRIu64, juint(c, "tx_lost"));
	cell(l, 14, "%" PRIu64, juint(c, "drops"));
	cell(l, 15, "%" PRIu64, juint(c, "frag_tx"));
	cell(l, 16, "%" PRIu64, juint(c, "frag_rx"));
	cell(l, 17, "%" PRIu64, juint(c, "frag_drops"));
	if (eth)
		cell(l, 18, "%" PRIu64, juint(eth, "rx_foreign"));
	else
		cell(l, 18, "-");
}

static const char *const columns[] = { "DEVICE", "LINK", "RAIL", "BACKEND", "STATE", "CUT",
				       "GB/S", "PEER", "CREDITS", "TX-FULL", "RX-EMPTY", "TX-FRAMES", "RX-FRAMES", "LOST",
				       "DROPS", "FRAG-TX", "FRAG-RX", "FRAG-DROPS", "RX-FOREIGN" };
static const char *const arrays[] = { "rails", NULL };

static const ListVerb rails_list = {
	.name = "rails",
	.device = true,
	.columns = columns,
	.n_columns = ELEMENTSOF(columns),
	.arrays = arrays,
	.row = row,
	.noun = "rail",
};

int verb_rails(int argc, char **argv)
{
	return list_verb(&rails_list, argc, argv);
}
