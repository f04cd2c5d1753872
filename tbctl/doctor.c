// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl doctor (issue 47): what a first-time user needs, checked in order, each PASS, WARN or
 * FAIL with its fix in one line (SKIP: an earlier check failed). doctor-host.c reads the host;
 * this file runs the checks, asks tbrdmad, reads the RDMA ports and prints. Every host path is
 * read under $TBCTL_DOCTOR_ROOT (tests fake a host there; unset on a real one). Exit: 1 if any
 * check failed, else 0. */
#include <arpa/inet.h>
#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "protocol.h"

#define FRAME_FULL 4144		/* a 4096-byte payload and the largest header (TBR_HDR_MAX 48) */

static const char *const result_names[] = { "pass", "warn", "fail", "skip" };

void check_set(Check *c, Result r, const char *hint, const char *fmt, ...)
{
	va_list ap;

	c->result = r;
	snprintf(c->hint, sizeof(c->hint), "%s", hint);
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
}

void host_path(const Doctor *d, char *buf, size_t n, const char *fmt, ...)
{
	size_t k = snprintf(buf, n, "%s", d->root);
	va_list ap;

	if (k >= n)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + k, n - k, fmt, ap);
	va_end(ap);
}

bool read_line_file(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	bool ok;
	size_t k;

	if (!f)
		return false;
	ok = fgets(buf, n, f) != NULL;
	fclose(f);
	if (!ok)
		return false;
	for (k = strlen(buf); k && (buf[k - 1] == '\n' || buf[k - 1] == ' '); k--)
		buf[k - 1] = '\0';
	return true;
}

