// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbctl capture -w FILE [-i DEVICE] [-c COUNT] [-s SNAPLEN] [--rail N] [--qpn N]: write what a
 * tbrdma device's rails send and receive to a pcap file, as RoCE v2 (docs/capture.md). Root
 * only. Like `tbctl eth`, it talks to the kernel's genl family directly: CAPTURE_NEW makes (or
 * finds) the device's monitor tbrmonN, tbctl sets it up, reads it with a packet socket and
 * writes the pcap file itself (no libpcap); at the end (COUNT frames, SIGINT or SIGTERM) it sets
 * the monitor down again, which turns the kernel's tap off. The filters drop frames here: --rail
 * keeps RoCE frames of that rail (UDP source port), --qpn those whose BTH names that QPN.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "genl.h"
#include "tbctl.h"

#define CAP_BUF		65536
#define ROCE_PORT	4791

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct cap_new {
	uint32_t snaplen;
	char ifname[IF_NAMESIZE];
	int ifindex;
};

static int cap_new_reply(struct nl_msg *m, void *arg)
{
	struct nlattr *tb[TBRDMA_ATTR_MAX + 1];
	struct cap_new *c = arg;

	if (tbr_genl_parse(m, tb) == 0 && tb[TBRDMA_ATTR_NETDEV_NAME]) {
		snprintf(c->ifname, sizeof(c->ifname), "%s", nla_get_string(tb[TBRDMA_ATTR_NETDEV_NAME]));
		c->ifindex = tbr_nla_u32(tb, TBRDMA_ATTR_NETDEV_IFINDEX);
	}
	return NL_OK;
}

static int cap_new_fill(struct nl_msg *m, void *arg)
{
	return nla_put_u32(m, TBRDMA_ATTR_SNAPLEN, ((struct cap_new *)arg)->snaplen);
}

/* the device's monitor over genl: 0, or EXIT_ERROR with the reason printed */
static int monitor_new(const char *dev, struct cap_new *c)
{
	char err[256] = "";
	int k;

	k = tbctl_genl(TBRDMA_CMD_CAPTURE_NEW, dev, cap_new_fill, cap_new_reply, c, err, sizeof(err));
	if (k > 0)
		return k;
	if (k == 0 && !c->ifindex)
		k = -EBADMSG;
	if (k < 0) {
		fprintf(stderr, "tbctl: capture on %s: %s%s%s\n", dev,
			k == -EPERM ? "permission denied (root only)" :
			k == -EOPNOTSUPP || k == -EINVAL ? "the tbrdma module has no capture (too old)" :
			strerror(-k), err[0] ? ": " : "", err);
		return EXIT_ERROR;
	}
	return 0;
}

static int link_up(int fd, const char *ifname, bool up)
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return -errno;
	ifr.ifr_flags = up ? ifr.ifr_flags | IFF_UP : ifr.ifr_flags & ~IFF_UP;
	return ioctl(fd, SIOCSIFFLAGS, &ifr) < 0 ? -errno : 0;
}

/* the RoCE v2 BTH of an Ethernet frame, or NULL; its UDP source port in *sport */
static const uint8_t *roce_bth(const uint8_t *p, size_t n, unsigned *sport)
{
	size_t off;
	uint16_t type;

	if (n < 14)
		return NULL;
	type = p[12] << 8 | p[13];
	if (type == ETHERTYPE_IP && n >= 34 && p[23] == 17)
		off = 14 + (p[14] & 0xf) * 4;
	else if (type == ETHERTYPE_IPV6 && n >= 54 && p[20] == 17)
		off = 54;
	else
		return NULL;
	if (n < off + 8 + 12 || (p[off + 2] << 8 | p[off + 3]) != ROCE_PORT)
		return NULL;
	*sport = p[off] << 8 | p[off + 1];
	return p + off + 8;
}

/* the frame passes the filters (-1: none) */
static bool wanted(const uint8_t *p, size_t n, long rail, long qpn)
{
	const uint8_t *bth;
	unsigned sport;

	if (rail < 0 && qpn < 0)
		return true;
	bth = roce_bth(p, n, &sport);
	if (!bth)
		return false;
	if (rail >= 0 && (long)(sport & 0xff) != rail)
		return false;
	return qpn < 0 || (long)((uint32_t)bth[5] << 16 | bth[6] << 8 | bth[7]) == qpn;
}

static int put32(FILE *f, uint32_t v)
{
	return fwrite(&v, 4, 1, f) == 1 ? 0 : -1;
}

static int parse_long(const char *s, const char *what, long min, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 0);
	if (errno || end == s || *end || *out < min || *out > max)
		return usage_error("capture: bad %s \"%s\" (%ld..%ld)", what, s, min, max);
	return 0;
}

