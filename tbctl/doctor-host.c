// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tbctl doctor: the checks that read the host, not tbrdmad: the thunderbolt bus in sysfs
 * (drivers/thunderbolt/domain.c and xdomain.c name the attributes) and libibverbs. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor.h"

#define TB_DEVICES "/sys/bus/thunderbolt/devices"
#define SERVICE_KEY "tbrdma"		/* kernel/backends/tb.c TBT_KEY */

static bool exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

/* @dir/@attr into @buf ("" if unreadable) */
static bool attr(const char *dir, const char *attr, char *buf, size_t n)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", dir, attr);
	if (read_line_file(p, buf, n))
		return true;
	buf[0] = '\0';
	return false;
}

/* the name of the driver @dir is bound to (its driver symlink), "" for none */
static const char *driver_of(const char *dir, char *buf, size_t n)
{
	char p[PATH_MAX + 16], t[PATH_MAX];
	ssize_t k;

	snprintf(p, sizeof(p), "%s/driver", dir);
	k = readlink(p, t, sizeof(t) - 1);
	buf[0] = '\0';
	if (k > 0) {
		t[k] = '\0';
		snprintf(buf, n, "%.*s", (int)n - 1, strrchr(t, '/') ? strrchr(t, '/') + 1 : t);
	}
	return buf;
}

