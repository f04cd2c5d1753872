// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl devices: the tbrdma devices the daemon sees (one RDMA device + netdev each). */
#include <stdio.h>

#include "tbctl.h"

void print_devices_table(json_object *devices);

void print_devices_table(json_object *devices)
{
	static const char *const cols[] = { "DEVICE", "INDEX", "NETDEV", "IFINDEX", "GUID", "HOST",
					    "LINKS", "RAILS-UP" };
	struct libscols_table *t = table_new(cols, 8);
	size_t n = devices ? json_object_array_length(devices) : 0;

	for (size_t i = 0; i < n; i++) {
		json_object *d = json_object_array_get_idx(devices, i);
		struct libscols_line *l = table_add(t);

		cell(l, 0, "%s", jstr(d, "name"));
		cell(l, 1, "%lld", (long long)jint(d, "index"));
		cell(l, 2, "%s", jstr(d, "netdev"));
		cell(l, 3, "%lld", (long long)jint(d, "ifindex"));
		cell(l, 4, "%s", jstr(d, "guid"));
		cell(l, 5, "%s", jbool(d, "host") ? "yes" : "no");
		cell(l, 6, "%lld", (long long)jint(d, "links"));
		cell(l, 7, "%lld", (long long)jint(d, "rails_up"));
	}
	table_print(t);
}

int verb_devices(int argc, char **argv)
{
	json_object *reply = NULL;
	int r;

	(void)argv;
	if (argc > 1)
		return usage_error("devices takes no arguments");
	r = call_method("devices", NULL, &reply);
	if (r)
		return r;
	if (arg.json)
		print_json(reply);
	else {
		size_t n = json_object_array_length(jget(reply, "devices"));

		print_devices_table(jget(reply, "devices"));
		if (arg.legend)
			printf("%s%zu device%s listed.\n", n ? "\n" : "", n, n == 1 ? "" : "s");
	}
	json_object_put(reply);
	return EXIT_OK;
}
