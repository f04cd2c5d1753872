// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl peers: the hosts tbrdmad knows (the sweep's hosts, or with Sweep=no the kernel's direct
 * neighbours): GUID, address, role, hops from this host, and this host's links to each. */
#include <stdio.h>

#include "tbctl.h"

static void row(struct libscols_line *l, json_object *o, const char *array)
{
	json_object *ls = jget(o, "links");
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

static const char *legend_note(json_object *reply)
{
	return jbool(reply, "sweep") ? "" : " (no sweep: direct neighbours only)";
}

static const char *const columns[] = { "GUID", "NAME", "ADDRESS", "ROLE", "HOPS", "LINKS",
				       "STATE", "RAILS" };
static const char *const arrays[] = { "peers", NULL };

static const ListVerb peers_list = {
	.name = "peers",
	.columns = columns,
	.n_columns = ELEMENTSOF(columns),
	.arrays = arrays,
	.row = row,
	.noun = "host",
	.legend_note = legend_note,
};

int verb_peers(int argc, char **argv)
{
	return list_verb(&peers_list, argc, argv);
}