/* DEVTYPE=@type in @dir's uevent */
static bool devtype_is(const char *dir, const char *type)
{
	char p[PATH_MAX], line[256], want[128];
	bool found = false;
	FILE *f;

	snprintf(p, sizeof(p), "%s/uevent", dir);
	snprintf(want, sizeof(want), "DEVTYPE=%s\n", type);
	f = fopen(p, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strcmp(line, want);
	fclose(f);
	return found;
}

static int not_hidden(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

/* calls @fn for every entry of the thunderbolt bus's devices, sorted by name */
static void for_each_tb_device(const Doctor *d, void (*fn)(const Doctor *d, const char *dir,
							       const char *name, void *data),
			       void *data)
{
	char base[PATH_MAX], dir[PATH_MAX + 256];
	struct dirent **e;
	int n;

	host_path(d, base, sizeof(base), TB_DEVICES);
	n = scandir(base, &e, not_hidden, alphasort);
	for (int i = 0; i < n; i++) {
		snprintf(dir, sizeof(dir), "%s/%s", base, e[i]->d_name);
		fn(d, dir, e[i]->d_name, data);
		free(e[i]);
	}
	if (n >= 0)
		free(e);
}

/* the service of XDomain @xd whose key is @key: its sysfs directory into @dir */
static bool service_of(const Doctor *d, const char *xd, const char *key, char *dir, size_t n)
{
	char base[PATH_MAX], k[64];
	struct dirent **e;
	bool found = false;

	if (n < PATH_MAX + 256)
		return false;
	int m;

	host_path(d, base, sizeof(base), TB_DEVICES);
	m = scandir(base, &e, not_hidden, alphasort);
	for (int i = 0; i < m; i++) {
		size_t len = strlen(xd);

		if (!found && !strncmp(e[i]->d_name, xd, len) && e[i]->d_name[len] == '.') {
			snprintf(dir, n, "%.3800s/%.255s", base, e[i]->d_name);
			found = attr(dir, "key", k, sizeof(k)) && !strcmp(k, key);
		}
		free(e[i]);
	}
	if (m >= 0)
		free(e);
	return found;
}

static void add_domain(const Doctor *cd, const char *dir, const char *name, void *data)
{
	Doctor *d = data;

	if (strncmp(name, "domain", 6) || d->n_domains >= (int)ELEMENTSOF(d->domains))
		return;
	snprintf(d->domains[d->n_domains++], sizeof(d->domains[0]), "%s", name);
}

void check_thunderbolt(Doctor *d, Check *c)
{
	char p[PATH_MAX + 16], dir[PATH_MAX], msg[400] = "loaded", v[64], sec[64];
	int fw = 0, sw = 0;

	host_path(d, p, sizeof(p), "/sys/module/thunderbolt");
	if (!exists(p)) {
		check_set(c, RESULT_FAIL, "modprobe thunderbolt (a kernel with CONFIG_USB4)",
			  "the thunderbolt module is not loaded");
		return;
	}
	for_each_tb_device(d, add_domain, d);
	if (!d->n_domains) {
		check_set(c, RESULT_FAIL,
			  "enable Thunderbolt/USB4 in the firmware setup; lspci should list its controller",
			  "thunderbolt is loaded but found no host controller (no domain)");
		return;
	}
	d->thunderbolt = true;
	for (int i = 0; i < d->n_domains; i++) {
		const char *cm;

		host_path(d, dir, sizeof(dir), TB_DEVICES "/%s", d->domains[i]);
		snprintf(p, sizeof(p), "%s/boot_acl", dir);
		attr(dir, "security", sec, sizeof(sec));
		/* boot_acl: only icm.c sets nboot_acl; deauthorization 1: only tb.c (the software
		 * CM) disapproves switches, and only with security user or secure */
		if (exists(p)) {
			cm = "firmware connection manager (boot_acl)";
			fw++;
		} else if (attr(dir, "deauthorization", v, sizeof(v)) && !strcmp(v, "1")) {
			cm = "software connection manager";
			sw++;
		} else {
			cm = "connection manager not told by sysfs (no boot_acl, deauthorization 0)";
		}
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "; %s: %s, security %s",
			 d->domains[i], cm, sec[0] ? sec : "?");
	}
	d->fw_cm = fw ? 1 : sw == d->n_domains ? 0 : -1;
	check_set(c, RESULT_PASS, "", "%s", msg);
}

static void add_xdomain(const Doctor *cd, const char *dir, const char *name, void *data)
{
	Doctor *d = data;

	if (devtype_is(dir, "thunderbolt_xdomain") && d->n_xdomains < (int)ELEMENTSOF(d->xdomains))
		snprintf(d->xdomains[d->n_xdomains++], sizeof(d->xdomains[0]), "%s", name);
}

void check_peers(Doctor *d, Check *c)
{
	char msg[400], dir[PATH_MAX], host[128], speed[64], lanes[16];

	if (!d->thunderbolt) {
		check_set(c, RESULT_SKIP, "", "needs the thunderbolt module and a domain");
		return;
	}
	for_each_tb_device(d, add_xdomain, d);
	if (!d->n_xdomains) {
		check_set(c, RESULT_FAIL,
			  "plug the cable into the other host, which needs thunderbolt loaded too (a dock or disk is no peer)",
			  "no XDomain: no host at the other end of a Thunderbolt/USB4 cable");
		return;
	}
	snprintf(msg, sizeof(msg), "%d XDomain peer%s:", d->n_xdomains, d->n_xdomains == 1 ? "" : "s");
	for (int i = 0; i < d->n_xdomains; i++) {
		host_path(d, dir, sizeof(dir), TB_DEVICES "/%s", d->xdomains[i]);
		attr(dir, "device_name", host, sizeof(host));
		attr(dir, "rx_speed", speed, sizeof(speed));
		attr(dir, "rx_lanes", lanes, sizeof(lanes));
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s %s (%s, %s x %s)",
			 i ? "," : "", d->xdomains[i], host[0] ? host : "?", lanes[0] ? lanes : "?",
			 speed[0] ? speed : "?");
	}
	check_set(c, RESULT_PASS, "", "%s", msg);
}

