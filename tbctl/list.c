// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The skeleton of every read verb that lists the daemon's objects (devices, links, rails,
 * peers, fabric, counters): arguments, the query (--json: the reply as it is), one table line
 * per element of the reply's arrays, the legend. */
#include <stdio.h>
#include <string.h>

#include "tbctl.h"

static size_t count(const ListVerb *v, json_object *reply)
{
	size_t n = 0;

	for (const char *const *a = v->arrays; *a; a++) {
		json_object *arr = jget(reply, *a);

		n += arr ? json_object_array_length(arr) : 0;
	}
	return n;
}

int list_table(const ListVerb *v, json_object *reply)
{
	struct libscols_table *t = table_new(v->columns, v->n_columns);

	if (!t)
		return EXIT_ERROR;
	for (const char *const *a = v->arrays; *a; a++) {
		json_object *arr = jget(reply, *a);
		size_t n = arr ? json_object_array_length(arr) : 0;

		for (size_t i = 0; i < n; i++)
			v->row(table_add(t), json_object_array_get_idx(arr, i), *a);
	}
	return table_print(t);
}

int list_verb(const ListVerb *v, int argc, char **argv)
{
	json_object *reply = NULL;
	const char *device = NULL;
	size_t n;
	int r;

	if (!v->device && argc > 1)
		return usage_error("%s takes no arguments", v->name);
	if (argc > 2)
		return usage_error("%s takes at most DEVICE", v->name);
	if (argc == 2) {
		device = argv[1];
		if (!device[0] || device[0] == '-')
			return usage_error("bad DEVICE \"%s\"", device);
	}
	r = query(v->name, device, &reply);
	if (r || !reply)
		return r;
	n = count(v, reply);
	if (v->header)
		v->header(reply, n);
	r = list_table(v, reply);
	if (arg.legend && v->noun)
		printf("%s%zu %s%s listed%s.\n", n ? "\n" : "", n, v->noun, n == 1 ? "" : "s",
		       v->legend_note ? v->legend_note(reply) : "");
	json_object_put(reply);
	return r;
}
