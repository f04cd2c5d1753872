// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl partitions: the P_Key partitions the master publishes ([Partition] in tbrdmad.conf,
 * docs/sweep.md "Partitions") with their members, then this host's P_Key table as the kernel
 * has it: slot (the pkey_index verbs use), P_Key, partition, membership, name. */
#include <stdio.h>

#include "tbctl.h"

static void header(json_object *reply, size_t n)
{
	json_object *parts = jget(reply, "partitions");
	size_t np = parts ? json_object_array_length(parts) : 0;

	printf("device %s, master %s, %s, %lld failed update(s)\n",
	       or_dash(jstr(reply, "device")), or_dash(jstr(reply, "master")),
	       np ? "partitions from the master" : "no partitions configured: the default partition "
	       "for every host", (long long)jint(reply, "errors"));
	for (size_t i = 0; i < np; i++) {
		json_object *p = json_object_array_get_idx(parts, i), *m = jget(p, "members");

		printf("  %s %s:", jstr(p, "partition"), or_dash(jstr(p, "name")));
		for (size_t j = 0; m && j < json_object_array_length(m); j++) {
			json_object *x = json_object_array_get_idx(m, j);

			printf("%s %s=%s", j ? "," : "", jstr(x, "guid"), jstr(x, "membership"));
		}
		printf("\n");
	}
	printf("\n");
	(void)n;
}

static void row(struct libscols_line *l, json_object *o, const char *array)
{
	(void)array;
	cell(l, 0, "%lld", (long long)jint(o, "index"));
	cell(l, 1, "%s", jstr(o, "pkey"));
	cell(l, 2, "%s", jstr(o, "partition"));
	cell(l, 3, "%s", jstr(o, "membership"));
	cell(l, 4, "%s", or_dash(jstr(o, "name")));
}

static const char *const columns[] = { "INDEX", "PKEY", "PARTITION", "MEMBERSHIP", "NAME" };
static const char *const arrays[] = { "table", NULL };

static const ListVerb partitions_list = {
	.name = "partitions",
	.columns = columns,
	.n_columns = ELEMENTSOF(columns),
	.arrays = arrays,
	.row = row,
	.noun = "P_Key",
	.header = header,
};

int verb_partitions(int argc, char **argv)
{
	return list_verb(&partitions_list, argc, argv);
}
