// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl sweep: ask the daemon to re-read the kernel state now (root only). The fabric sweep of
 * issue 6 (neighbour discovery, election, addresses) will hang off the same request. */
#include <stdio.h>

#include "tbctl.h"

int verb_sweep(int argc, char **argv)
{
	json_object *reply = NULL, *s;
	int r;

	(void)argv;
	if (argc > 1)
		return usage_error("sweep takes no arguments");
	r = call_method("sweep", NULL, &reply);
	if (r)
		return r;
	s = jget(reply, "summary");
	if (arg.json)
		print_json(reply);
	else
		printf("swept: %lld device(s), %lld link(s) (%lld up), %lld of %lld rail(s) up\n",
		       (long long)jint(s, "devices"), (long long)jint(s, "links"),
		       (long long)jint(s, "links_up"), (long long)jint(s, "rails_up"),
		       (long long)jint(s, "rails"));
	json_object_put(reply);
	return EXIT_OK;
}