/* the length of array @a; 0 for NULL or another type */
static size_t alen(json_object *a)
{
	return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

/* ---- the RDMA device's ports and GIDs (sysfs) ----------------------------------------------- */

/* the ports of every tbrdma device, "/sys/class/infiniband/tbrdma0/ports/1", ... */
static int ports_glob(const Doctor *d, glob_t *g)
{
	char p[PATH_MAX];

	host_path(d, p, sizeof(p), "/sys/class/infiniband/tbrdma*/ports/*");
	return glob(p, 0, NULL, g);
}

/* "tbrdma0 port 1" of a ports_glob() path */
static void port_label(const char *path, char *buf, size_t n)
{
	const char *port = strrchr(path, '/') + 1, *dev = strstr(path, "/infiniband/") + 12;

	snprintf(buf, n, "%.*s port %s", (int)strcspn(dev, "/"), dev, port);
}

static void check_ports(Doctor *d, Check *c)
{
	char msg[400] = "", label[96], p[PATH_MAX], state[64], phys[64];
	Result r = RESULT_PASS;
	glob_t g;

	if (ports_glob(d, &g)) {
		check_set(c, RESULT_FAIL, "modprobe tbrdma", "no tbrdma RDMA device");
		globfree(&g);
		return;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t len = strlen(msg);
		const char *s;

		port_label(g.gl_pathv[i], label, sizeof(label));
		snprintf(p, sizeof(p), "%s/state", g.gl_pathv[i]);
		if (!read_line_file(p, state, sizeof(state)))
			snprintf(state, sizeof(state), "?: unknown");
		snprintf(p, sizeof(p), "%s/phys_state", g.gl_pathv[i]);
		if (!read_line_file(p, phys, sizeof(phys)))
			phys[0] = '\0';
		s = strchr(state, ' ') ? strchr(state, ' ') + 1 : state;
		if (strcmp(s, "ACTIVE"))
			r = RESULT_FAIL;
		snprintf(msg + len, sizeof(msg) - len, "%s%s %s%s%s%s", len ? "; " : "", label, s,
			 phys[0] ? " (" : "", strchr(phys, ' ') ? strchr(phys, ' ') + 1 : phys,
			 phys[0] ? ")" : "");
	}
	globfree(&g);
	if (r == RESULT_FAIL)
		strncat(msg, ": no rail up", sizeof(msg) - strlen(msg) - 1);
	check_set(c, r, r == RESULT_PASS ? "" :
		  "tbctl links and tbctl rails say which link or rail is down (cable, the peer's tbrdma)",
		  "%s", msg);
}

/* GID file @path ("fe80:0000:...") into @a; false for an unreadable or all-zero one */
static bool read_gid(const char *path, struct in6_addr *a)
{
	unsigned int w[8];
	char s[64];

	if (!read_line_file(path, s, sizeof(s)) ||
	    sscanf(s, "%x:%x:%x:%x:%x:%x:%x:%x", &w[0], &w[1], &w[2], &w[3], &w[4], &w[5], &w[6],
		   &w[7]) != 8)
		return false;
	for (int i = 0; i < 8; i++) {
		a->s6_addr[2 * i] = w[i] >> 8;
		a->s6_addr[2 * i + 1] = w[i] & 0xff;
	}
	return !IN6_IS_ADDR_UNSPECIFIED(a);
}

static void check_gids(Doctor *d, Check *c)
{
	const char *addr = jstr(d->fabric, "address"), *addr6 = jstr(d->fabric, "address6");
	char msg[400] = "", label[96], p[PATH_MAX + 32], s[INET6_ADDRSTRLEN], type[32];
	struct in6_addr want4 = { 0 }, want6, a;
	bool have4 = false, have6, any_missing = false, none = false, ip_gid = false;
	glob_t g, gids;

	if (inet_pton(AF_INET, addr, &want4.s6_addr[12]) == 1) {
		want4.s6_addr[10] = want4.s6_addr[11] = 0xff;
		have4 = true;
	}
	have6 = inet_pton(AF_INET6, addr6, &want6) == 1;
	if (ports_glob(d, &g)) {
		check_set(c, RESULT_SKIP, "", "needs a tbrdma RDMA device");
		globfree(&g);
		return;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		size_t len = strlen(msg), n = 0;
		bool found = false;

		port_label(g.gl_pathv[i], label, sizeof(label));
		snprintf(p, sizeof(p), "%s/gids/*", g.gl_pathv[i]);
		glob(p, 0, NULL, &gids);
		for (size_t j = 0; j < gids.gl_pathc; j++) {
			const char *idx = strrchr(gids.gl_pathv[j], '/') + 1;

			if (!read_gid(gids.gl_pathv[j], &a))
				continue;
			n++;
			ip_gid |= !IN6_IS_ADDR_LINKLOCAL(&a);
			if ((!have4 || memcmp(&a, &want4, sizeof(a))) && (!have6 || memcmp(&a, &want6, sizeof(a))))
				continue;
			snprintf(p, sizeof(p), "%s/gid_attrs/types/%s", g.gl_pathv[i], idx);
			if (!read_line_file(p, type, sizeof(type)))
				snprintf(type, sizeof(type), "?");
			inet_ntop(AF_INET6, &a, s, sizeof(s));
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s%s%sGID %s %s (%s)",
				 found ? ", " : len ? "; " : "", found ? "" : label, found ? "" : ": ",
				 idx, s, type);
			found = true;
		}
		globfree(&gids);
		if (!n)
			none = true;
		else if (!found && (have4 || have6))
			any_missing = true;
		if (!found)
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s%s: %zu GID%s%s",
				 strlen(msg) ? "; " : "", label, n, n == 1 ? "" : "s",
				 have4 || have6 ? ", none for the fabric's address" : "");
	}
	globfree(&g);
	if (none)
		check_set(c, RESULT_FAIL, "ip link show of the device's netdev: it must be up (tbrdmad brings it up)",
			  "%s", msg);
	else if (any_missing)
		check_set(c, RESULT_FAIL, "ip addr show of the device's netdev: tbrdmad's address must be on it",
			  "%s", msg);
	else if (!have4 && !have6 && !ip_gid)
		check_set(c, RESULT_WARN, "tbrdmad's sweep addresses the netdev (tbctl fabric); or ip addr add ADDR dev tbr0",
			  "%s, none of an IP address: rdma_cm and perftest -x need one", msg);
	else
		check_set(c, RESULT_PASS, "", "%s", msg);
}

/* ---- tbrdmad -------------------------------------------------------------------------------- */

static void ask_daemon(Doctor *d)
{
	json_object *r = NULL;

	arg.quiet = true;
	if (call_method("status", NULL, &d->status)) {
		snprintf(d->daemon_error, sizeof(d->daemon_error), "%s", call_error());
		json_object_put(d->status);
		d->status = NULL;
		return;
	}
	if (call_method("links", NULL, &d->links)) {
		json_object_put(d->links);
		d->links = NULL;
	}
	/* an error reply is kept too: unavailable means Sweep=no */
	call_method("fabric", NULL, &r);
	d->fabric = r;
}

