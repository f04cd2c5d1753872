// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl: query and control tbrdmad (issue 7). Exit: 0 ok, 1 error (doctor: a check failed), 2 usage,
 * 3 daemon unreachable. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol.h"
#include "tbctl.h"

Options arg = { .socket = TBRDMAD_SOCKET, .legend = true };

static void help(void)
{
	printf("usage: tbctl [OPTIONS] COMMAND [ARGS]\n"
	       "Show and change the state of tbrdmad, the tbrdma daemon.\n\n"
	       "Commands:\n"
	       "  status                           daemon, kernel module, summary, devices (default)\n"
	       "  devices                          tbrdma devices\n"
	       "  links [DEVICE]                   links (one per peer) with counters\n"
	       "  rails [DEVICE]                   rails (ring pairs): state, speed, ring occupancy,\n"
	       "                                   counters; the columns read first (-v: all)\n"
	       "  rail disable|enable DEV LINK RAIL  cut / restore a rail (root)\n"
	       "  sweep                            re-read the kernel state, heavy sweep now (root)\n"
	       "  fabric [--dot]                   hosts, links, master, addresses of the fabric;\n"
	       "                                   --dot: Graphviz dot text with this host's routes\n"
	       "  peers                            known hosts: address, links, role, hops\n"
	       "  routes                           the forwarding table: destination, next hop, path\n"
	       "  partitions                       P_Key partitions and this host's P_Key table\n"
	       "  counters [DEVICE]                traffic and error counters per device, link, rail;\n"
	       "                                   the ones read first (-v: all of them)\n"
	       "  eth bind|unbind IFNAME [DEVICE]  NIC carries DEVICE's eth rails, or not (root)\n"
	       "  doctor                           checks of what tbrdma needs, with fixes\n"
	       "  capture -w FILE [-i DEVICE] [-c COUNT] [-s SNAPLEN] [--rail N] [--qpn N]\n"
	       "                                   the device's frames as RoCE v2 into a pcap\n"
	       "                                   file, until COUNT or ^C (root)\n"
	       "  version                          tbctl's and tbrdmad's versions\n\n"
	       "Options:\n"
	       "  --socket PATH   tbrdmad's socket (default $TBCTL_SOCKET or %s)\n"
	       "  --json          print the daemon's JSON objects (docs/json.md), pretty-printed\n"
	       "  --no-legend     tables without their header line\n"
	       "  -v, --verbose   counters, rails: every column, not only the ones read first\n"
	       "  -h, --help      this help\n\n"
	       "Exit status: 0 ok, 1 error (doctor: a check failed), 2 usage error, 3 tbrdmad\n"
	       "unreachable.\n",
	       TBRDMAD_SOCKET);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tbctl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see tbctl --help)\n");
	return EXIT_USAGE;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} verbs[] = {
	{ "status", verb_status },
	{ "devices", verb_devices },
	{ "links", verb_links },
	{ "rails", verb_rails },
	{ "rail", verb_rail },
	{ "sweep", verb_sweep },
	{ "fabric", verb_fabric },
	{ "peers", verb_peers },
	{ "routes", verb_routes },
	{ "partitions", verb_partitions },
	{ "counters", verb_counters },
	{ "eth", verb_eth },
	{ "doctor", verb_doctor },
	{ "capture", verb_capture },
	{ "version", verb_version },
};

int main(int argc, char **argv)
{
	enum { OPT_SOCKET = 256, OPT_JSON, OPT_NO_LEGEND, OPT_DOT };
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "no-legend", no_argument, NULL, OPT_NO_LEGEND },
		{ "dot", no_argument, NULL, OPT_DOT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env = getenv("TBCTL_SOCKET"), *nc = getenv("NO_COLOR");
	char *verb_argv[16];
	int c, n = 0, v, gargc = argc;

	/* capture has options of its own: tbctl's end at its verb */
	for (v = 1; v < argc; v++) {
		if (!strcmp(argv[v], "--socket")) {
			v++;
			continue;
		}
		if (argv[v][0] != '-')
			break;
	}
	if (v < argc && !strcmp(argv[v], "capture"))
		gargc = v;

	if (env && env[0])
		arg.socket = env;
	arg.color = isatty(STDOUT_FILENO) && !(nc && nc[0]);
	opterr = 0;
	while ((c = getopt_long(gargc, argv, ":hv", opts, NULL)) != -1) {
		switch (c) {
		case OPT_SOCKET:
			if (!optarg[0])
				return usage_error("--socket needs a path");
			arg.socket = optarg;
			break;
		case OPT_JSON: arg.json = true; break;
		case OPT_NO_LEGEND: arg.legend = false; break;
		case OPT_DOT: arg.dot = true; break;
		case 'v': arg.verbose = true; break;
		case 'h': help(); return EXIT_OK;
		case ':':
			return usage_error("option %s needs an argument", argv[optind - 1]);
		default:
			if (optopt)
				return usage_error("unknown option -%c", optopt);
			return usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (gargc < argc)
		return verb_capture(argc - gargc, argv + gargc);
	for (int i = optind; i < argc; i++) {
		if (n >= (int)(sizeof(verb_argv) / sizeof(verb_argv[0])))
			return usage_error("too many arguments");
		verb_argv[n++] = argv[i];
	}
	if (n == 0)
		verb_argv[n++] = "status";
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(verb_argv[0], verbs[i].name))
			return verbs[i].fn(n, verb_argv);
	return usage_error("unknown command \"%s\"", verb_argv[0]);
}