int verb_capture(int argc, char **argv)
{
	enum { OPT_RAIL = 256, OPT_QPN };
	static const struct option opts[] = {
		{ "write", required_argument, NULL, 'w' },
		{ "interface", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "snaplen", required_argument, NULL, 's' },
		{ "rail", required_argument, NULL, OPT_RAIL },
		{ "qpn", required_argument, NULL, OPT_QPN },
		{ NULL, 0, NULL, 0 },
	};
	const char *file = NULL, *dev = "tbrdma0";
	long count = 0, snap = 65535, rail = -1, qpn = -1, got = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	struct sockaddr_ll sll = { 0 };
	struct cap_new mon = { .ifindex = 0 };
	static uint8_t buf[CAP_BUF];
	int c, r, fd, ret = EXIT_OK;
	FILE *out;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":w:i:c:s:", opts, NULL)) != -1) {
		switch (c) {
		case 'w': file = optarg; break;
		case 'i': dev = optarg; break;
		case 'c':
			if ((r = parse_long(optarg, "COUNT", 1, 1000000000L, &count)))
				return r;
			break;
		case 's':
			if ((r = parse_long(optarg, "SNAPLEN", 64, 65535, &snap)))
				return r;
			break;
		case OPT_RAIL:
			if ((r = parse_long(optarg, "RAIL", 0, 15, &rail)))
				return r;
			break;
		case OPT_QPN:
			if ((r = parse_long(optarg, "QPN", 0, 0xffffff, &qpn)))
				return r;
			break;
		case ':':
			return usage_error("capture: option %s needs an argument", argv[optind - 1]);
		default:
			return usage_error("capture: unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("capture: unexpected argument \"%s\"", argv[optind]);
	if (!file || !file[0])
		return usage_error("capture needs -w FILE");
	if (!dev[0] || strlen(dev) >= 32)
		return usage_error("capture: bad DEVICE \"%s\"", dev);

	mon.snaplen = (uint32_t)snap;
	r = monitor_new(dev, &mon);
	if (r)
		return r;
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0) {
		fprintf(stderr, "tbctl: packet socket: %s\n", strerror(errno));
		return EXIT_ERROR;
	}
	r = 8 << 20;	/* a burst of frames waits here while the file is written */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &r, sizeof(r));
	r = 0;
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = mon.ifindex;
	/* up first: a packet socket bound to a down device reports ENETDOWN once */
	if ((r = link_up(fd, mon.ifname, true)) || bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		fprintf(stderr, "tbctl: %s: %s\n", mon.ifname, strerror(r ? -r : errno));
		link_up(fd, mon.ifname, false);
		close(fd);
		return EXIT_ERROR;
	}
	out = strcmp(file, "-") ? fopen(file, "wb") : stdout;
	if (!out) {
		fprintf(stderr, "tbctl: %s: %s\n", file, strerror(errno));
		link_up(fd, mon.ifname, false);
		close(fd);
		return EXIT_ERROR;
	}
	/* pcap: magic (microseconds), 2.4, zone 0, sigfigs 0, snaplen, LINKTYPE_ETHERNET */
	put32(out, 0xa1b2c3d4);
	put32(out, 2 | 4 << 16);
	put32(out, 0);
	put32(out, 0);
	put32(out, (uint32_t)snap);
	put32(out, 1);
	fflush(out);
	sigaction(SIGINT, &sa, NULL);	/* no SA_RESTART: recv returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "tbctl: capturing on %s (%s) into %s\n", mon.ifname, dev, file);
	while (!stop && (!count || got < count)) {
		struct timespec ts;
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_TRUNC);
		uint32_t caplen;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "tbctl: %s: %s\n", mon.ifname, strerror(errno));
			ret = EXIT_ERROR;
			break;
		}
		caplen = (size_t)n > sizeof(buf) ? sizeof(buf) : (uint32_t)n;
		if (caplen > snap)
			caplen = snap;
		if (!wanted(buf, caplen, rail, qpn))
			continue;
		clock_gettime(CLOCK_REALTIME, &ts);
		if (put32(out, ts.tv_sec) || put32(out, ts.tv_nsec / 1000) || put32(out, caplen) ||
		    put32(out, (uint32_t)n) || fwrite(buf, 1, caplen, out) != caplen) {
			fprintf(stderr, "tbctl: %s: %s\n", file, strerror(errno));
			ret = EXIT_ERROR;
			break;
		}
		got++;
	}
	link_up(fd, mon.ifname, false);	/* nobody listens: the kernel's tap goes off */
	close(fd);
	if ((out == stdout ? fflush(out) : fclose(out)) && ret == EXIT_OK) {
		fprintf(stderr, "tbctl: %s: %s\n", file, strerror(errno));
		ret = EXIT_ERROR;
	}
	fprintf(stderr, "tbctl: %ld frames captured\n", got);
	return ret;
}