static void check_daemon(Doctor *d, Check *c)
{
	json_object *dm = jget(d->status, "daemon"), *k = jget(d->status, "kernel"),
		    *s = jget(d->status, "summary");
	char up[64];

	if (!d->status) {
		check_set(c, RESULT_FAIL, "systemctl start tbrdmad (journalctl -u tbrdmad says why it stopped)",
			  "%s", d->daemon_error);
		return;
	}
	format_duration(up, sizeof(up), juint(dm, "uptime_sec"));
	if (!jbool(k, "present")) {
		check_set(c, RESULT_FAIL, "modprobe tbrdma",
			  "tbrdmad %s (pid %lld) runs without the kernel's state: %s", jstr(dm, "version"),
			  (long long)jint(dm, "pid"), jstr(k, "error"));
		return;
	}
	check_set(c, RESULT_PASS, "", "tbrdmad %s (pid %lld, up %s) at %s: %lld device%s, links %lld/%lld up, rails %lld/%lld up",
		  jstr(dm, "version"), (long long)jint(dm, "pid"), up, arg.socket,
		  (long long)jint(s, "devices"), jint(s, "devices") == 1 ? "" : "s",
		  (long long)jint(s, "links_up"), (long long)jint(s, "links"),
		  (long long)jint(s, "rails_up"), (long long)jint(s, "rails"));
}

static bool fabric_ok(const Doctor *d)
{
	return d->fabric && jbool(d->fabric, "ok");
}

static void check_fabric(Doctor *d, Check *c)
{
	json_object *f = d->fabric;
	const char *master = jstr(f, "master");
	size_t hosts = alen(jget(f, "hosts"));

	if (!d->status) {
		check_set(c, RESULT_SKIP, "", "needs tbrdmad");
	} else if (!fabric_ok(d)) {
		check_set(c, RESULT_WARN, "Sweep=yes in /etc/tbrdmad.conf, or address the netdevs and route yourself",
			  "no sweep: %s", f ? jstr(jget(f, "error"), "message") : "no reply");
	} else if (!jget(f, "device") || !json_object_is_type(jget(f, "device"), json_type_string)) {
		check_set(c, RESULT_FAIL, "modprobe tbrdma; tbctl status", "the sweep has no device");
	} else if (!master[0]) {
		check_set(c, RESULT_FAIL, "start tbrdmad on the peer too; tbctl peers shows who answers",
			  "no master elected (%zu host%s known)", hosts, hosts == 1 ? "" : "s");
	} else if (!jint(f, "epoch")) {
		check_set(c, RESULT_WARN, "wait for the master's sweep, or run tbctl sweep (root)",
			  "master %s elected, no heavy sweep yet (epoch 0)", master);
	} else if (!jbool(f, "converged")) {
		check_set(c, RESULT_WARN, "tbctl fabric shows each host's master; journalctl -u tbrdmad on each",
			  "master %s, epoch %lld, not converged: a host names another master", master,
			  (long long)jint(f, "epoch"));
	} else {
		check_set(c, RESULT_PASS, "", "master %s%s, epoch %lld, %zu host%s, %zu link%s; %s has %s",
			  master, !strcmp(master, jstr(f, "self")) ? " (this host)" : "",
			  (long long)jint(f, "epoch"), hosts, hosts == 1 ? "" : "s",
			  alen(jget(f, "links")),
			  alen(jget(f, "links")) == 1 ? "" : "s",
			  jstr(f, "netdev")[0] ? jstr(f, "netdev") : "the netdev",
			  jstr(f, "address")[0] ? jstr(f, "address") : "no address yet");
	}
}

/* the MTU: what payload each link's frames carry, and the netdevs' MTU */
static void check_mtu(Doctor *d, Check *c)
{
	json_object *links = jget(d->links, "links"), *devs = jget(d->status, "devices");
	char msg[400] = "", p[PATH_MAX], mtu[32];
	size_t up = 0;
	bool small = false;

	if (!d->status) {
		check_set(c, RESULT_SKIP, "", "needs tbrdmad");
		return;
	}
	for (size_t i = 0; i < alen(links); i++) {
		json_object *l = json_object_array_get_idx(links, i);
		int64_t frame = jint(l, "max_frame");

		if (strcmp(jstr(l, "state"), "up"))
			continue;
		up++;
		small |= frame < FRAME_FULL;
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s%s link %lld: frames of %lld bytes%s",
			 up > 1 ? "; " : "", jstr(l, "device"), (long long)jint(l, "id"), (long long)frame,
			 frame < FRAME_FULL ? " (less than a page of payload)" : "");
	}
	if (!up) {
		check_set(c, RESULT_SKIP, "", "needs a link up (tbrdmad's links)");
		return;
	}
	for (size_t i = 0; i < alen(devs); i++) {
		const char *nd = jstr(json_object_array_get_idx(devs, i), "netdev");

		host_path(d, p, sizeof(p), "/sys/class/net/%s/mtu", nd);
		if (nd[0] && read_line_file(p, mtu, sizeof(mtu)))
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "; %s MTU %s", nd, mtu);
	}
	check_set(c, small ? RESULT_WARN : RESULT_PASS, small ?
		  "eth rails: raise the NIC's MTU to 4168 or more (docs/eth.md); tb rails: tbrdma with split frames on the peer" : "",
		  "%s", msg);
}

