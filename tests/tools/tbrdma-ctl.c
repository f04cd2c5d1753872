// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma-ctl: drive the tbrdma generic netlink family (docs/netlink.md) from
 * the command line: devices, emulated cables, rail fault knobs, link/rail
 * dumps with counters, management datagrams, events. Built for tests and
 * developers; the daemon speaks the same family with libnl-genl-3.
 *
 * Output is one line per object, "kind key=value ...", easy to grep/awk.
 * Exit status: 0 ok, 1 the kernel refused (message on stderr, with the
 * kernel's extended ack text when there is one), 2 usage error.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <netlink/genl/ctrl.h>

#include "genl-family.h"

static const char *prog = "tbrdma-ctl";
static const char *cmdname = "";
static struct nl_sock *sk;
static int family;

static void usage(FILE *f)
{
	fprintf(f,
"usage: tbrdma-ctl COMMAND [ARGS]\n"
"  devs                                   list tbrdma devices\n"
"  dev-new                                create tbrdmaN (and netdev tbrN), print its name\n"
"  dev-del DEV                            delete a device made by dev-new (and its cables)\n"
"  cable-new DEV PEER [--rails N] [--depth D] [--claim GUID]\n"
"                                         emulated cable DEV <-> PEER with N rails (default 1),\n"
"                                         D descriptors per ring (default 128); prints the cable id;\n"
"                                         --claim: PEER presents GUID to DEV (test: an impostor)\n"
"  cable-del ID                           remove an emulated cable\n"
"  cables                                 list emulated cables\n"
"  links [DEV]                            links and their rails, with state and counters\n"
"  link-trust DEV LINK used|held|rejected the sweep's decision on a held link (docs/sweep.md)\n"
"  auth-key DEV [KEYFILE [GRACE_MS]]      the fabric key links authenticate with (none: no key)\n"
"  rail-set DEV LINK RAIL [--drop PCT] [--dup PCT] [--reorder N] [--delay-us US]\n"
"                         [--rate BPS[k|M|G]] [--rx-hold-us US] [--one-way] [--cut | --restore]\n"
"                                         fault knobs of an emu rail (both directions; --one-way:\n"
"                                         DEV's end only, the frames it sends, the peer's end\n"
"                                         keeps its own)\n"
"  mgmt-send DEV LINK TEXT | --hex HEX [--repeat N [--seq]] [--pdf 4] [--once]\n"
"                                         send management datagram(s) to the link's peer;\n"
"                                         --seq appends -0, -1, ... (full TX rings are retried);\n"
"                                         --pdf 4: send the bytes as a routed frame instead\n"
"  route-set DEV VERSION [DST,NEXTHOP,HOPS ...]\n"
"                                         replace DEV's forwarding table (GUIDs in hex, sorted)\n"
"  routes DEV                             print DEV's forwarding table\n"
"  route-wait SECS DEV,DST,HOPS ...       poll the tables (every 5 ms, one process) until each DEV\n"
"                                         routes to DST over HOPS hops; prints the wall-clock time\n"
"                                         (us) each first held (and \"polling since\" once after the\n"
"                                         first round); exit 1 if one did not in SECS\n"
"  mgmt-listen [DEV] [--count N] [--timeout S]\n"
"                                         print received management datagrams\n"
"  events [--count N] [--timeout S]       print device/link/rail events\n"
"  eth-bind DEV IFNAME                    carry DEV's rails over Ethernet netdev IFNAME (eth backend:\n"
"                                         hellos find the peer on it, one rail per peer heard)\n"
"  eth-unbind DEV IFNAME                  stop using IFNAME (its rails go down and away)\n"
"  eth [DEV]                              list eth bindings\n"
"Changing commands need CAP_NET_ADMIN. Exit: 0 ok, 1 refused/failed, 2 usage.\n");
}

static void die_usage(const char *msg)
{
	fprintf(stderr, "%s %s: %s (see --help)\n", prog, cmdname, msg);
	exit(2);
}

/* ---- request/response: genl-family.c, exiting on errors ------------------- */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s %s: ", prog, cmdname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void nl_open(void)
{
	char err[256] = "";

	if (tbr_genl_open(&sk, &family, TBRDMA_GENL_NAME, 0, err, sizeof(err)) < 0)
		fail("%s", err);
}

static struct nl_msg *msg_new(uint8_t cmd, int flags)
{
	struct nl_msg *m = tbr_genl_msg(family, cmd, flags, 8192);

	if (!m)
		fail("out of memory");
	return m;
}

static void report(int rc, const char *err)
{
	fprintf(stderr, "%s %s: %s%s%s\n", prog, cmdname, strerror(-rc), err[0] ? ": " : "", err);
}

/* Send @m, run @valid on every reply; returns 0 or exits with a message. */
static int request(struct nl_msg *m, nl_recvmsg_msg_cb_t valid, void *arg)
{
	char err[256] = "";
	int rc = tbr_genl_request(sk, m, valid, arg, err, sizeof(err));

	if (rc) {
		report(rc, err);
		exit(1);
	}
	return 0;
}

static struct nlattr **parse(struct nl_msg *m)
{
	static struct nlattr *tb[TBRDMA_ATTR_MAX + 1];

	return tbr_genl_parse(m, tb) < 0 ? NULL : tb;
}

static void print_stats_as(struct nlattr *nest, const char *prefix)
{
	struct nlattr *st[TBRDMA_STAT_MAX + 1];
	int i;

	if (tbr_genl_parse_stats(nest, st) < 0)
		return;
	for (i = 0; i <= TBRDMA_STAT_MAX; i++)
		if (st[i] && tbr_counter_name(i))
			printf(" %s%s=%" PRIu64, prefix, tbr_counter_name(i),
			       (uint64_t)nla_get_u64(st[i]));
}

static void print_stats(struct nlattr *nest)
{
	print_stats_as(nest, "");
}

static const char *state_name(struct nlattr **tb)
{
	if (!tb[TBRDMA_ATTR_STATE])
		return "?";
	return tbr_nla_up(tb) ? "up" : "down";
}

/* ---- printers ----------------------------------------------------------- */

static const char *filter_dev;

static bool filtered(struct nlattr **tb)
{
	return filter_dev && tb[TBRDMA_ATTR_DEV_NAME] &&
	       strcmp(filter_dev, nla_get_string(tb[TBRDMA_ATTR_DEV_NAME]));
}

static void print_dev(struct nlattr **tb, const char *kind)
{
	printf("%s dev=%s index=%u netdev=%s ifindex=%u guid=%016" PRIx64 " host=%d links=%u rails_up=%u",
	       kind, tbr_nla_str(tb, TBRDMA_ATTR_DEV_NAME, "?"),
	       tbr_nla_u32(tb, TBRDMA_ATTR_DEV_INDEX),
	       tbr_nla_str(tb, TBRDMA_ATTR_NETDEV_NAME, "?"),
	       tbr_nla_u32(tb, TBRDMA_ATTR_NETDEV_IFINDEX),
	       tbr_nla_u64(tb, TBRDMA_ATTR_DEV_GUID),
	       tb[TBRDMA_ATTR_HOST] ? 1 : 0,
	       tbr_nla_u32(tb, TBRDMA_ATTR_LINKS),
	       tbr_nla_u32(tb, TBRDMA_ATTR_RAILS_UP));
}

static const char *const trust_names[] = { "used", "held", "rejected" };

/* a device's links held now, its held counters (docs/sweep.md "Trust"), its fabric key */
static void print_held(struct nlattr **tb)
{
	struct nlattr *st[TBRDMA_STAT_MAX + 1];

	printf(" links_held=%u", tbr_nla_u32(tb, TBRDMA_ATTR_LINKS_HELD));
	if (tbr_genl_parse_stats(tb[TBRDMA_ATTR_STATS], st) >= 0)
		printf(" held=%" PRIu64 " held_drops=%" PRIu64,
		       st[TBRDMA_STAT_HELD] ? (uint64_t)nla_get_u64(st[TBRDMA_STAT_HELD]) : 0,
		       st[TBRDMA_STAT_HELD_DROPS] ?
		       (uint64_t)nla_get_u64(st[TBRDMA_STAT_HELD_DROPS]) : 0);
	/* the fabric key (docs/netlink.md "Authenticated links"): set, and peers refused */
	printf(" auth=%u auth_refused=%" PRIu64,
	       tb[TBRDMA_ATTR_AUTH_KEYED] ? nla_get_u8(tb[TBRDMA_ATTR_AUTH_KEYED]) : 0,
	       tbr_nla_u64(tb, TBRDMA_ATTR_AUTH_REFUSED));
}

static int dev_cb(struct nl_msg *m, void *arg)
{
	struct nlattr **tb = parse(m);

	(void)arg;
	if (!tb || filtered(tb))
		return NL_OK;
	print_dev(tb, "dev");
	print_held(tb);
	/* the loopback link's counters: frames the device sent to itself */
	print_stats_as(tb[TBRDMA_ATTR_LOOP_STATS], "loop_");
	printf("\n");
	return NL_OK;
}

static int dev_name_cb(struct nl_msg *m, void *arg)
{
	struct nlattr **tb = parse(m);

	(void)arg;
	if (tb && tb[TBRDMA_ATTR_DEV_NAME])
		printf("%s\n", nla_get_string(tb[TBRDMA_ATTR_DEV_NAME]));
	return NL_OK;
}

static void print_link(struct nlattr **tb, const char *kind)
{
	printf("%s dev=%s id=%u peer=%016" PRIx64 " state=%s rails_up=%u rails=%u",
	       kind, tbr_nla_str(tb, TBRDMA_ATTR_DEV_NAME, "?"),
	       tbr_nla_u32(tb, TBRDMA_ATTR_LINK_ID),
	       tbr_nla_u64(tb, TBRDMA_ATTR_PEER_GUID),
	       state_name(tb), tbr_nla_u32(tb, TBRDMA_ATTR_RAILS_UP),
	       tbr_nla_u32(tb, TBRDMA_ATTR_RAILS_TOTAL));
	if (tb[TBRDMA_ATTR_TX_CREDITS])
		printf(" credits=%u", nla_get_u32(tb[TBRDMA_ATTR_TX_CREDITS]));
}

static int link_cb(struct nl_msg *m, void *arg)
{
	struct nlattr **tb = parse(m);

	(void)arg;
	if (!tb || filtered(tb))
		return NL_OK;
	print_link(tb, "link");
	if (tb[TBRDMA_ATTR_TRUST])
		printf(" trust=%s", nla_get_u8(tb[TBRDMA_ATTR_TRUST]) < 3 ?
		       trust_names[nla_get_u8(tb[TBRDMA_ATTR_TRUST])] : "?");
	if (tb[TBRDMA_ATTR_MAX_FRAME])
		printf(" max_frame=%u", nla_get_u32(tb[TBRDMA_ATTR_MAX_FRAME]));
	print_stats(tb[TBRDMA_ATTR_STATS]);
	printf("\n");
	return NL_OK;
}

static void print_rail(struct nlattr **tb, const char *kind)
{
	printf("%s dev=%s link=%u id=%u peer=%016" PRIx64 " backend=%s state=%s",
	       kind, tbr_nla_str(tb, TBRDMA_ATTR_DEV_NAME, "?"),
	       tbr_nla_u32(tb, TBRDMA_ATTR_LINK_ID),
	       tbr_nla_u32(tb, TBRDMA_ATTR_RAIL_ID),
	       tbr_nla_u64(tb, TBRDMA_ATTR_PEER_GUID),
	       tbr_nla_str(tb, TBRDMA_ATTR_BACKEND, "?"), state_name(tb));
}

static int rail_cb(struct nl_msg *m, void *arg)
{
	struct nlattr **tb = parse(m);

	(void)arg;
	if (!tb || filtered(tb))
		return NL_OK;
	print_rail(tb, "  rail");
	printf(" tx_depth=%u rx_depth=%u credits=%u",
	       tbr_nla_u32(tb, TBRDMA_ATTR_TX_DEPTH),
	       tbr_nla_u32(tb, TBRDMA_ATTR_RX_DEPTH),
	       tbr_nla_u32(tb, TBRDMA_ATTR_TX_CREDITS));
	if (tb[TBRDMA_ATTR_MAX_FRAME])
		printf(" max_frame=%u", nla_get_u32(tb[TBRDMA_ATTR_MAX_FRAME]));
	if (tb[TBRDMA_ATTR_LANES])
		printf(" lane_mbps=%u lanes=%u", tbr_nla_u32(tb, TBRDMA_ATTR_LANE_MBPS),
		       nla_get_u32(tb[TBRDMA_ATTR_LANES]));
	if (tb[TBRDMA_ATTR_DRAIN_RATE])
		printf(" drain_kBps=%u", nla_get_u32(tb[TBRDMA_ATTR_DRAIN_RATE]));
	if (tb[TBRDMA_ATTR_ETH_IFNAME]) {
		const unsigned char *mac = tb[TBRDMA_ATTR_ETH_PEER_MAC] &&
			nla_len(tb[TBRDMA_ATTR_ETH_PEER_MAC]) == 6 ?
			nla_data(tb[TBRDMA_ATTR_ETH_PEER_MAC]) : (const unsigned char *)"\0\0\0\0\0";

		printf(" ifname=%s ifindex=%u peer_mac=%02x:%02x:%02x:%02x:%02x:%02x",
		       nla_get_string(tb[TBRDMA_ATTR_ETH_IFNAME]),
		       tbr_nla_u32(tb, TBRDMA_ATTR_ETH_IFINDEX),
		       mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	}
	if (tb[TBRDMA_ATTR_DROP_PPM])
		printf(" drop_ppm=%u dup_ppm=%u reorder=%u delay_us=%u rate_bps=%" PRIu64 " cut=%u",
		       nla_get_u32(tb[TBRDMA_ATTR_DROP_PPM]),
		       tbr_nla_u32(tb, TBRDMA_ATTR_DUP_PPM),
		       tbr_nla_u32(tb, TBRDMA_ATTR_REORDER),
		       tbr_nla_u32(tb, TBRDMA_ATTR_DELAY_US),
		       tbr_nla_u64(tb, TBRDMA_ATTR_RATE_BPS),
		       tb[TBRDMA_ATTR_CUT_STATE] ? nla_get_u8(tb[TBRDMA_ATTR_CUT_STATE]) : 0);
	if (tb[TBRDMA_ATTR_RX_HOLD_US])
		printf(" rx_hold_us=%u", nla_get_u32(tb[TBRDMA_ATTR_RX_HOLD_US]));
	/* ring occupancy since the rail came up (absent while it is down) */
	if (tb[TBRDMA_ATTR_RING_MS])
		printf(" ring_ms=%u tx_full_ppm=%u tx_empty_ppm=%u tx_mean_ppm=%u"
		       " rx_full_ppm=%u rx_empty_ppm=%u rx_mean_ppm=%u",
		       nla_get_u32(tb[TBRDMA_ATTR_RING_MS]),
		       tbr_nla_u32(tb, TBRDMA_ATTR_TX_FULL_PPM),
		       tbr_nla_u32(tb, TBRDMA_ATTR_TX_EMPTY_PPM),
		       tbr_nla_u32(tb, TBRDMA_ATTR_TX_MEAN_PPM),
		       tbr_nla_u32(tb, TBRDMA_ATTR_RX_FULL_PPM),
		       tbr_nla_u32(tb, TBRDMA_ATTR_RX_EMPTY_PPM),
		       tbr_nla_u32(tb, TBRDMA_ATTR_RX_MEAN_PPM));
	print_stats(tb[TBRDMA_ATTR_STATS]);
	printf("\n");
	return NL_OK;
}

static int cable_cb(struct nl_msg *m, void *arg)
{
	struct nlattr **tb = parse(m);

	(void)arg;
	if (!tb)
		return NL_OK;
	if (arg) {	/* cable-new reply: just the id */
		printf("%u\n", tbr_nla_u32(tb, TBRDMA_ATTR_CABLE_ID));
		return NL_OK;
	}
	printf("cable id=%u dev=%s peer_dev=%s rails=%u\n",
	       tbr_nla_u32(tb, TBRDMA_ATTR_CABLE_ID),
	       tbr_nla_str(tb, TBRDMA_ATTR_DEV_NAME, "?"),
	       tbr_nla_str(tb, TBRDMA_ATTR_PEER_DEV_NAME, "?"),
	       tbr_nla_u32(tb, TBRDMA_ATTR_RAIL_COUNT));
	return NL_OK;
}

/* ---- argument helpers ----------------------------------------------------- */

static uint32_t parse_u32(const char *s, const char *what, uint32_t max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max || s[0] == '-') {
		char buf[128];

		snprintf(buf, sizeof(buf), "bad %s \"%s\" (0..%u)", what, s, max);
		die_usage(buf);
	}
	return v;
}

/* percent with decimals -> parts per million */
static uint32_t parse_pct(const char *s, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0 || v > 100) {
		char buf[128];

		snprintf(buf, sizeof(buf), "bad %s \"%s\" (percent, 0..100)", what, s);
		die_usage(buf);
	}
	return (uint32_t)(v * 10000 + 0.5);
}

