// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Talking to tbrdmad: one connection per call, one request line, one reply line. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "protocol.h"
#include "tbctl.h"

#define REPLY_TIMEOUT_MS 15000
#define REPLY_MAX (64u << 20)

static char last_error[512];

const char *call_error(void)
{
	return last_error;
}

/* an error of call(): on stderr as "tbctl: MESSAGE", or only kept for call_error() (arg.quiet) */
static void __attribute__((format(printf, 1, 2))) report(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	if (!arg.quiet)
		fprintf(stderr, "tbctl: %s\n", last_error);
}

static int unreachable(const char *what, int err)
{
	report("cannot reach tbrdmad at %s: %s%s%s", arg.socket, what, err ? ": " : "",
	       err ? strerror(err) : "");
	if (!arg.quiet)
		fprintf(stderr, "hint: is tbrdmad running? systemctl status tbrdmad\n");
	return EXIT_UNREACHABLE;
}

static int connect_daemon(int *ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(arg.socket) >= sizeof(sa.sun_path)) {
		report("socket path too long: %s", arg.socket);
		return EXIT_USAGE;
	}
	strcpy(sa.sun_path, arg.socket);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		report("socket: %s", strerror(errno));
		return EXIT_ERROR;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		return unreachable("connect", e);
	}
	*ret = fd;
	return EXIT_OK;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += k;
		n -= k;
	}
	return 0;
}

/* reads one line; 0 and a malloc'd NUL-terminated line, or an exit code */
static int read_line(int fd, char **ret)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char *nl;
		ssize_t k;
		int r;

		if (cap - len < 65536) {
			char *b = realloc(buf, cap + 262144);

			if (!b) {
				free(buf);
				report("out of memory");
				return EXIT_ERROR;
			}
			buf = b;
			cap += 262144;
		}
		r = poll(&p, 1, REPLY_TIMEOUT_MS);
		if (r == 0) {
			free(buf);
			return unreachable("no reply within 15 s", 0);
		}
		if (r < 0 && errno == EINTR)
			continue;
		k = recv(fd, buf + len, cap - len - 1, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			int e = k < 0 ? errno : 0;

			free(buf);
			return unreachable(k < 0 ? "receive" : "the daemon closed the connection", e);
		}
		nl = memchr(buf + len, '\n', k);
		len += k;
		if (nl) {
			*nl = '\0';
			*ret = buf;
			return EXIT_OK;
		}
		if (len > REPLY_MAX) {
			free(buf);
			report("reply larger than %u bytes", REPLY_MAX);
			return EXIT_ERROR;
		}
	}
}

int call(json_object *request, json_object **ret)
{
	const char *s;
	char *line = NULL, *out;
	size_t n;
	int fd = -1, r;
	json_object *reply, *e;

	r = connect_daemon(&fd);
	if (r)
		return r;
	s = json_object_to_json_string_length(request, JSON_C_TO_STRING_PLAIN, &n);
	out = malloc(n + 1);
	if (!out) {
		close(fd);
		return EXIT_ERROR;
	}
	memcpy(out, s, n);
	out[n] = '\n';
	r = send_all(fd, out, n + 1);
	free(out);
	if (r < 0) {
		close(fd);
		return unreachable("send", -r);
	}
	r = read_line(fd, &line);
	close(fd);
	if (r)
		return r;
	reply = json_tokener_parse(line);
	free(line);
	if (!reply || !json_object_is_type(reply, json_type_object)) {
		json_object_put(reply);
		report("the daemon's reply is not a JSON object");
		return EXIT_ERROR;
	}
	if (jint(reply, "schema") != TBRDMAD_SCHEMA && !arg.quiet)
		fprintf(stderr, "tbctl: warning: reply schema %lld, this tbctl knows %d\n",
			(long long)jint(reply, "schema"), TBRDMAD_SCHEMA);
	if (!jbool(reply, "ok")) {
		e = jget(reply, "error");
		if (arg.json && !arg.quiet)
			print_json(reply);
		report("%s%s%s", e ? jstr(e, "message") : "request failed",
			e && !strcmp(jstr(e, "code"), ERR_PERMISSION) ?
			" (permission denied: run as root)" : "",
			e && !strcmp(jstr(e, "code"), ERR_UNAVAILABLE) ?
			" (modprobe tbrdma?)" : "");
		if (arg.quiet)
			*ret = reply;
		else
			json_object_put(reply);
		return EXIT_ERROR;
	}
	*ret = reply;
	return EXIT_OK;
}

int call_method(const char *method, const char *device, json_object **ret)
{
	json_object *req = json_object_new_object();
	int r;

	json_object_object_add(req, "method", json_object_new_string(method));
	if (device)
		json_object_object_add(req, "device", json_object_new_string(device));
	r = call(req, ret);
	json_object_put(req);
	return r;
}

int query(const char *method, const char *device, json_object **ret)
{
	int r = call_method(method, device, ret);

	if (r || !arg.json)
		return r;
	print_json(*ret);
	json_object_put(*ret);
	*ret = NULL;
	return EXIT_OK;
}
