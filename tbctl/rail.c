// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl rail enable|disable DEVICE LINK RAIL: restore / cut a rail (root only; emu rails now). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbctl.h"

static int parse_num(const char *s, const char *what, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return usage_error("bad %s \"%s\" (%lld..%lld)", what, s, min, max);
	*out = v;
	return 0;
}

int verb_rail(int argc, char **argv)
{
	json_object *req, *reply = NULL, *rail;
	long long link, id;
	bool disable;
	int r;

	if (argc < 2)
		return usage_error("rail needs enable|disable DEVICE LINK RAIL");
	if (!strcmp(argv[1], "disable"))
		disable = true;
	else if (!strcmp(argv[1], "enable"))
		disable = false;
	else
		return usage_error("rail: unknown action \"%s\" (enable or disable)", argv[1]);
	if (argc != 5)
		return usage_error("rail %s needs DEVICE LINK RAIL", argv[1]);
	if (!argv[2][0] || strlen(argv[2]) >= 32)
		return usage_error("bad DEVICE \"%s\"", argv[2]);
	r = parse_num(argv[3], "LINK", 1, 4294967295LL, &link);
	if (r)
		return r;
	r = parse_num(argv[4], "RAIL", 0, 15, &id);
	if (r)
		return r;
	req = json_object_new_object();
	json_object_object_add(req, "method",
			       json_object_new_string(disable ? "rail-disable" : "rail-enable"));
	json_object_object_add(req, "device", json_object_new_string(argv[2]));
	json_object_object_add(req, "link", json_object_new_int64(link));
	json_object_object_add(req, "rail", json_object_new_int64(id));
	r = call(req, &reply);
	json_object_put(req);
	if (r)
		return r;
	rail = jget(reply, "rail");
	if (arg.json)
		print_json(reply);
	else if (rail)
		printf("rail %s/%lld/%lld: %s%s\n", argv[2], link, id, jstr(rail, "state"),
		       jbool(rail, "cut") ? " (cut)" : "");
	json_object_put(reply);
	return EXIT_OK;
}