static uint64_t parse_rate(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		die_usage("bad --rate (bit/s, suffix k, M or G)");
	switch (*end) {
	case 'k': case 'K': v *= 1e3; end++; break;
	case 'm': case 'M': v *= 1e6; end++; break;
	case 'g': case 'G': v *= 1e9; end++; break;
	}
	if (*end && strcmp(end, "bps") && strcmp(end, "bit"))
		die_usage("bad --rate (bit/s, suffix k, M or G)");
	return (uint64_t)v;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* ---- commands ------------------------------------------------------------- */

static int cmd_devs(int argc, char **argv)
{
	(void)argc; (void)argv;
	return request(msg_new(TBRDMA_CMD_DEV_GET, NLM_F_DUMP), dev_cb, NULL);
}

static int cmd_dev_new(int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		die_usage("takes no arguments");
	return request(msg_new(TBRDMA_CMD_DEV_NEW, NLM_F_ACK), dev_name_cb, NULL);
}

static int cmd_dev_del(int argc, char **argv)
{
	struct nl_msg *m;

	if (argc != 2)
		die_usage("needs DEV");
	m = msg_new(TBRDMA_CMD_DEV_DEL, NLM_F_ACK);
	nla_put_string(m, TBRDMA_ATTR_DEV_NAME, argv[1]);
	return request(m, NULL, NULL);
}

static int cmd_cable_new(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rails", required_argument, NULL, 'r' },
		{ "depth", required_argument, NULL, 'd' },
		{ "claim", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t rails = 1, depth = 0;
	unsigned long long claim = 0;
	struct nl_msg *m;
	int c;

	while ((c = getopt_long(argc, argv, "r:d:c:", opts, NULL)) != -1) {
		if (c == 'c')
			claim = strtoull(optarg, NULL, 16);
		else if (c == 'r')
			rails = parse_u32(optarg, "--rails", TBRDMA_RAILS_MAX);
		else if (c == 'd')
			depth = parse_u32(optarg, "--depth", 4096);
		else
			die_usage("unknown option");
	}
	if (argc - optind != 2)
		die_usage("needs DEV PEER");
	m = msg_new(TBRDMA_CMD_EMU_CABLE_NEW, NLM_F_ACK);
	nla_put_string(m, TBRDMA_ATTR_DEV_NAME, argv[optind]);
	nla_put_string(m, TBRDMA_ATTR_PEER_DEV_NAME, argv[optind + 1]);
	nla_put_u32(m, TBRDMA_ATTR_RAIL_COUNT, rails);
	if (depth)
		nla_put_u32(m, TBRDMA_ATTR_DEPTH, depth);
	if (claim)
		nla_put_u64(m, TBRDMA_ATTR_PEER_GUID, claim);
	return request(m, cable_cb, (void *)1);
}

static int cmd_cable_del(int argc, char **argv)
{
	struct nl_msg *m;

	if (argc != 2)
		die_usage("needs ID");
	m = msg_new(TBRDMA_CMD_EMU_CABLE_DEL, NLM_F_ACK);
	nla_put_u32(m, TBRDMA_ATTR_CABLE_ID, parse_u32(argv[1], "cable id", UINT32_MAX));
	return request(m, NULL, NULL);
}

static int cmd_cables(int argc, char **argv)
{
	(void)argc; (void)argv;
	return request(msg_new(TBRDMA_CMD_EMU_CABLE_GET, NLM_F_DUMP), cable_cb, NULL);
}

static int cmd_links(int argc, char **argv)
{
	if (argc > 2)
		die_usage("takes at most DEV");
	filter_dev = argc == 2 ? argv[1] : NULL;
	request(msg_new(TBRDMA_CMD_LINK_GET, NLM_F_DUMP), link_cb, NULL);
	return request(msg_new(TBRDMA_CMD_RAIL_GET, NLM_F_DUMP), rail_cb, NULL);
}

static int cmd_rail_set(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "drop", required_argument, NULL, 'D' },
		{ "dup", required_argument, NULL, 'u' },
		{ "reorder", required_argument, NULL, 'o' },
		{ "delay-us", required_argument, NULL, 'l' },
		{ "rate", required_argument, NULL, 'r' },
		{ "rx-hold-us", required_argument, NULL, 'h' },
		{ "one-way", no_argument, NULL, 'w' },
		{ "cut", no_argument, NULL, 'c' },
		{ "restore", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	struct nl_msg *m = msg_new(TBRDMA_CMD_RAIL_SET, NLM_F_ACK);
	int c, cut = -1, n = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		n++;
		switch (c) {
		case 'D': nla_put_u32(m, TBRDMA_ATTR_DROP_PPM, parse_pct(optarg, "--drop")); break;
		case 'u': nla_put_u32(m, TBRDMA_ATTR_DUP_PPM, parse_pct(optarg, "--dup")); break;
		case 'o': nla_put_u32(m, TBRDMA_ATTR_REORDER, parse_u32(optarg, "--reorder", 1024)); break;
		case 'l': nla_put_u32(m, TBRDMA_ATTR_DELAY_US, parse_u32(optarg, "--delay-us", 1000000)); break;
		case 'r': nla_put_u64(m, TBRDMA_ATTR_RATE_BPS, parse_rate(optarg)); break;
		case 'h': nla_put_u32(m, TBRDMA_ATTR_RX_HOLD_US, parse_u32(optarg, "--rx-hold-us", 1000000)); break;
		case 'w': nla_put_flag(m, TBRDMA_ATTR_ONE_WAY); n--; break;
		case 'c': if (cut == 0) die_usage("--cut and --restore together"); cut = 1; break;
		case 'R': if (cut == 1) die_usage("--cut and --restore together"); cut = 0; break;
		default: die_usage("unknown option");
		}
	}
	if (argc - optind != 3)
		die_usage("needs DEV LINK RAIL");
	if (!n)
		die_usage("nothing to set");
	nla_put_string(m, TBRDMA_ATTR_DEV_NAME, argv[optind]);
	nla_put_u32(m, TBRDMA_ATTR_LINK_ID, parse_u32(argv[optind + 1], "LINK", UINT32_MAX));
	nla_put_u32(m, TBRDMA_ATTR_RAIL_ID, parse_u32(argv[optind + 2], "RAIL", UINT32_MAX));
	if (cut >= 0)
		nla_put_u8(m, TBRDMA_ATTR_CUT, cut);
	return request(m, NULL, NULL);
}

static int cmd_mgmt_send(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hex", required_argument, NULL, 'x' },
		{ "repeat", required_argument, NULL, 'n' },
		{ "seq", no_argument, NULL, 's' },
		{ "pdf", required_argument, NULL, 'p' },
		{ "once", no_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	static unsigned char buf[TBRDMA_MGMT_MAX + 32];
	uint32_t pdf = 0;
	const char *hex = NULL;
	uint32_t repeat = 1, k, link;
	bool seq = false, once = false;
	char errmsg[256] = "";
	struct nl_msg *m;
	size_t len = 0, i;
	int c, err, tries;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'x')
			hex = optarg;
		else if (c == 'n')
			repeat = parse_u32(optarg, "--repeat", 1000000);
		else if (c == 's')
			seq = true;
		else if (c == 'p')
			pdf = parse_u32(optarg, "--pdf", 255);
		else if (c == 'o')
			once = true;
		else
			die_usage("unknown option");
	}
	if (argc - optind != (hex ? 2 : 3))
		die_usage("needs DEV LINK and TEXT or --hex HEX");
	if (hex) {
		size_t n = strlen(hex);

		if (n % 2 || n / 2 > TBRDMA_MGMT_MAX)
			die_usage("--hex needs an even number of hex digits, at most 8192");
		for (i = 0; i < n; i += 2) {
			int h = hexval(hex[i]), l = hexval(hex[i + 1]);

			if (h < 0 || l < 0)
				die_usage("--hex: not a hex digit");
			buf[len++] = h << 4 | l;
		}
	} else {
		len = strlen(argv[optind + 2]);
		if (len > TBRDMA_MGMT_MAX)
			die_usage("TEXT longer than 4096 bytes");
		memcpy(buf, argv[optind + 2], len);
	}
	if (!len)
		die_usage("empty datagram");
	if (seq && len + 11 > TBRDMA_MGMT_MAX)
		die_usage("--seq needs room for \"-NUMBER\" after the data");
	link = parse_u32(argv[optind + 1], "LINK", UINT32_MAX);
	/*
	 * --repeat N: N datagrams (with --seq: DATA-0 .. DATA-(N-1)); full rings
	 * are retried, except with --once (ENOBUFS is then the answer)
	 */
	for (k = 0; k < repeat; k++) {
		size_t n = len;

		if (seq)
			n += sprintf((char *)buf + len, "-%u", k);
		for (tries = 0;; tries++) {
			m = msg_new(TBRDMA_CMD_MGMT_SEND, NLM_F_ACK);
			nla_put_string(m, TBRDMA_ATTR_DEV_NAME, argv[optind]);
			nla_put_u32(m, TBRDMA_ATTR_LINK_ID, link);
			nla_put(m, TBRDMA_ATTR_MGMT_DATA, n, buf);
			if (pdf)
				nla_put_u8(m, TBRDMA_ATTR_PDF, pdf);
			err = tbr_genl_request(sk, m, NULL, NULL, errmsg, sizeof(errmsg));
			if (err != -ENOBUFS || once || tries >= 20000)
				break;
			usleep(500);
		}
		if (err) {
			report(err, errmsg);
			return 1;
		}
	}
	return 0;
}

