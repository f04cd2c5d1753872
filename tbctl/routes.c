// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl routes: the forwarding table tbrdmad computed from the sweep and gave the kernel
 * (docs/sweep.md "Routes"): destination, its address, next hop and the link to it, hops, path. */
#include <stdio.h>

#include "tbctl.h"

static void header(json_object *reply, size_t n)
{
	json_object *v = jget(reply, "version");

	printf("device %s, this host %s, table version %s%lld, %lld failed update(s)\n\n",
	       or_dash(jstr(reply, "device")), or_dash(jstr(reply, "self")), v ? "" : "(none) ",
	       v ? (long long)jint(reply, "version") : 0LL, (long long)jint(reply, "errors"));
	(void)n;
}

static void row(struct libscols_line *l, json_object *o, const char *array)
{
	json_object *p = jget(o, "path");
	char buf[400] = "";
	size_t off = 0;

	for (size_t j = 0; p && j < json_object_array_length(p) && off < sizeof(buf) - 20; j++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", j ? " > " : "",
					json_object_get_string(json_object_array_get_idx(p, j)));
	cell(l, 0, "%s", jstr(o, "destination"));
	cell(l, 1, "%s", or_dash(jstr(o, "address")));
	cell(l, 2, "%s", jstr(o, "next_hop"));
	if (jget(o, "link"))
		cell(l, 3, "%lld", (long long)jint(o, "link"));
	else
		cell(l, 3, "-");
	cell(l, 4, "%lld", (long long)jint(o, "hops"));
	cell(l, 5, "%s", or_dash(buf));
}

static const char *const columns[] = { "DESTINATION", "ADDRESS", "NEXT-HOP", "LINK", "HOPS",
				       "PATH" };
static const char *const arrays[] = { "routes", NULL };

static const ListVerb routes_list = {
	.name = "routes",
	.columns = columns,
	.n_columns = ELEMENTSOF(columns),
	.arrays = arrays,
	.row = row,
	.noun = "route",
	.header = header,
};

int verb_routes(int argc, char **argv)
{
	return list_verb(&routes_list, argc, argv);
}
