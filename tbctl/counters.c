// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl counters [DEVICE]: the kernel's traffic and error counters (docs/netlink.md
 * TBRDMA_STAT_*), one line per device (sum of its links), link and rail, like `ip -s link`. */
#include <inttypes.h>
#include <stdio.h>

#include "tbctl.h"

static void add_row(struct libscols_table *t, const char *what, json_object *o)
{
	static const char *const keys[] = { "tx_frames", "tx_bytes", "rx_frames", "rx_bytes",
					    "tx_lost", "rx_nobuf", "drops", "dups", "credit_stalls",
					    "rx_errors", "mgmt_tx", "mgmt_rx" };
	json_object *c = jget(o, "counters");
	struct libscols_line *l = table_add(t);

	cell(l, 0, "%s", what);
	cell(l, 1, "%s", jget(o, "state") ? jstr(o, "state") : "-");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		cell(l, 2 + i, "%" PRIu64, juint(c, keys[i]));
}

int verb_counters(int argc, char **argv)
{
	static const char *const cols[] = { "OBJECT", "STATE", "TX-FRAMES", "TX-BYTES", "RX-FRAMES",
					    "RX-BYTES", "LOST", "NOBUF", "DROPS", "DUPS", "STALLS",
					    "RX-ERRORS", "MGMT-TX", "MGMT-RX" };
	json_object *reply = NULL, *a;
	struct libscols_table *t;
	size_t n = 0;
	int r;

	if (argc > 2)
		return usage_error("counters takes at most DEVICE");
	if (argc == 2 && (!argv[1][0] || argv[1][0] == '-'))
		return usage_error("bad DEVICE \"%s\"", argv[1]);
	r = query("counters", argc == 2 ? argv[1] : NULL, &reply);
	if (r || !reply)
		return r;
	t = table_new(cols, 14);
	for (size_t c = 2; c < 14; c++)
		scols_column_set_flags(scols_table_get_column(t, c), SCOLS_FL_RIGHT);
	a = jget(reply, "devices");
	for (size_t i = 0; a && i < json_object_array_length(a); i++, n++) {
		json_object *o = json_object_array_get_idx(a, i);

		add_row(t, jstr(o, "device"), o);
	}
	a = jget(reply, "links");
	for (size_t i = 0; a && i < json_object_array_length(a); i++, n++) {
		json_object *o = json_object_array_get_idx(a, i);
		char what[96];

		snprintf(what, sizeof(what), "%s link %lld", jstr(o, "device"), (long long)jint(o, "id"));
		add_row(t, what, o);
	}
	a = jget(reply, "rails");
	for (size_t i = 0; a && i < json_object_array_length(a); i++, n++) {
		json_object *o = json_object_array_get_idx(a, i);
		char what[128];

		snprintf(what, sizeof(what), "%s link %lld rail %lld %s%s%s", jstr(o, "device"),
			 (long long)jint(o, "link"), (long long)jint(o, "id"), jstr(o, "backend"),
			 jstr(o, "ifname")[0] ? " " : "", jstr(o, "ifname"));
		add_row(t, what, o);
	}
	json_object_put(reply);
	return table_print(t);
}