/* ---- forwarding table -------------------------------------------------------- */

static int cmd_link_trust(int argc, char **argv)
{
	struct nl_msg *m;
	unsigned int t;

	if (argc != 4)
		die_usage("needs DEV LINK used|held|rejected");
	for (t = 0; t < 3 && strcmp(argv[3], trust_names[t]); t++)
		;
	if (t == 3)
		die_usage("the decision is used, held or rejected");
	m = msg_new(TBRDMA_CMD_LINK_TRUST, NLM_F_ACK);
	nla_put_string(m, TBRDMA_ATTR_DEV_NAME, argv[1]);
	nla_put_u32(m, TBRDMA_ATTR_LINK_ID, parse_u32(argv[2], "LINK", UINT32_MAX));
	nla_put_u8(m, TBRDMA_ATTR_TRUST, t);
	return request(m, NULL, NULL);
}

/* the key of KEYFILE (a trailing newline is not part of it, as tbrdmad reads it), or none */
static int cmd_auth_key(int argc, char **argv)
{
	unsigned char key[257];
	struct nl_msg *m;
	size_t n = 0;
	FILE *f;

	if (argc < 2 || argc > 4)
		die_usage("needs DEV [KEYFILE [GRACE_MS]]");
	m = msg_new(TBRDMA_CMD_AUTH_KEY_SET, NLM_F_ACK);
	nla_put_string(m, TBRDMA_ATTR_DEV_NAME, argv[1]);
	if (argc >= 3) {
		f = fopen(argv[2], "rb");
		if (!f)
			fail("%s: %s", argv[2], strerror(errno));
		n = fread(key, 1, sizeof(key), f);
		fclose(f);
		if (n && key[n - 1] == '\n')
			n--;
		nla_put(m, TBRDMA_ATTR_AUTH_KEY, (int)n, key);
	}
	if (argc == 4)
		nla_put_u32(m, TBRDMA_ATTR_AUTH_GRACE_MS, parse_u32(argv[3], "GRACE_MS", UINT32_MAX));
	return request(m, NULL, NULL);
}