static void check_fabric_key(Doctor *d, Check *c)
{
	if (!fabric_ok(d))
		check_set(c, RESULT_SKIP, "", "needs tbrdmad's sweep");
	else if (jbool(d->fabric, "authenticated"))
		check_set(c, RESULT_PASS, "", "fabric key configured: every sweep datagram authenticated");
	else
		check_set(c, RESULT_WARN, "FabricKeyFile= in /etc/tbrdmad.conf, the same key on every host (tbrdmad.conf(5))",
			  "no fabric key: any host on a cable can join the fabric and take part in the sweep");
}

/* ---- the verb ------------------------------------------------------------------------------- */

static const struct {
	const char *name;
	void (*fn)(Doctor *d, Check *c);
} checks[] = {
	{ "thunderbolt", check_thunderbolt },	/* module, domains, connection manager */
	{ "peers", check_peers },		/* XDomains */
	{ "service", check_service },		/* the peer's tbrdma service bound to tbrdma */
	{ "tunnel", check_tunnel },		/* the firmware CM's one tunnel, thunderbolt-net */
	{ "iommu", check_iommu },
	{ "provider", check_provider },		/* libibverbs' ABI, ibv_get_device_list */
	{ "ports", check_ports },
	{ "gids", check_gids },
	{ "daemon", check_daemon },
	{ "fabric", check_fabric },		/* master, swept, converged */
	{ "mtu", check_mtu },
	{ "fabric-key", check_fabric_key },
};

static void print_human(const Check *c, size_t n, const unsigned *count)
{
	static const char *const word[] = { "PASS", "WARN", "FAIL", "SKIP" };
	static const char *const color[] = { "\033[32m", "\033[33m", "\033[1;31m", "\033[2m" };
	int w = 0;

	for (size_t i = 0; i < n; i++)
		if ((int)strlen(c[i].name) > w)
			w = strlen(c[i].name);
	for (size_t i = 0; i < n; i++) {
		printf("%s%s%s  %-*s  %s\n", arg.color ? color[c[i].result] : "", word[c[i].result],
		       arg.color ? "\033[0m" : "", w, c[i].name, c[i].message);
		if (c[i].hint[0])
			printf("%*s  hint: %s\n", 4 + 2 + w, "", c[i].hint);
	}
	if (arg.legend)
		printf("\n%zu checks: %u passed, %u warning%s, %u failed, %u skipped.\n", n,
		       count[RESULT_PASS], count[RESULT_WARN], count[RESULT_WARN] == 1 ? "" : "s",
		       count[RESULT_FAIL], count[RESULT_SKIP]);
}

static void print_doctor_json(const Check *c, size_t n, const unsigned *count)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array(),
		    *s = json_object_new_object();

	json_object_object_add(o, "schema", json_object_new_int(TBRDMAD_SCHEMA));
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(o, "method", json_object_new_string("doctor"));
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_new_object();

		json_object_object_add(e, "name", json_object_new_string(c[i].name));
		json_object_object_add(e, "result", json_object_new_string(result_names[c[i].result]));
		json_object_object_add(e, "message", json_object_new_string(c[i].message));
		json_object_object_add(e, "hint", c[i].hint[0] ? json_object_new_string(c[i].hint) : NULL);
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "checks", a);
	for (int r = RESULT_PASS; r <= RESULT_SKIP; r++)
		json_object_object_add(s, result_names[r], json_object_new_int(count[r]));
	json_object_object_add(o, "summary", s);
	print_json(o);
	json_object_put(o);
}

int verb_doctor(int argc, char **argv)
{
	const char *root = getenv("TBCTL_DOCTOR_ROOT");
	Doctor d = { .root = root ? root : "", .fw_cm = -1 };
	Check c[ELEMENTSOF(checks)] = { 0 };
	unsigned count[RESULT_SKIP + 1] = { 0 };

	(void)argv;
	if (argc > 1)
		return usage_error("doctor takes no arguments");
	ask_daemon(&d);
	for (size_t i = 0; i < ELEMENTSOF(checks); i++) {
		c[i].name = checks[i].name;
		checks[i].fn(&d, &c[i]);
		count[c[i].result]++;
	}
	if (arg.json)
		print_doctor_json(c, ELEMENTSOF(c), count);
	else
		print_human(c, ELEMENTSOF(c), count);
	json_object_put(d.status);
	json_object_put(d.links);
	json_object_put(d.fabric);
	return count[RESULT_FAIL] ? EXIT_ERROR : EXIT_OK;
}
