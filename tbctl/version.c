// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl version: this tbctl's and the daemon's versions and schema. */
#include <stdio.h>

#include "protocol.h"
#include "tbctl.h"

int verb_version(int argc, char **argv)
{
	json_object *reply = NULL;
	int r;

	(void)argv;
	if (argc > 1)
		return usage_error("version takes no arguments");
	r = call_method("version", NULL, &reply);
	if (r)
		return r;
	if (arg.json) {
		print_json(reply);
	} else {
		printf("tbctl %s (schema %d)\n", TBRDMAD_VERSION, TBRDMAD_SCHEMA);
		printf("%s %s (schema %lld)\n", jstr(reply, "daemon"), jstr(reply, "version"),
		       (long long)jint(reply, "schema_version"));
	}
	json_object_put(reply);
	return EXIT_OK;
}
