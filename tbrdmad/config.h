/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* /etc/tbrdmad.conf: an INI file with a section [Daemon] and any number of [Partition] sections
 * (docs/sweep.md "Partitions"); every key has a default
 * (docs/tbrdmad.conf in tbrdmad/tbrdmad.conf). Command-line options override it. */
#pragma once

#include <stdint.h>

#include "partitions.h"

typedef struct Config {
	char *socket_path;	/* Socket= */
	unsigned socket_mode;	/* SocketMode= (octal) */
	char *state_dir;	/* StateDirectory= */
	char *device;		/* Device= ("" / unset: every tbrdma device) */
	uint64_t refresh_usec;	/* RefreshSec= */
	uint64_t retry_usec;	/* RetrySec= */
	unsigned max_clients;	/* MaxClients= */
	unsigned max_clients_per_user;	/* MaxClientsPerUser= (root: no per-uid limit) */
	int log_level;		/* LogLevel= */
	char *family;		/* GenlFamily= (tests only) */
	/* the sweep (docs/sweep.md) */
	int sweep;		/* Sweep= (boolean) */
	char *pool;		/* Pool= IPv4 CIDR the master assigns from */
	char *pool6;		/* Pool6= IPv6 /64 (GUID-derived addresses), "" off */
	unsigned priority;	/* Priority= 0..255, highest wins the election */
	uint64_t hello_usec;	/* HelloSec= light sweep period */
	uint64_t dead_usec;	/* DeadSec= a host not heard of for this long is gone */
	char *fabric_key_file;	/* FabricKeyFile= ("" / unset: no fabric key) */
	uint32_t link_key_grace_ms;	/* LinkKeyGraceSec= the kernel's previous key stays good */
	unsigned map_keep_days;	/* MapKeepDays= guid2addr entries of hosts gone this long expire */
	PartitionConfig partitions;	/* [Partition] sections (the master publishes them) */
} Config;

int config_init(Config *c);
/* a string setting (command line or file): *@dst replaced by a copy of @v; -ENOMEM */
int config_set_str(char **dst, const char *v);	/* defaults; -ENOMEM */
void config_done(Config *c);
/* Parses @text (named @fname in messages): unknown sections/keys and bad values are logged and
 * ignored, like systemd's parsers. Returns 0, or -ENOMEM. */
int config_parse_string(Config *c, const char *text, const char *fname);
/* A missing file is not an error (defaults). Other read errors are returned (-errno). */
int config_load(Config *c, const char *path);