void check_service(Doctor *d, Check *c)
{
	char msg[400] = "", svc[PATH_MAX + 256], drv[64], p[PATH_MAX];
	const char *hint = NULL, *name;
	bool loaded;

	if (!d->n_xdomains) {
		check_set(c, RESULT_SKIP, "", "needs an XDomain peer");
		return;
	}
	host_path(d, p, sizeof(p), "/sys/module/tbrdma");
	loaded = exists(p);
	for (int i = 0; i < d->n_xdomains; i++) {
		size_t len = strlen(msg);
		const char *h = NULL;

		if (!service_of(d, d->xdomains[i], SERVICE_KEY, svc, sizeof(svc))) {
			snprintf(msg + len, sizeof(msg) - len, "%s%s: the peer publishes no tbrdma service",
				 len ? "; " : "", d->xdomains[i]);
			h = "load tbrdma on the peer host (modprobe tbrdma)";
			goto next;
		}
		name = strrchr(svc, '/') + 1;
		driver_of(svc, drv, sizeof(drv));
		if (!strcmp(drv, "tbrdma")) {
			snprintf(msg + len, sizeof(msg) - len, "%s%s bound to tbrdma", len ? "; " : "", name);
		} else if (drv[0]) {
			snprintf(msg + len, sizeof(msg) - len, "%s%s (tbrdma) bound to %s", len ? "; " : "",
				 name, drv);
			h = "unbind it from that driver: the tbrdma service is ours";
		} else if (!loaded) {
			snprintf(msg + len, sizeof(msg) - len, "%s%s (tbrdma) unbound: tbrdma is not loaded here",
				 len ? "; " : "", name);
			h = "modprobe tbrdma (installed, udev loads it when the service appears)";
		} else {
			snprintf(msg + len, sizeof(msg) - len, "%s%s (tbrdma) bound to no driver", len ? "; " : "",
				 name);
			h = "dmesg | grep tbrdma (why the probe failed); reload: modprobe -r tbrdma; modprobe tbrdma";
		}
next:
		if (h && !hint)
			hint = h;
	}
	check_set(c, hint ? RESULT_FAIL : RESULT_PASS, hint ? hint : "", "%s", msg);
}

/* The carrier of the netdev thunderbolt-net made on service @svc: 1, 0, or -1 (none, or down). */
static int tbnet_carrier(const char *svc)
{
	char p[PATH_MAX + 600], v[8];
	struct dirent **e;
	int n, carrier = -1;

	snprintf(p, sizeof(p), "%s/net", svc);
	n = scandir(p, &e, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (carrier < 0 && e[i]->d_name[0] != '.' &&
		    snprintf(p, sizeof(p), "%s/net/%s/carrier", svc, e[i]->d_name) < (int)sizeof(p) &&
		    read_line_file(p, v, sizeof(v)))
			carrier = v[0] == '1';
		free(e[i]);
	}
	if (n >= 0)
		free(e);
	return carrier;
}

void check_tunnel(Doctor *d, Check *c)
{
	char msg[400] = "", svc[PATH_MAX + 256], drv[64];
	Result r = RESULT_PASS;

	if (!d->n_xdomains) {
		check_set(c, RESULT_SKIP, "", "needs an XDomain peer");
		return;
	}
	for (int i = 0; i < d->n_xdomains; i++) {
		size_t len = strlen(msg);

		/* thunderbolt-net's service key is "network"; its driver "thunderbolt-net" */
		if (!service_of(d, d->xdomains[i], "network", svc, sizeof(svc)) ||
		    strncmp(driver_of(svc, drv, sizeof(drv)), "thunderbolt", 11))
			continue;
		if (d->fw_cm == 0) {
			snprintf(msg + len, sizeof(msg) - len, "%sthunderbolt-net bound to %s too: the software connection manager gives each its own tunnel",
				 len ? "; " : "", d->xdomains[i]);
			continue;
		}
		if (d->fw_cm > 0 && tbnet_carrier(svc) == 0) {
			/* refused by the firmware (or not logged in yet): the tunnel is not its own */
			snprintf(msg + len, sizeof(msg) - len, "%sthunderbolt-net bound to %s without a tunnel (no carrier): it takes the one DMA tunnel if tbrdma lets go",
				 len ? "; " : "", d->xdomains[i]);
			if (r == RESULT_PASS)
				r = RESULT_WARN;
			continue;
		}
		snprintf(msg + len, sizeof(msg) - len, d->fw_cm > 0 ?
			 "%sthunderbolt-net holds %s's one DMA tunnel (firmware connection manager)" :
			 "%sthunderbolt-net bound to %s: under a firmware connection manager it holds the one DMA tunnel",
			 len ? "; " : "", d->xdomains[i]);
		if (d->fw_cm > 0)
			r = RESULT_FAIL;
		else if (r == RESULT_PASS)
			r = RESULT_WARN;
	}
	if (!msg[0])
		snprintf(msg, sizeof(msg), "thunderbolt-net bound to no peer%s", d->fw_cm > 0 ?
			 " (the firmware connection manager's one DMA tunnel per peer is tbrdma's)" : "");
	check_set(c, r, r == RESULT_PASS ? "" :
		  "modprobe -r thunderbolt_net and blacklist it, or run tbrdma's eth backend over thunderbolt0 (docs/thunderbolt.md)",
		  "%s", msg);
}