static int cmd_route_set(int argc, char **argv)
{
	struct nl_msg *m;
	struct nlattr *routes, *r;
	int i;

	if (argc < 3)
		die_usage("needs DEV VERSION [DST,NEXTHOP,HOPS ...]");
	m = tbr_genl_msg(family, TBRDMA_CMD_ROUTE_SET, NLM_F_ACK, 65536);
	if (!m)
		fail("out of memory");
	nla_put_string(m, TBRDMA_ATTR_DEV_NAME, argv[1]);
	nla_put_u32(m, TBRDMA_ATTR_ROUTE_VERSION, parse_u32(argv[2], "VERSION", UINT32_MAX));
	routes = nla_nest_start(m, TBRDMA_ATTR_ROUTES);
	for (i = 3; i < argc; i++) {
		unsigned long long dst, next;
		unsigned int hops;
		int used = 0;

		if (sscanf(argv[i], "%llx,%llx,%u%n", &dst, &next, &hops, &used) != 3 ||
		    argv[i][used])
			die_usage("a route is DST,NEXTHOP,HOPS (GUIDs in hex)");
		r = nla_nest_start(m, TBRDMA_ATTR_ROUTE);
		if (!r || nla_put_u64(m, TBRDMA_ATTR_ROUTE_DST, dst) ||
		    nla_put_u64(m, TBRDMA_ATTR_ROUTE_NEXT_HOP, next) ||
		    nla_put_u32(m, TBRDMA_ATTR_ROUTE_HOPS, hops))
			fail("too many routes for one message");
		nla_nest_end(m, r);
	}
	nla_nest_end(m, routes);
	return request(m, NULL, NULL);
}

