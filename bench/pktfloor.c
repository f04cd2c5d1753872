// SPDX-License-Identifier: GPL-2.0
/*
 * pktfloor: what a link gives with no stack on it (docs/bench-speed.md section 23): one frame
 * each way through the kernel's packet path and nothing of RDMA, the floor under any stack's
 * round trip over that link; and the bytes raw frames move, a reference for what the host carries
 * over one link or several at once (not a ceiling: AF_PACKET copies every frame to and from user
 * space, where a stack in the kernel need not). Raw Ethernet frames through AF_PACKET, with
 * ethertype 0x88B6 (IEEE 802 local experimental ethertype 2; tbrdma's eth rails use 1, 0x88B5),
 * busy polled, no copy beyond the socket's own:
 *
 *   pktfloor pong IFACE                 echo every frame back to its sender until a stop frame
 *   pktfloor ping IFACE MAC N SIZE      N ping-pongs of SIZE (5..65521) payload bytes with a
 *                                       pong on MAC; prints the median one-way time (round
 *                                       trip / 2), the figure perftest's *_lat print as t_typical
 *   pktfloor sink IFACE                 count the payload bytes that arrive until a stop frame;
 *                                       prints MB/s from the first frame to the last
 *   pktfloor blast IFACE MAC SIZE SECS  send SIZE-byte frames to MAC for SECS seconds, as fast as
 *                                       the device takes them (a full queue blocks the sender)
 *   pktfloor stop IFACE MAC             end the pong or sink on MAC (a few stop frames)
 *
 * Nothing waits forever: pong, ping and sink give up after PKTF_IDLE_S seconds without a frame.
 * A ping started before its pong resends its warm-up frames until one is answered.
 * Exit status 0, or 1 with a message on stderr.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PKTF_ETHERTYPE	0x88B6
#define PKTF_HDR	14		/* Ethernet header */
#define PKTF_MAX	65535		/* frame bytes */
#define PKTF_IDLE_S	60
#define PKTF_WARMUP	20		/* ping-pongs not counted */
#define PKTF_RESEND_S	0.2		/* a warm-up frame unanswered for this long goes again */
#define PKTF_STOP_COPIES 5

enum { KIND_DATA = 0, KIND_STOP = 0xff };	/* first payload byte */

struct link {
	int fd;
	uint8_t mac[ETH_ALEN];
	struct sockaddr_ll addr;
};

static void die(const char *what)
{
	fprintf(stderr, "pktfloor: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void link_open(struct link *l, const char *ifname)
{
	struct ifreq r = { 0 };

	l->fd = socket(AF_PACKET, SOCK_RAW, htons(PKTF_ETHERTYPE));
	if (l->fd < 0)
		die("socket(AF_PACKET)");
	memset(&l->addr, 0, sizeof(l->addr));
	l->addr.sll_family = AF_PACKET;
	l->addr.sll_protocol = htons(PKTF_ETHERTYPE);
	l->addr.sll_ifindex = if_nametoindex(ifname);
	if (!l->addr.sll_ifindex)
		die(ifname);
	if (bind(l->fd, (struct sockaddr *)&l->addr, sizeof(l->addr)))
		die("bind");
	if (strlen(ifname) >= sizeof(r.ifr_name)) {
		errno = ENAMETOOLONG;
		die(ifname);
	}
	strcpy(r.ifr_name, ifname);
	if (ioctl(l->fd, SIOCGIFHWADDR, &r))
		die("SIOCGIFHWADDR");
	memcpy(l->mac, r.ifr_hwaddr.sa_data, ETH_ALEN);
}

/* a frame to @dst of @size payload bytes, the first being @kind */
static void frame_init(const struct link *l, uint8_t *f, const uint8_t *dst, uint8_t kind)
{
	memcpy(f, dst, ETH_ALEN);
	memcpy(f + ETH_ALEN, l->mac, ETH_ALEN);
	f[12] = PKTF_ETHERTYPE >> 8;
	f[13] = PKTF_ETHERTYPE & 0xff;
	f[PKTF_HDR] = kind;
}

static void mac_parse(const char *s, uint8_t *mac)
{
	if (sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3],
		   &mac[4], &mac[5]) != ETH_ALEN) {
		fprintf(stderr, "pktfloor: '%s' is no MAC address\n", s);
		exit(1);
	}
}

static long arg_long(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || v < lo || v > hi) {
		fprintf(stderr, "pktfloor: %s '%s' is not in %ld..%ld\n", what, s, lo, hi);
		exit(1);
	}
	return v;
}

/*
 * Busy poll for a frame of ours (the socket filters the ethertype): its length, or 0 when
 * @timeout seconds passed first. Exits after PKTF_IDLE_S without a frame.
 */
static ssize_t frame_wait(const struct link *l, uint8_t *buf, double timeout)
{
	double start = now_s(), t;
	unsigned long spins = 0;
	ssize_t n;

	for (;;) {
		n = recv(l->fd, buf, PKTF_MAX, MSG_DONTWAIT);
		if (n > PKTF_HDR)
			return n;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			die("recv");
		if (++spins & 0x3ff)
			continue;
		t = now_s() - start;
		if (t > timeout)
			return 0;
		if (t > PKTF_IDLE_S) {
			fprintf(stderr, "pktfloor: no frame for %d s\n", PKTF_IDLE_S);
			exit(1);
		}
	}
}

