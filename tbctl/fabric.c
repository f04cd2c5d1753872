// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl fabric: the sweep's view of the fabric (docs/sweep.md): master, epoch, this host's
 * address, then one line per host with its address and neighbours. With --dot: the same as
 * Graphviz dot text, the links this host's routes use drawn bold with their route count. */
#include <stdio.h>
#include <string.h>

#include "tbctl.h"

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

/* how many of this host's routes (@routes: the "routes" reply) cross the link a - b */
static int route_uses(json_object *routes, const char *self, const char *a, const char *b)
{
	json_object *rs = jget(routes, "routes");
	int n = 0;

	for (size_t i = 0; rs && i < json_object_array_length(rs); i++) {
		json_object *p = jget(json_object_array_get_idx(rs, i), "path");
		const char *prev = self;

		for (size_t k = 0; p && k < json_object_array_length(p); k++) {
			const char *g = json_object_get_string(json_object_array_get_idx(p, k));

			if (prev && g && ((!strcmp(prev, a) && !strcmp(g, b)) ||
					  (!strcmp(prev, b) && !strcmp(g, a))))
				n++;
			prev = g;
		}
	}
	return n;
}

static int fabric_dot(void)
{
	json_object *fab = NULL, *routes = NULL, *hosts, *links;
	const char *self;
	int r;

	r = call_method("fabric", NULL, &fab);
	if (r)
		return r;
	r = call_method("routes", NULL, &routes);
	if (r) {
		json_object_put(fab);
		return r;
	}
	self = jstr(fab, "self");
	hosts = jget(fab, "hosts");
	links = jget(fab, "links");
	printf("graph tbrdma_fabric {\n");
	printf("\t// tbrdmad: this host %s, master %s, epoch %lld; bold: links this host's routes use\n",
	       or_dash(self), or_dash(jstr(fab, "master")), (long long)jint(fab, "epoch"));
	printf("\tnode [shape=box, fontname=monospace];\n");
	for (size_t i = 0; hosts && i < json_object_array_length(hosts); i++) {
		json_object *h = json_object_array_get_idx(hosts, i);

		printf("\t\"%s\" [label=\"%s\\n%s%s\"%s];\n", jstr(h, "guid"), jstr(h, "guid"),
		       or_dash(jstr(h, "address")), jbool(h, "master") ? "\\nmaster" : "",
		       jbool(h, "self") ? ", style=bold" : "");
	}
	for (size_t i = 0; links && i < json_object_array_length(links); i++) {
		json_object *l = json_object_array_get_idx(links, i);
		const char *a = jstr(l, "a"), *b = jstr(l, "b");
		int n = self ? route_uses(routes, self, a, b) : 0;

		if (n)
			printf("\t\"%s\" -- \"%s\" [penwidth=3, color=blue, label=\"%d route%s\"];\n",
			       a, b, n, n == 1 ? "" : "s");
		else
			printf("\t\"%s\" -- \"%s\";\n", a, b);
	}
	printf("}\n");
	json_object_put(fab);
	json_object_put(routes);
	return EXIT_OK;
}

int verb_fabric(int argc, char **argv)
{
	if (arg.dot) {
		if (argc > 1)
			return usage_error("fabric takes no arguments");
		return fabric_dot();
	}
	return list_verb(&fabric_list, argc, argv);
}