void check_iommu(Doctor *d, Check *c)
{
	char msg[400] = "", dir[PATH_MAX], v[16];
	int off = 0;

	if (!d->n_domains) {
		check_set(c, RESULT_SKIP, "", "needs a Thunderbolt domain");
		return;
	}
	for (int i = 0; i < d->n_domains; i++) {
		size_t len = strlen(msg);

		host_path(d, dir, sizeof(dir), TB_DEVICES "/%s", d->domains[i]);
		attr(dir, "iommu_dma_protection", v, sizeof(v));
		off += strcmp(v, "1") != 0;
		snprintf(msg + len, sizeof(msg) - len, "%s%s: %s", len ? "; " : "", d->domains[i],
			 !strcmp(v, "1") ? "IOMMU DMA protection on" :
			 "no IOMMU DMA protection: a peer's DMA is not confined to the buffers given to it");
	}
	check_set(c, off ? RESULT_WARN : RESULT_PASS, off ?
		  "enable VT-d / AMD-Vi in the firmware setup and the IOMMU in the kernel (intel_iommu=on or amd_iommu=on)" : "",
		  "%s", msg);
}

/* ---- the provider -------------------------------------------------------------------------- */

struct ibv_device;

/* libibverbs' private ABI N: the N of the verbs_register_driver_N it exports (what a provider
 * built for it calls, provider/pabi-check); 0 if none */
static int pabi_of(void *lib)
{
	char sym[64];

	for (int n = 99; n > 0; n--) {
		snprintf(sym, sizeof(sym), "verbs_register_driver_%d", n);
		if (dlsym(lib, sym))
			return n;
	}
	return 0;
}

/* the provider names libibverbs loads for tbrdma: tbrdma.driver's and $RDMAV_DRIVERS' (as
 * rdma-core's load_drivers), as file-name prefixes: "DIR/libtbrdma" or an absolute "PATH";
 * libibverbs appends "-rdmavN.so". Returns how many (at most @max). */
static int provider_prefixes(const Doctor *d, const char *libdir, char (*out)[PATH_MAX], int max)
{
	char p[PATH_MAX], line[PATH_MAX + 16], *env = getenv("RDMAV_DRIVERS"), *list, *tok, *save;
	char names[8][PATH_MAX];
	int n = 0, m = 0;
	FILE *f;

	host_path(d, p, sizeof(p), "/etc/libibverbs.d/tbrdma.driver");
	f = fopen(p, "re");
	while (f && m < 8 && fgets(line, sizeof(line), f))
		if (sscanf(line, "driver %4095s", names[m]) == 1)
			m++;
	if (f)
		fclose(f);
	list = env ? strdup(env) : NULL;
	for (tok = list ? strtok_r(list, ":;", &save) : NULL; tok && m < 8; tok = strtok_r(NULL, ":;", &save))
		if (strstr(tok, "tbrdma"))
			snprintf(names[m++], PATH_MAX, "%.4000s", tok);
	free(list);
	for (int i = 0; i < m && n < max; i++) {
		if (strchr(names[i], '/'))
			snprintf(out[n++], PATH_MAX, "%.4000s", names[i]);
		else
			snprintf(out[n++], PATH_MAX, "%.2000s/lib%.2000s", libdir, names[i]);
	}
	return n;
}

/* the kernel's first tbrdma RDMA device into @name; false if none */
static bool kernel_device(const Doctor *d, char *name, size_t n)
{
	char p[PATH_MAX];
	glob_t g;
	bool ok;

	host_path(d, p, sizeof(p), "/sys/class/infiniband/tbrdma*");
	ok = glob(p, 0, NULL, &g) == 0;
	if (ok)
		snprintf(name, n, "%s", strrchr(g.gl_pathv[0], '/') + 1);
	globfree(&g);
	return ok;
}

