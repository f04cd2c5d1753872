// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Configuration file parsing (see tbrdmad.conf for every key with its default). */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "fabric.h"
#include "log.h"
#include "protocol.h"
#include "util.h"

#define USEC_PER_SEC 1000000ULL

int config_init(Config *c)
{
	*c = (Config){
		.socket_path = strdup(TBRDMAD_SOCKET),
		.socket_mode = 0666,
		.state_dir = strdup(TBRDMAD_STATE_DIR),
		.device = NULL,
		.refresh_usec = 2 * USEC_PER_SEC,
		.retry_usec = 1 * USEC_PER_SEC,
		.max_clients = 256,
		.max_clients_per_user = 16,
		.log_level = LOG_INFO,
		.family = strdup("tbrdma"),
		.sweep = 1,
		.pool = strdup("10.99.0.0/24"),
		.pool6 = strdup("fd74:6272:646d::/64"),
		.priority = 100,
		.hello_usec = 1 * USEC_PER_SEC,
		.dead_usec = 4 * USEC_PER_SEC,
		.map_keep_days = 30,
		.link_key_grace_ms = 60000,
	};
	if (!c->socket_path || !c->state_dir || !c->family || !c->pool || !c->pool6)
		return -ENOMEM;
	return 0;
}

void config_done(Config *c)
{
	free(c->socket_path);
	free(c->state_dir);
	free(c->device);
	free(c->family);
	free(c->pool);
	free(c->pool6);
	free(c->fabric_key_file);
	*c = (Config){ 0 };
}

static char *strip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* seconds with decimals, 0.01 .. 3600 */
static int parse_sec(const char *v, uint64_t *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || !(d >= 0.01 && d <= 3600))
		return -EINVAL;
	*out = (uint64_t)(d * USEC_PER_SEC);
	return 0;
}

static int parse_uint(const char *v, int base, unsigned long max, unsigned *out)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(v, &end, base);
	if (errno || end == v || *end || v[0] == '-' || x > max)
		return -EINVAL;
	*out = (unsigned)x;
	return 0;
}

/* 1..65536; *out unchanged on error */
static int parse_count(const char *v, unsigned *out)
{
	unsigned x;
	int k = parse_uint(v, 10, 65536, &x);

	if (!k && x == 0)
		k = -EINVAL;
	if (!k)
		*out = x;
	return k;
}

int config_set_str(char **dst, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static int assign(Config *c, const char *key, const char *v, const char *fname, unsigned line)
{
	int k = 0;

	if (!strcmp(key, "Socket")) {
		if (v[0] != '/' || strlen(v) >= 108)
			goto bad;
		return config_set_str(&c->socket_path, v);
	} else if (!strcmp(key, "SocketMode")) {
		k = parse_uint(v, 8, 0777, &c->socket_mode);
	} else if (!strcmp(key, "StateDirectory")) {
		if (v[0] != '/')
			goto bad;
		return config_set_str(&c->state_dir, v);
	} else if (!strcmp(key, "Device")) {
		if (!v[0]) {
			free(c->device);
			c->device = NULL;
			return 0;
		}
		if (strlen(v) >= 32)
			goto bad;
		return config_set_str(&c->device, v);
	} else if (!strcmp(key, "RefreshSec")) {
		k = parse_sec(v, &c->refresh_usec);
	} else if (!strcmp(key, "RetrySec")) {
		k = parse_sec(v, &c->retry_usec);
	} else if (!strcmp(key, "MaxClients")) {
		k = parse_count(v, &c->max_clients);
	} else if (!strcmp(key, "MaxClientsPerUser")) {
		k = parse_count(v, &c->max_clients_per_user);
	} else if (!strcmp(key, "LogLevel")) {
		k = log_level_from_string(v);
		if (k >= 0) {
			c->log_level = k;
			k = 0;
		}
	} else if (!strcmp(key, "GenlFamily")) {
		if (!v[0] || strlen(v) >= 16)
			goto bad;
		return config_set_str(&c->family, v);
	} else if (!strcmp(key, "Sweep")) {
		if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "on"))
			c->sweep = 1;
		else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "off"))
			c->sweep = 0;
		else
			goto bad;
	} else if (!strcmp(key, "Pool")) {
		Pool p;

		if (pool_parse(&p, v) < 0)
			goto bad;
		return config_set_str(&c->pool, v);
	} else if (!strcmp(key, "Pool6")) {
		Pool6 p;

		if (pool6_parse(&p, v) < 0)
			goto bad;
		return config_set_str(&c->pool6, v);
	} else if (!strcmp(key, "Priority")) {
		k = parse_uint(v, 10, 255, &c->priority);
	} else if (!strcmp(key, "HelloSec")) {
		k = parse_sec(v, &c->hello_usec);
	} else if (!strcmp(key, "DeadSec")) {
		k = parse_sec(v, &c->dead_usec);
	} else if (!strcmp(key, "FabricKeyFile")) {
		if (v[0] && v[0] != '/')
			goto bad;
		return config_set_str(&c->fabric_key_file, v);
	} else if (!strcmp(key, "LinkKeyGraceSec")) {
		unsigned sec;

		k = parse_uint(v, 10, 86400, &sec);
		if (k >= 0)
			c->link_key_grace_ms = sec * 1000;
	} else if (!strcmp(key, "MapKeepDays")) {
		k = parse_count(v, &c->map_keep_days);
	} else {
		log_warning("%s:%u: unknown key %s, ignoring", fname, line, key);
		return 0;
	}
	if (k >= 0)
		return 0;
