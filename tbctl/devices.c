// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl devices: the tbrdma devices the daemon sees (one RDMA device + netdev each). */
#include "tbctl.h"

static void row(struct libscols_line *l, json_object *d, const char *array)
{
	cell(l, 0, "%s", jstr(d, "name"));
	cell(l, 1, "%lld", (long long)jint(d, "index"));
	cell(l, 2, "%s", jstr(d, "netdev"));
	cell(l, 3, "%lld", (long long)jint(d, "ifindex"));
	cell(l, 4, "%s", jstr(d, "guid"));
	cell(l, 5, "%s", jbool(d, "host") ? "yes" : "no");
	cell(l, 6, "%lld", (long long)jint(d, "links"));
	cell(l, 7, "%lld", (long long)jint(d, "rails_up"));
	/* "key", or "none" (trusted cables); and the peers refused for want of it */
	cell(l, 8, "%s", jbool(d, "auth") ? "key" : "none");
	cell(l, 9, "%lld", (long long)jint(d, "auth_refused"));
}

static const char *const columns[] = { "DEVICE", "INDEX", "NETDEV", "IFINDEX", "GUID", "HOST",
				       "LINKS", "RAILS-UP", "AUTH", "AUTH-REFUSED" };
static const char *const arrays[] = { "devices", NULL };

/* also status' table of devices */
const ListVerb devices_list = {
	.name = "devices",
	.columns = columns,
	.n_columns = ELEMENTSOF(columns),
	.arrays = arrays,
	.row = row,
	.noun = "device",
};

int verb_devices(int argc, char **argv)
{
	return list_verb(&devices_list, argc, argv);
}
