// SPDX-License-Identifier: GPL-2.0
/*
 * stall_watch: how long a test guest went without running, as the guest's own clock saw it.
 *
 * A QEMU TCG guest whose host is loaded can be left without CPU for a while; its clock keeps
 * running (it follows the host's), so a timer set inside the guest fires late, at once for
 * all it missed: a QP's retransmit timer then counts timeouts its peer had no chance to answer.
 * This program sleeps 100 ms at a time at the highest SCHED_FIFO priority (nothing in the guest
 * can hold it off, only the host) and writes down every long gap between two wake-ups. Ten
 * wake-ups a second cost less than the noise of an idle TCG guest's 13-18% of a host core
 * (docs/testing.md), and the stalls that matter last hundreds of ms (a QP's 8 timeouts at 67 ms).
 *
 * Usage: stall_watch FILE [THRESHOLD_MS]   (default 150; above the 100 ms period). Writes a header
 * line to FILE, then one line per gap of THRESHOLD_MS or more as it ends, "END_S GAP_MS" (END_S:
 * CLOCK_MONOTONIC seconds, the time base of the kernel's log), e.g. "118.204 612.4"; runs until
 * killed. tests/vm/lib/guest.sh's stall_report sums it up.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sched_param sp = { .sched_priority = sched_get_priority_max(SCHED_FIFO) };
	struct timespec period = { .tv_sec = 0, .tv_nsec = 100000000 };
	double threshold_ms = 150, prev, t, ms;
	FILE *f;

	if (argc < 2 || argc > 3 || (argc == 3 && (threshold_ms = atof(argv[2])) <= 100)) {
		fprintf(stderr, "usage: stall_watch FILE [THRESHOLD_MS]\n");
		return 2;
	}
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		fprintf(stderr, "stall_watch: SCHED_FIFO: %s (gaps include the guest's own load)\n",
			strerror(errno));
	f = fopen(argv[1], "w");
	if (!f) {
		fprintf(stderr, "stall_watch: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	prev = now_s();
	fprintf(f, "# stall_watch since %.3f s: gaps of %.0f ms or more between 100 ms sleeps, "
		"END_S GAP_MS\n", prev, threshold_ms);
	for (;;) {
		if (fflush(f))
			return 1;
		do {
			if (nanosleep(&period, NULL) && errno != EINTR)
				return 1;
			t = now_s();
			ms = (t - prev) * 1e3;
			prev = t;
		} while (ms < threshold_ms);
		fprintf(f, "%.3f %.1f\n", t, ms);
	}
}
