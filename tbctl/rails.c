// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl rails [DEVICE]: one line per rail (ring pair), with state, cut flag and counters. */
#include <inttypes.h>
#include <stdio.h>

#include "tbctl.h"

int verb_rails(int argc, char **argv)
{
	static const char *const cols[] = { "DEVICE", "LINK", "RAIL", "BACKEND", "STATE", "CUT",
					    "PEER", "CREDITS", "TX-FRAMES", "RX-FRAMES", "LOST",
					    "DROPS" };
	json_object *reply = NULL, *rails;
	struct libscols_table *t;
	size_t n;
	int r;

	if (argc > 2)
		return usage_error("rails takes at most DEVICE");
	r = query("rails", argc == 2 ? argv[1] : NULL, &reply);
	if (r || !reply)
		return r;
	rails = jget(reply, "rails");
	n = rails ? json_object_array_length(rails) : 0;
	t = table_new(cols, 12);
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(rails, i), *c = jget(o, "counters");
		struct libscols_line *l = table_add(t);

		cell(l, 0, "%s", jstr(o, "device"));
		cell(l, 1, "%lld", (long long)jint(o, "link"));
		cell(l, 2, "%lld", (long long)jint(o, "id"));
		cell(l, 3, "%s", jstr(o, "backend"));
		cell_state(l, 4, jstr(o, "state"));
		cell(l, 5, "%s", jbool(o, "cut") ? "yes" : "no");
		cell(l, 6, "%s", jstr(o, "peer_guid"));
		cell(l, 7, "%lld", (long long)jint(o, "tx_credits"));
		cell(l, 8, "%" PRIu64, juint(c, "tx_frames"));
		cell(l, 9, "%" PRIu64, juint(c, "rx_frames"));
		cell(l, 10, "%" PRIu64, juint(c, "tx_lost"));
		cell(l, 11, "%" PRIu64, juint(c, "drops"));
	}
	json_object_put(reply);
	r = table_print(t);
	if (arg.legend)
		printf("%s%zu %s%s listed.\n", n ? "\n" : "", n, "rail", n == 1 ? "" : "s");
	return r;
}
