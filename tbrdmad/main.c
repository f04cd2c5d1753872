// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbrdmad: the tbrdma control-plane daemon (issue 6). See tbrdmad --help and docs/json.md. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "manager.h"
#include "protocol.h"
#include "util.h"

static void help(void)
{
	printf("usage: tbrdmad [OPTIONS]\n"
	       "The tbrdma control-plane daemon: follows the kernel's tbrdma devices, links and rails\n"
	       "(generic netlink family \"tbrdma\") and serves their state as newline-delimited JSON\n"
	       "on a unix socket (docs/json.md). Runs in the foreground (systemd Type=notify).\n\n"
	       "  --config PATH       configuration file (default %s; missing: defaults)\n"
	       "  --socket PATH       state socket (default %s)\n"
	       "  --state-dir PATH    state directory (default %s)\n"
	       "  --device NAME       manage only this tbrdma device (e.g. tbrdma1)\n"
	       "  --log-level LEVEL   err, warning, notice, info (default), debug\n"
	       "  --genl-family NAME  generic netlink family name (tests; default tbrdma)\n"
	       "  --version           print the version\n"
	       "  -h, --help          this help\n",
	       TBRDMAD_CONFIG, TBRDMAD_SOCKET, TBRDMAD_STATE_DIR);
}

enum { OPT_CONFIG = 256, OPT_SOCKET, OPT_STATE_DIR, OPT_DEVICE, OPT_LOG_LEVEL, OPT_FAMILY,
       OPT_VERSION };

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "genl-family", required_argument, NULL, OPT_FAMILY },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config_path = TBRDMAD_CONFIG, *o_socket = NULL, *o_state = NULL,
		   *o_device = NULL, *o_family = NULL;
	int o_level = -1, c, r;
	Config config;
	Manager *m = NULL;

	log_open("tbrdmad");
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_CONFIG: config_path = optarg; break;
		case OPT_SOCKET:
			if (optarg[0] != '/' || strlen(optarg) >= 108) {
				fprintf(stderr, "tbrdmad: --socket needs an absolute path shorter than 108 bytes\n");
				return 2;
			}
			o_socket = optarg;
			break;
		case OPT_STATE_DIR: o_state = optarg; break;
		case OPT_DEVICE:
			if (!optarg[0] || strlen(optarg) >= 32) {
				fprintf(stderr, "tbrdmad: bad --device\n");
				return 2;
			}
			o_device = optarg;
			break;
		case OPT_LOG_LEVEL:
			o_level = log_level_from_string(optarg);
			if (o_level < 0) {
				fprintf(stderr, "tbrdmad: bad --log-level %s\n", optarg);
				return 2;
			}
			break;
		case OPT_FAMILY:
			if (!optarg[0] || strlen(optarg) >= 16) {
				fprintf(stderr, "tbrdmad: bad --genl-family\n");
				return 2;
			}
			o_family = optarg;
			break;
		case OPT_VERSION: printf("tbrdmad %s (schema %d)\n", TBRDMAD_VERSION, TBRDMAD_SCHEMA); return 0;
		case 'h': help(); return 0;
		default: fprintf(stderr, "tbrdmad: see --help\n"); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tbrdmad: unexpected argument %s (see --help)\n", argv[optind]);
		return 2;
	}
	if (o_level >= 0)
		log_set_max_level(o_level);
	if (config_init(&config) < 0)
		return 1;
	r = config_load(&config, config_path);
	if (r < 0) {
		config_done(&config);
		return 1;
	}
	if ((o_socket && config_set_str(&config.socket_path, o_socket) < 0) ||
	    (o_state && config_set_str(&config.state_dir, o_state) < 0) ||
	    (o_device && config_set_str(&config.device, o_device) < 0) ||
	    (o_family && config_set_str(&config.family, o_family) < 0)) {
		config_done(&config);
		return 1;
	}
	log_set_max_level(o_level >= 0 ? o_level : config.log_level);

	r = manager_new(&m, &config);
	if (r < 0) {
		log_error_errno(r, "cannot start: %m");
		config_done(&config);
		return 1;
	}
	log_info("tbrdmad %s starting (socket %s, state %s%s%s)", TBRDMAD_VERSION,
		 m->config.socket_path, m->config.state_dir, m->config.device ? ", device " : "",
		 m->config.device ? m->config.device : "");
	r = manager_start(m);
	if (r >= 0)
		r = manager_run(m);
	if (r < 0)
		log_error_errno(r, "exiting: %m");
	manager_free(m);
	return r < 0 ? 1 : 0;
}
