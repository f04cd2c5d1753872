// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl peers: the hosts tbrdmad knows (the sweep's hosts, or with Sweep=no the kernel's direct
 * neighbours): GUID, address, role, hops from this host, and this host's links to each. */
#include <stdio.h>

#include "tbctl.h"

int verb_peers(int argc, char **argv)
{
	static const char *const cols[] = { "GUID", "NAME", "ADDRESS", "ROLE", "HOPS", "LINKS",
					    "STATE", "RAILS" };
	json_object *reply = NULL, *peers;
	struct libscols_table *t;
	size_t n;
	int r;

	(void)argv;
	if (argc > 1)
		return usage_error("peers takes no arguments");
	r = query("peers", NULL, &reply);
	if (r || !reply)
		return r;
	peers = jget(reply, "peers");
	n = peers ? json_object_array_length(peers) : 0;
	t = table_new(cols, 8);
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(peers, i), *ls = jget(o, "links");
		struct libscols_line *l = table_add(t);
		size_t nl = ls ? json_object_array_length(ls) : 0;
		char links[128] = "", rails[64] = "";
		const char *state = "-";
		size_t off = 0, roff = 0;

		for (size_t j = 0; j < nl && off < sizeof(links) - 40; j++) {
			json_object *k = json_object_array_get_idx(ls, j);

			off += (size_t)snprintf(links + off, sizeof(links) - off, "%s%s/%lld", j ? "," : "",
						jstr(k, "device"), (long long)jint(k, "id"));
			roff += (size_t)snprintf(rails + roff, sizeof(rails) - roff, "%s%lld/%lld",
						 j ? "," : "", (long long)jint(k, "rails_up"),
						 (long long)jint(k, "rails_total"));
			state = jstr(k, "state");
		}
		cell(l, 0, "%s%s", jstr(o, "guid"), jbool(o, "self") ? "*" : "");
		cell(l, 1, "%s", jstr(o, "name")[0] ? jstr(o, "name") : "-");
		cell(l, 2, "%s", jstr(o, "address")[0] ? jstr(o, "address") : "-");
		cell(l, 3, "%s", jstr(o, "role")[0] ? jstr(o, "role") : "-");
		if (jget(o, "hops"))
			cell(l, 4, "%lld", (long long)jint(o, "hops"));
		else
			cell(l, 4, "-");
		cell(l, 5, "%s", jbool(o, "self") ? "(this host)" : nl ? links : "-");
		if (nl)
			cell_state(l, 6, state);
		else
			cell(l, 6, "-");
		cell(l, 7, "%s", nl ? rails : "-");
	}
	r = table_print(t);
	if (arg.legend)
		printf("%s%zu host%s listed%s.\n", n ? "\n" : "", n, n == 1 ? "" : "s",
		       jbool(reply, "sweep") ? "" : " (no sweep: direct neighbours only)");
	json_object_put(reply);
	return r;
}
