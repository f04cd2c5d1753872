// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl fabric: the sweep's view of the fabric (docs/sweep.md): master, epoch, this host's
 * address, then one line per host with its address and neighbours. */
#include <stdio.h>
#include <string.h>

#include "tbctl.h"

static const char *or_dash(const char *s)
{
	return s && s[0] ? s : "-";
}

static void header(json_object *reply, size_t n)
{
	printf("device %s (%s), this host %s, %s, address %s\n", or_dash(jstr(reply, "device")),
	       or_dash(jstr(reply, "netdev")), or_dash(jstr(reply, "self")), jstr(reply, "role"),
	       or_dash(jstr(reply, "address")));
	printf("master %s, epoch %lld, pool %s, %zu host(s), %zu link(s)%s\n\n",
	       or_dash(jstr(reply, "master")), (long long)jint(reply, "epoch"), jstr(reply, "pool"),
	       n, jget(reply, "links") ? json_object_array_length(jget(reply, "links")) : 0,
	       jbool(reply, "converged") ? "" : ", not converged");
}

static void row(struct libscols_line *l, json_object *o, const char *array)
{
	json_object *nb = jget(o, "neighbours");
	char buf[512] = "";
	size_t off = 0;

	for (size_t j = 0; nb && j < json_object_array_length(nb) && off < sizeof(buf) - 20; j++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", j ? "," : "",
					json_object_get_string(json_object_array_get_idx(nb, j)));
	cell(l, 0, "%s%s", jstr(o, "guid"), jbool(o, "self") ? "*" : "");
	cell(l, 1, "%s", jbool(o, "master") ? "master" : "standby");
	cell(l, 2, "%lld", (long long)jint(o, "priority"));
	cell(l, 3, "%s", or_dash(jstr(o, "address")));
	cell(l, 4, "%lld", (long long)jint(o, "epoch"));
	cell(l, 5, "%.1fs", jint(o, "age_ms") / 1000.0);
	cell(l, 6, "%s", or_dash(buf));
}

static const char *const columns[] = { "GUID", "ROLE", "PRIO", "ADDRESS", "EPOCH", "AGE",
				       "NEIGHBOURS" };
static const char *const arrays[] = { "hosts", NULL };

static const ListVerb fabric_list = {
	.name = "fabric",
	.columns = columns,
	.n_columns = ELEMENTSOF(columns),
	.arrays = arrays,
	.row = row,
	.header = header,
};

int verb_fabric(int argc, char **argv)
{
	return list_verb(&fabric_list, argc, argv);
}