static int route_cb(struct nl_msg *m, void *arg)
{
	struct nlattr **tb = parse(m), *r;
	int rem;

	(void)arg;
	if (!tb)
		return NL_OK;
	printf("table dev=%s version=%u\n", tbr_nla_str(tb, TBRDMA_ATTR_DEV_NAME, "?"),
	       tbr_nla_u32(tb, TBRDMA_ATTR_ROUTE_VERSION));
	if (!tb[TBRDMA_ATTR_ROUTES])
		return NL_OK;
	nla_for_each_nested(r, tb[TBRDMA_ATTR_ROUTES], rem) {
		struct nlattr *e[TBRDMA_ATTR_MAX + 1];

		if (nla_parse_nested(e, TBRDMA_ATTR_MAX, r, tbr_genl_policy) < 0)
			continue;
		printf("route dst=%016" PRIx64 " next_hop=%016" PRIx64 " hops=%u link=%u\n",
		       tbr_nla_u64(e, TBRDMA_ATTR_ROUTE_DST),
		       tbr_nla_u64(e, TBRDMA_ATTR_ROUTE_NEXT_HOP),
		       tbr_nla_u32(e, TBRDMA_ATTR_ROUTE_HOPS),
		       tbr_nla_u32(e, TBRDMA_ATTR_LINK_ID));
	}
	return NL_OK;
}

