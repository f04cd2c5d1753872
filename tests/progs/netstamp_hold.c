// SPDX-License-Identifier: GPL-2.0
/*
 * netstamp_hold: keep the kernel's receive-timestamp static key (netstamp_needed_key) enabled
 * for the life of a test guest.
 *
 * The network stack enables that key when the first socket asks for receive timestamps (ping
 * does, through SO_TIMESTAMP) and disables it when the last such socket closes. Each change
 * patches code (netif_rx_internal, netif_receive_skb) that every vCPU runs, and multi-threaded
 * TCG now and then runs a stale translation holding the patch's int3 (docs/testing.md, the
 * harness flakes). One socket that asks for timestamps, held from early in the guest's init
 * (tests/vm/lib/init) until poweroff, sets the key once, before any test runs; every later
 * socket only counts.
 *
 * Usage: netstamp_hold PIDFILE. Returns once the socket is set up, leaving a child that holds it
 * (detached: its own session, no standard descriptors, not a child of the caller's shell).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int die(const char *what)
{
	fprintf(stderr, "netstamp_hold: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	int one = 1, fd, null, status;
	pid_t pid;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: netstamp_hold PIDFILE\n");
		return 2;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return die("socket");
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &one, sizeof(one)))
		return die("setsockopt SO_TIMESTAMP");
	/* double fork: the holder is reparented to PID 1, so no script's bare wait waits for it */
	pid = fork();
	if (pid < 0)
		return die("fork");
	if (pid > 0) {
		if (waitpid(pid, &status, 0) < 0)
			return die("waitpid");
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	if (setsid() < 0)
		return die("setsid");
	pid = fork();
	if (pid < 0)
		return die("fork");
	if (pid > 0) {
		f = fopen(argv[1], "w");
		if (!f)
			return die(argv[1]);
		fprintf(f, "%d\n", (int)pid);
		return fclose(f) ? die(argv[1]) : 0;
	}
	null = open("/dev/null", O_RDWR);
	if (null < 0)
		_exit(1);
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	if (null > 2)
		close(null);
	if (chdir("/"))
		_exit(1);
	for (;;)
		pause();
}