static void frame_send(const struct link *l, const uint8_t *f, size_t len)
{
	while (send(l->fd, f, len, 0) < 0) {
		if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
			die("send");
	}
}

static int pong(const struct link *l)
{
	static uint8_t buf[PKTF_MAX];
	ssize_t n;

	for (;;) {
		n = frame_wait(l, buf, PKTF_IDLE_S + 1);
		if (buf[PKTF_HDR] == KIND_STOP)
			return 0;
		memcpy(buf, buf + ETH_ALEN, ETH_ALEN);	/* back to the sender */
		memcpy(buf + ETH_ALEN, l->mac, ETH_ALEN);
		frame_send(l, buf, n);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int ping(const struct link *l, const uint8_t *dst, long iters, long size)
{
	static uint8_t f[PKTF_MAX], buf[PKTF_MAX];
	double *rtt = calloc(iters, sizeof(*rtt));
	long i;

	if (!rtt)
		die("calloc");
	frame_init(l, f, dst, KIND_DATA);
	for (i = -PKTF_WARMUP; i < iters; i++) {
		double t = now_s();
		uint32_t seq = i + PKTF_WARMUP;
		ssize_t n;

		memcpy(f + PKTF_HDR + 1, &seq, sizeof(seq));
		/*
		 * The pong may not be up yet: a warm-up frame goes again until one is answered;
		 * an echo of an earlier one (the sequence number after the kind) is skipped.
		 */
		do {
			frame_send(l, f, PKTF_HDR + size);
			while ((n = frame_wait(l, buf, i < 0 ? PKTF_RESEND_S : PKTF_IDLE_S + 1)) &&
			       memcmp(buf + PKTF_HDR + 1, &seq, sizeof(seq)))
				;
		} while (!n);
		if (i >= 0)
			rtt[i] = now_s() - t;
	}
	qsort(rtt, iters, sizeof(*rtt), cmp_double);
	printf("pktfloor: ping %ld x %ld B: one-way median %.2f us (min %.2f)\n", iters, size,
	       rtt[iters / 2] / 2 * 1e6, rtt[0] / 2 * 1e6);
	free(rtt);
	return 0;
}

static int sink(const struct link *l)
{
	static uint8_t buf[PKTF_MAX];
	double first = 0, last = 0;
	long long bytes = 0;
	ssize_t n;

	for (;;) {
		n = frame_wait(l, buf, PKTF_IDLE_S + 1);
		if (buf[PKTF_HDR] == KIND_STOP)
			break;
		last = now_s();
		if (!first)
			first = last;	/* the rate counts from here: the first frame is not in it */
		else
			bytes += n - PKTF_HDR;
	}
	if (last <= first) {
		fprintf(stderr, "pktfloor: sink: fewer than two frames\n");
		return 1;
	}
	printf("pktfloor: sink %.2f MB/s over %.2f s\n", bytes / (last - first) / 1e6, last - first);
	return 0;
}

static int blast(const struct link *l, const uint8_t *dst, long size, long secs)
{
	static uint8_t f[PKTF_MAX];
	double end = now_s() + secs;
	long long n = 0;
	int i;

	frame_init(l, f, dst, KIND_DATA);
	while (now_s() < end) {
		for (i = 0; i < 64; i++)
			frame_send(l, f, PKTF_HDR + size);
		n += 64;
	}
	printf("pktfloor: blast %lld frames of %ld B\n", n, size);
	return 0;
}

static int stop(const struct link *l, const uint8_t *dst)
{
	uint8_t f[64] = { 0 };
	int i;

	frame_init(l, f, dst, KIND_STOP);
	for (i = 0; i < PKTF_STOP_COPIES; i++)
		frame_send(l, f, sizeof(f));
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: pktfloor pong IFACE | ping IFACE MAC N SIZE | sink IFACE |\n"
			"       blast IFACE MAC SIZE SECS | stop IFACE MAC\n");
	exit(2);
}

int main(int argc, char **argv)
{
	uint8_t dst[ETH_ALEN];
	struct link l;
	const char *cmd;

	if (argc < 3)
		usage();
	cmd = argv[1];
	if ((!strcmp(cmd, "pong") || !strcmp(cmd, "sink")) && argc == 3) {
		link_open(&l, argv[2]);
		return cmd[0] == 'p' ? pong(&l) : sink(&l);
	}
	if (argc < 4)
		usage();
	mac_parse(argv[3], dst);
	if (!strcmp(cmd, "ping") && argc == 6) {
		long iters = arg_long(argv[4], 1, 10000000, "N");
		long size = arg_long(argv[5], 5, PKTF_MAX - PKTF_HDR, "SIZE");

		link_open(&l, argv[2]);
		return ping(&l, dst, iters, size);
	}
	if (!strcmp(cmd, "blast") && argc == 6) {
		long size = arg_long(argv[4], 1, PKTF_MAX - PKTF_HDR, "SIZE");
		long secs = arg_long(argv[5], 1, 3600, "SECS");

		link_open(&l, argv[2]);
		return blast(&l, dst, size, secs);
	}
	if (!strcmp(cmd, "stop") && argc == 4) {
		link_open(&l, argv[2]);
		return stop(&l, dst);
	}
	usage();
	return 2;
}