static int cmd_routes(int argc, char **argv)
{
	struct nl_msg *m;

	if (argc != 2)
		die_usage("needs DEV");
	m = msg_new(TBRDMA_CMD_ROUTE_GET, 0);
	nla_put_string(m, TBRDMA_ATTR_DEV_NAME, argv[1]);
	return request(m, route_cb, NULL);
}

/* route-wait: one condition and whether the last ROUTE_GET showed it */
struct route_cond {
	const char *dev;
	uint64_t dst;
	uint32_t hops;
	bool seen;
	uint64_t at_us;
};

static int route_cond_cb(struct nl_msg *m, void *arg)
{
	struct route_cond *c = arg;
	struct nlattr **tb = parse(m), *r;
	int rem;

	if (!tb || !tb[TBRDMA_ATTR_ROUTES])
		return NL_OK;
	nla_for_each_nested(r, tb[TBRDMA_ATTR_ROUTES], rem) {
		struct nlattr *e[TBRDMA_ATTR_MAX + 1];

		if (nla_parse_nested(e, TBRDMA_ATTR_MAX, r, tbr_genl_policy) < 0)
			continue;
		if (tbr_nla_u64(e, TBRDMA_ATTR_ROUTE_DST) == c->dst &&
		    tbr_nla_u32(e, TBRDMA_ATTR_ROUTE_HOPS) == c->hops)
			c->seen = true;
	}
	return NL_OK;
}

