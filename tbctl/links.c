// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl links [DEVICE]: one line per link (per peer), with its counters. */
#include <inttypes.h>
#include <stdio.h>

#include "tbctl.h"

int verb_links(int argc, char **argv)
{
	static const char *const cols[] = { "DEVICE", "LINK", "PEER", "STATE", "RAILS", "TX-FRAMES",
					    "TX-BYTES", "RX-FRAMES", "RX-BYTES", "LOST", "DROPS" };
	json_object *reply = NULL, *links;
	struct libscols_table *t;
	size_t n;
	int r;

	if (argc > 2)
		return usage_error("links takes at most DEVICE");
	r = query("links", argc == 2 ? argv[1] : NULL, &reply);
	if (r || !reply)
		return r;
	links = jget(reply, "links");
	n = links ? json_object_array_length(links) : 0;
	t = table_new(cols, 11);
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(links, i), *c = jget(o, "counters");
		struct libscols_line *l = table_add(t);

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
	}
	json_object_put(reply);
	r = table_print(t);
	if (arg.legend)
		printf("%s%zu %s%s listed.\n", n ? "\n" : "", n, "link", n == 1 ? "" : "s");
	return r;
}
