// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl status: the daemon, the kernel connection, a summary and the devices. */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "tbctl.h"

int verb_status(int argc, char **argv)
{
	json_object *reply = NULL, *d, *k, *s;
	char up[64];
	int r;

	(void)argv;
	if (argc > 1)
		return usage_error("status takes no arguments");
	r = query("status", NULL, &reply);
	if (r || !reply)
		return r;
	d = jget(reply, "daemon");
	k = jget(reply, "kernel");
	s = jget(reply, "summary");
	format_duration(up, sizeof(up), juint(d, "uptime_sec"));
	printf("    Daemon: tbrdmad %s (pid %lld, up %s, %lld client%s)%s%s\n", jstr(d, "version"),
	       (long long)jint(d, "pid"), up, (long long)jint(d, "clients"),
	       jint(d, "clients") == 1 ? "" : "s",
	       jget(d, "device_filter") ? ", device " : "", jstr(d, "device_filter"));
	if (jbool(k, "present")) {
		uint64_t last = juint(k, "last_sync_usec");
		struct timespec now;
		double ago;

		clock_gettime(CLOCK_REALTIME, &now);
		ago = (double)now.tv_sec + now.tv_nsec / 1e9 - last / 1e6;
		printf("    Kernel: present (family %s, %" PRIu64 " syncs, %" PRIu64
		       " events, last sync %.1fs ago)\n",
		       jstr(k, "family"), juint(k, "syncs"), juint(k, "events"), ago < 0 ? 0 : ago);
	} else {
		printf("    Kernel: absent: %s\n", jget(k, "error") ? jstr(k, "error") : "not connected");
	}
	printf("   Devices: %lld\n", (long long)jint(s, "devices"));
	printf("     Links: %lld (%lld up)\n", (long long)jint(s, "links"), (long long)jint(s, "links_up"));
	/* links held back: they claim a host the fabric reaches elsewhere (docs/sweep.md "Trust") */
	for (size_t i = 0; i < json_object_array_length(jget(s, "held")); i++)
		printf("      Held: %s\n", json_object_get_string(
			json_object_array_get_idx(jget(s, "held"), i)));
	printf("     Rails: %lld (%lld up)\n", (long long)jint(s, "rails"), (long long)jint(s, "rails_up"));
	if (json_object_array_length(jget(reply, "devices")) > 0) {
		printf("\n");
		list_table(&devices_list, reply);
	}
	json_object_put(reply);
	return EXIT_OK;
}