static uint64_t realtime_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int cmd_route_wait(int argc, char **argv)
{
	struct route_cond c[32];
	uint64_t end;
	int n = argc - 2, i, left;
	bool polling = false;
	char *e;

	if (n < 1 || n > 32)
		die_usage("needs SECS and 1..32 DEV,DST,HOPS");
	end = realtime_us() + (uint64_t)(strtod(argv[1], NULL) * 1e6);
	for (i = 0; i < n; i++) {
		char *a = strdup(argv[i + 2]), *d = strchr(a, ','), *h = d ? strchr(d + 1, ',') : NULL;

		if (!h)
			die_usage("a condition is DEV,DST,HOPS");
		*d = *h = '\0';
		c[i] = (struct route_cond){ .dev = a, .dst = strtoull(d + 1, &e, 16),
					    .hops = (uint32_t)atoi(h + 1) };
	}
	for (left = n;;) {
		for (i = 0; i < n; i++) {
			struct nl_msg *m;

			if (c[i].at_us)
				continue;
			m = msg_new(TBRDMA_CMD_ROUTE_GET, 0);
			nla_put_string(m, TBRDMA_ATTR_DEV_NAME, c[i].dev);
			request(m, route_cond_cb, &c[i]);
			if (c[i].seen) {
				c[i].at_us = realtime_us();
				printf("held dev=%s dst=%016" PRIx64 " hops=%u realtime_us=%" PRIu64 "\n",
				       c[i].dev, c[i].dst, c[i].hops, c[i].at_us);
				fflush(stdout);
				left--;
			}
		}
		if (!left)
			return 0;
		if (!polling) {
			/* a caller may start us first and wait for this line: then act */
			printf("polling since realtime_us=%" PRIu64 "\n", realtime_us());
			fflush(stdout);
			polling = true;
		}
		if (realtime_us() > end)
			break;
		usleep(5000);
	}
	for (i = 0; i < n; i++)
		if (!c[i].at_us)
			printf("timeout dev=%s dst=%016" PRIx64 " hops=%u\n", c[i].dev, c[i].dst,
			       c[i].hops);
	return 1;
}

/* ---- listeners ------------------------------------------------------------ */

static long listen_left = -1;	/* messages still to print, -1: forever */

static int mgmt_cb(struct nl_msg *m, void *arg)
{
	struct nlattr **tb = parse(m);
	const unsigned char *d;
	int len, i;
	bool text = true;

	(void)arg;
	if (!tb || genlmsg_hdr(nlmsg_hdr(m))->cmd != TBRDMA_CMD_MGMT_RECV ||
	    !tb[TBRDMA_ATTR_MGMT_DATA] || filtered(tb))
		return NL_OK;
	d = nla_data(tb[TBRDMA_ATTR_MGMT_DATA]);
	len = nla_len(tb[TBRDMA_ATTR_MGMT_DATA]);
	printf("mgmt dev=%s link=%u rail=%u peer=%016" PRIx64 " len=%d hex=",
	       tbr_nla_str(tb, TBRDMA_ATTR_DEV_NAME, "?"),
	       tbr_nla_u32(tb, TBRDMA_ATTR_LINK_ID),
	       tbr_nla_u32(tb, TBRDMA_ATTR_RAIL_ID),
	       tbr_nla_u64(tb, TBRDMA_ATTR_PEER_GUID),
	       len);
	for (i = 0; i < len; i++) {
		printf("%02x", d[i]);
		if (!isprint(d[i]) || d[i] == ' ')
			text = false;
	}
	if (text)
		printf(" text=%.*s", len, (const char *)d);
	printf("\n");
	fflush(stdout);
	if (listen_left > 0)
		listen_left--;
	return NL_OK;
}

static int event_cb(struct nl_msg *m, void *arg)
{
	struct nlattr **tb = parse(m);
	uint8_t cmd = genlmsg_hdr(nlmsg_hdr(m))->cmd;

	(void)arg;
	if (!tb)
		return NL_OK;
	switch (cmd) {
	case TBRDMA_CMD_DEV_EVENT:
		print_dev(tb, "event=dev");
		break;
	case TBRDMA_CMD_LINK_EVENT:
		print_link(tb, "event=link");
		break;
	case TBRDMA_CMD_RAIL_EVENT:
		print_rail(tb, "event=rail");
		break;
	default:
		return NL_OK;
	}
	printf(" what=%s\n", tbr_genl_event_name(tb));
	fflush(stdout);
	if (listen_left > 0)
		listen_left--;
	return NL_OK;
}