bad:
	log_warning("%s:%u: bad value for %s: \"%s\", ignoring", fname, line, key, v);
	return 0;
}

/* a key of the [Partition] section being read (@p) */
static void assign_partition(Partition *p, const char *key, const char *v, const char *fname,
			     unsigned line)
{
	char why[128];
	size_t n = strlen(v);

	if (!strcmp(key, "Name")) {
		if (!n || n >= sizeof(p->name))
			goto bad;
		for (size_t i = 0; i < n; i++)
			if (!isalnum((unsigned char)v[i]) && !strchr("_.-", v[i]))
				goto bad;
		memcpy(p->name, v, n + 1);
	} else if (!strcmp(key, "PKey")) {
		if (partition_parse_pkey(v, &p->part) < 0)
			goto bad;
	} else if (!strcmp(key, "Members")) {
		if (partition_parse_members(p, v, why, sizeof(why)) < 0)
			log_warning("%s:%u: Members=: %s, ignoring the line", fname, line, why);
	} else {
		log_warning("%s:%u: unknown key %s in [Partition], ignoring", fname, line, key);
	}
	return;
bad:
	log_warning("%s:%u: bad value for %s: \"%s\", ignoring", fname, line, key, v);
}

/* The [Partition] section that ends at @line: kept if it has a PKey= no earlier one has. */
static void end_partition(PartitionConfig *pc, const char *fname, unsigned line)
{
	Partition *p = &pc->p[pc->n];

	if (!p->part) {
		log_warning("%s:%u: [Partition] without PKey=, ignoring the section", fname, line);
		goto drop;
	}
	for (unsigned i = 0; i < pc->n; i++)
		if (pc->p[i].part == p->part) {
			log_warning("%s:%u: [Partition] 0x%04x given twice, ignoring the second",
				    fname, line, p->part);
			goto drop;
		}
	if (!p->name[0])
		snprintf(p->name, sizeof(p->name), "%s",
			 p->part == PKEY_DEFAULT_PART ? "default" : "");
	pc->n++;
	return;
drop:
	memset(p, 0, sizeof(*p));
}

int config_parse_string(Config *c, const char *text, const char *fname)
{
	_cleanup_free_ char *copy = strdup(text);
	char *p, *next;
	unsigned line = 0;
	bool in_daemon = true;	/* keys before any section count as [Daemon] */
	Partition *part = NULL;	/* in a [Partition] section */

	if (!copy)
		return -ENOMEM;
	for (p = copy; p; p = next) {
		char *eq, *l;
		int k;

		next = strchr(p, '\n');
		if (next)
			*next++ = '\0';
		line++;
		l = strip(p);
		if (!l[0] || l[0] == '#' || l[0] == ';')
			continue;
		if (l[0] == '[') {
			size_t n = strlen(l);

			if (l[n - 1] != ']') {
				log_warning("%s:%u: bad section header, ignoring", fname, line);
				in_daemon = false;
				continue;
			}
			l[n - 1] = '\0';
			if (part)
				end_partition(&c->partitions, fname, line);
			part = NULL;
			in_daemon = !strcmp(l + 1, "Daemon");
			if (!strcmp(l + 1, "Partition")) {
				if (c->partitions.n < PARTITIONS_MAX) {
					part = &c->partitions.p[c->partitions.n];
					memset(part, 0, sizeof(*part));
				} else {
					log_warning("%s:%u: more than %d partitions, ignoring the section",
						    fname, line, PARTITIONS_MAX);
				}
			} else if (!in_daemon) {
				log_warning("%s:%u: unknown section [%s], ignoring", fname, line, l + 1);
			}
			continue;
		}
		if (!in_daemon && !part)
			continue;
		eq = strchr(l, '=');
		if (!eq) {
			log_warning("%s:%u: not KEY=VALUE, ignoring", fname, line);
			continue;
		}
		*eq = '\0';
		if (part) {
			assign_partition(part, strip(l), strip(eq + 1), fname, line);
			continue;
		}
		k = assign(c, strip(l), strip(eq + 1), fname, line);
		if (k < 0)
			return k;
	}
	if (part)
		end_partition(&c->partitions, fname, line);
	return 0;
}

int config_load(Config *c, const char *path)
{
	_cleanup_free_ char *buf = NULL;
	size_t n = 0, cap = 0;
	FILE *f = fopen(path, "re");
	int k;

	if (!f) {
		if (errno == ENOENT) {
			log_debug("%s: no such file, using defaults", path);
			return 0;
		}
		return log_error_errno(errno, "%s: %m", path);
	}
	for (;;) {
		size_t r;

		if (cap - n < 4096) {
			char *b;

			if (cap > 1 << 20) {
				fclose(f);
				return log_error_errno(EFBIG, "%s: file too large", path);
			}
			b = realloc(buf, cap + 8192);
			if (!b) {
				fclose(f);
				return -ENOMEM;
			}
			buf = b;
			cap += 8192;
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	k = ferror(f) ? -EIO : 0;
	fclose(f);
	if (k < 0)
		return log_error_errno(k, "%s: read error", path);
	buf[n] = '\0';
	return config_parse_string(c, buf, path);
}
