// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl links [DEVICE]: one line per link (per peer), with its counters. */
#include <inttypes.h>

#include "tbctl.h"

static void row(struct libscols_line *l, json_object *o, const char *array)
{
	json_object *c = jget(o, "counters");

	cell(l, 0, "%s", jstr(o, "device"));
	cell(l, 1, "%lld", (long long)jint(o, "id"));
	cell(l, 2, "%s", jstr(o, "peer_guid"));
	cell_state(l, 3, jstr(o, "state"));
	cell(l, 4, "%lld/%lld", (long long)jint(o, "rails_up"), (long long)jint(o, "rails_total"));
	cell(l, 5, "%" PRIu64, juint(c, "tx_frames"));
	cell(l, 6, "%" PRIu64, juint(c, "tx_bytes"));
	cell(l, 7, "%" PRIu64, juint(c, "rx_frames"));
	cell(l, 8, "%" PRIu64, juint(c, "rx_bytes"));
	cell(l, 9, "%" PRIu64, juint(c, "tx_lost"));
	cell(l, 10, "%" PRIu64, juint(c, "drops"));
	/* "used", or "held: claims GUID X, not confirmed by the sweep" (docs/sweep.md "Trust") */
	cell(l, 11, "%s", jget(o, "trust_note") ? jstr(o, "trust_note") :
			  jget(o, "trust") ? jstr(o, "trust") : "used");
}

static const char *const columns[] = { "DEVICE", "LINK", "PEER", "STATE", "RAILS", "TX-FRAMES",
				       "TX-BYTES", "RX-FRAMES", "RX-BYTES", "LOST", "DROPS", "TRUST" };
static const char *const arrays[] = { "links", NULL };

static const ListVerb links_list = {
	.name = "links",
	.device = true,
	.columns = columns,
	.n_columns = ELEMENTSOF(columns),
	.arrays = arrays,
	.row = row,
	.noun = "link",
};

int verb_links(int argc, char **argv)
{
	return list_verb(&links_list, argc, argv);
}