static int do_listen(int argc, char **argv, const char *group, nl_recvmsg_msg_cb_t cbf,
		     bool dev_arg)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct timespec t0, now;
	double timeout = -1;
	int c, grp, err;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'n')
			listen_left = parse_u32(optarg, "--count", INT32_MAX);
		else if (c == 't')
			timeout = parse_u32(optarg, "--timeout", 86400);
		else
			die_usage("unknown option");
	}
	if (argc - optind > (dev_arg ? 1 : 0))
		die_usage("too many arguments");
	if (argc - optind == 1)
		filter_dev = argv[optind];
	grp = genl_ctrl_resolve_grp(sk, TBRDMA_GENL_NAME, group);
	if (grp < 0) {
		fprintf(stderr, "%s %s: no multicast group %s\n", prog, cmdname, group);
		return 1;
	}
	err = nl_socket_add_membership(sk, grp);
	if (err) {
		fprintf(stderr, "%s %s: joining group %s: %s\n", prog, cmdname, group,
			nl_geterror(err));
		return 1;
	}
	nl_socket_disable_seq_check(sk);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, cbf, NULL);
	fprintf(stderr, "%s: listening on %s\n", prog, group);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (listen_left != 0) {
		struct pollfd pfd = { .fd = nl_socket_get_fd(sk), .events = POLLIN };
		int ms = -1;

		if (timeout >= 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			ms = (int)((timeout - (now.tv_sec - t0.tv_sec) -
				    (now.tv_nsec - t0.tv_nsec) / 1e9) * 1000);
			if (ms <= 0)
				return listen_left > 0 ? 1 : 0;
		}
		if (poll(&pfd, 1, ms) > 0) {
			err = nl_recvmsgs_default(sk);
			if (err < 0 && err != -NLE_AGAIN) {
				fprintf(stderr, "%s %s: %s\n", prog, cmdname, nl_geterror(err));
				return 1;
			}
		}
	}
	return 0;
}

static int eth_cb(struct nl_msg *m, void *arg)
{
	struct nlattr **tb = parse(m);

	(void)arg;
	if (!tb || filtered(tb))
		return NL_OK;
	printf("eth dev=%s ifname=%s ifindex=%u state=%s max_frame=%u peers=%u hello_tx=%" PRIu64
	       " hello_rx=%" PRIu64 " rx_foreign=%" PRIu64 " auth_refused=%" PRIu64 "\n",
	       tbr_nla_str(tb, TBRDMA_ATTR_DEV_NAME, "?"), tbr_nla_str(tb, TBRDMA_ATTR_ETH_IFNAME, "?"),
	       tbr_nla_u32(tb, TBRDMA_ATTR_ETH_IFINDEX), state_name(tb),
	       tbr_nla_u32(tb, TBRDMA_ATTR_MAX_FRAME),
	       tbr_nla_u32(tb, TBRDMA_ATTR_ETH_PEERS),
	       tbr_nla_u64(tb, TBRDMA_ATTR_ETH_HELLO_TX),
	       tbr_nla_u64(tb, TBRDMA_ATTR_ETH_HELLO_RX),
	       tbr_nla_u64(tb, TBRDMA_ATTR_ETH_RX_FOREIGN),
	       tbr_nla_u64(tb, TBRDMA_ATTR_AUTH_REFUSED));
	return NL_OK;
}

static int cmd_eth_bind_common(int argc, char **argv, uint8_t cmd)
{
	struct nl_msg *m;

	if (argc != 3)
		die_usage("needs DEV IFNAME");
	if (!argv[2][0] || strlen(argv[2]) >= 16)
		die_usage("IFNAME must be 1..15 characters");
	m = msg_new(cmd, NLM_F_ACK);
	nla_put_string(m, TBRDMA_ATTR_DEV_NAME, argv[1]);
	nla_put_string(m, TBRDMA_ATTR_ETH_IFNAME, argv[2]);
	return request(m, NULL, NULL);
}

static int cmd_eth_bind(int argc, char **argv)
{
	return cmd_eth_bind_common(argc, argv, TBRDMA_CMD_ETH_BIND);
}

static int cmd_eth_unbind(int argc, char **argv)
{
	return cmd_eth_bind_common(argc, argv, TBRDMA_CMD_ETH_UNBIND);
}

static int cmd_eth(int argc, char **argv)
{
	if (argc > 2)
		die_usage("takes at most DEV");
	filter_dev = argc == 2 ? argv[1] : NULL;
	return request(msg_new(TBRDMA_CMD_ETH_GET, NLM_F_DUMP), eth_cb, NULL);
}

static int cmd_mgmt_listen(int argc, char **argv)
{
	return do_listen(argc, argv, TBRDMA_MCGRP_MGMT, mgmt_cb, true);
}

static int cmd_events(int argc, char **argv)
{
	return do_listen(argc, argv, TBRDMA_MCGRP_EVENTS, event_cb, false);
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "devs", cmd_devs },
	{ "dev-new", cmd_dev_new },
	{ "dev-del", cmd_dev_del },
	{ "cable-new", cmd_cable_new },
	{ "cable-del", cmd_cable_del },
	{ "cables", cmd_cables },
	{ "links", cmd_links },
	{ "rail-set", cmd_rail_set },
	{ "mgmt-send", cmd_mgmt_send },
	{ "mgmt-listen", cmd_mgmt_listen },
	{ "events", cmd_events },
	{ "eth-bind", cmd_eth_bind },
	{ "eth-unbind", cmd_eth_unbind },
	{ "eth", cmd_eth },
	{ "route-set", cmd_route_set },
	{ "link-trust", cmd_link_trust },
	{ "auth-key", cmd_auth_key },
	{ "routes", cmd_routes },
	{ "route-wait", cmd_route_wait },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		cmdname = cmds[i].name;
		if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
			usage(stdout);
			return 0;
		}
		nl_open();
		return cmds[i].fn(argc - 1, argv + 1) ? 1 : 0;
	}
	fprintf(stderr, "%s: unknown command \"%s\" (see --help)\n", prog, argv[1]);
	return 2;
}