void check_provider(Doctor *d, Check *c)
{
	const char *libname = getenv("TBCTL_LIBIBVERBS");
	char libdir[PATH_MAX] = "", so[PATH_MAX + 32], pat[PATH_MAX + 32], other[PATH_MAX] = "", kdev[64];
	char prefixes[4][PATH_MAX], listed[256] = "";
	struct ibv_device **(*get_list)(int *);
	void (*free_list)(struct ibv_device **);
	const char *(*dev_name)(struct ibv_device *);
	struct ibv_device **devs;
	struct link_map *lm = NULL;
	bool found = false, have = false;
	int pabi, np, n = 0;
	void *lib;

	lib = dlopen(libname && libname[0] ? libname : "libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!lib) {
		check_set(c, RESULT_FAIL, "apt install libibverbs1 ibverbs-providers",
			  "libibverbs does not load: %s", dlerror());
		return;
	}
	pabi = pabi_of(lib);
	if (!pabi) {
		check_set(c, RESULT_FAIL, "apt install libibverbs1 (rdma-core)",
			  "this libibverbs exports no verbs_register_driver_N: it loads no provider");
		goto out;
	}
	if (dlinfo(lib, RTLD_DI_LINKMAP, &lm) == 0 && lm && strrchr(lm->l_name, '/')) {
		snprintf(libdir, sizeof(libdir), "%.*s/libibverbs",
			 (int)(strrchr(lm->l_name, '/') - lm->l_name), lm->l_name);
	}
	np = provider_prefixes(d, libdir, prefixes, ELEMENTSOF(prefixes));
	if (!np) {
		check_set(c, RESULT_FAIL, "install the provider: make install, or the ibverbs-provider-tbrdma package",
			  "no /etc/libibverbs.d/tbrdma.driver: libibverbs has no tbrdma provider");
		goto out;
	}
	for (int i = 0; i < np; i++) {
		glob_t g;

		snprintf(so, sizeof(so), "%.4000s-rdmav%d.so", prefixes[i], pabi);
		have = access(so, R_OK) == 0;
		if (have)
			break;
		snprintf(pat, sizeof(pat), "%.4000s-rdmav*.so", prefixes[i]);
		if (other[0])
			continue;
		if (glob(pat, 0, NULL, &g) == 0)
			snprintf(other, sizeof(other), "%s", g.gl_pathv[0]);
		globfree(&g);
	}
	if (!have) {
		if (other[0])
			check_set(c, RESULT_FAIL,
				  "rebuild and reinstall the provider against this libibverbs (make install)",
				  "provider ABI mismatch: %s is built for another libibverbs; this one (private ABI %d) loads %s-rdmav%d.so",
				  strrchr(other, '/') + 1, pabi, strrchr(prefixes[0], '/') ? strrchr(prefixes[0], '/') + 1 : prefixes[0], pabi);
		else
			check_set(c, RESULT_FAIL,
				  "install the provider: make install, or the ibverbs-provider-tbrdma package",
				  "no provider file %s (libibverbs' private ABI %d)", so, pabi);
		goto out;
	}
	get_list = (struct ibv_device **(*)(int *))dlsym(lib, "ibv_get_device_list");
	free_list = (void (*)(struct ibv_device **))dlsym(lib, "ibv_free_device_list");
	dev_name = (const char *(*)(struct ibv_device *))dlsym(lib, "ibv_get_device_name");
	devs = get_list && free_list && dev_name ? get_list(&n) : NULL;
	for (int i = 0; devs && i < n; i++) {
		const char *nm = dev_name(devs[i]);

		if (!strncmp(nm, "tbrdma", 6) && !found) {
			found = true;
			snprintf(listed, sizeof(listed), "%s", nm);
		}
	}
	if (devs)
		free_list(devs);
	if (found) {
		check_set(c, RESULT_PASS, "", "%s opens through libibverbs (provider %s, private ABI %d)",
			  listed, strrchr(so, '/') ? strrchr(so, '/') + 1 : so, pabi);
	} else if (!kernel_device(d, kdev, sizeof(kdev))) {
		check_set(c, RESULT_FAIL, "modprobe tbrdma",
			  "ibv_get_device_list shows no tbrdma device: the kernel has none (%s present)",
			  strrchr(so, '/') + 1);
	} else {
		void *p = dlopen(so, RTLD_NOW | RTLD_LOCAL);

		check_set(c, RESULT_FAIL, "rebuild and reinstall the provider against this libibverbs (make install)",
			  "ibv_get_device_list shows no %s although the kernel has it: %s", kdev,
			  p ? "the provider loads but does not match the device" : dlerror());
		if (p)
			dlclose(p);
	}
out:
	dlclose(lib);
}
