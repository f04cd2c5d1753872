// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The state socket: a unix stream socket serving newline-delimited JSON (docs/json.md) to any
 * number of clients, all non-blocking on sd-event. Each client has an input buffer bounded by
 * TBRDMAD_LINE_MAX (a longer line gets a "too-large" error and is skipped up to its newline) and
 * an output queue. The queue is checked before each request: once it holds OUT_HIGH bytes the
 * client's remaining requests wait (neither processed nor read) until it has read its replies,
 * so a client pipelining requests without reading holds at most OUT_HIGH plus one reply and
 * can neither block the daemon nor make it grow without bound. The peer's uid comes from
 * SO_PEERCRED at accept time; one uid (but root) may hold MaxClientsPerUser= connections, and
 * the last MaxClients/16 slots are kept for root, so no unprivileged user can lock root out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>

#include "json.h"
#include "log.h"
#include "manager.h"
#include "protocol.h"
#include "request.h"
#include "util.h"

#define OUT_HIGH (1u << 20)	/* stop reading a client whose unread replies exceed this */
#define IN_CHUNK 16384
#define ACCEPTS_PER_WAKEUP 64

struct Client {
	Manager *m;
	Client *prev, *next;
	int fd;
	sd_event_source *source;
	uid_t uid;
	pid_t pid;
	char *in;
	size_t in_len, in_cap;
	bool discard;		/* skipping the rest of an oversized line */
	bool eof;
	char *out;
	size_t out_len, out_off;
};

static size_t pending(const Client *c)
{
	return c->out_len - c->out_off;
}

static void client_free(Client *c)
{
	Manager *m = c->m;

	if (c->prev)
		c->prev->next = c->next;
	else
		m->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	m->n_clients--;
	sd_event_source_disable_unref(c->source);
	close(c->fd);
	free(c->in);
	free(c->out);
	log_debug("client pid %d uid %u gone (%u left)", (int)c->pid, (unsigned)c->uid, m->n_clients);
	free(c);
}

static int queue(Client *c, const char *data, size_t len)
{
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_off > 0 && c->out_off >= c->out_len / 2) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	char *p = realloc(c->out, c->out_len + len);
	if (!p)
		return -ENOMEM;
	c->out = p;
	memcpy(c->out + c->out_len, data, len);
	c->out_len += len;
	if (pending(c) > c->m->out_peak)
		c->m->out_peak = pending(c);
	return 0;
}

static int queue_reply(Client *c, json_object *reply)
{
	static const char oom[] = "{\"schema\":1,\"ok\":false,\"error\":{\"code\":\"" ERR_INTERNAL
				  "\",\"message\":\"out of memory\"}}\n";
	_cleanup_free_ char *line = NULL;
	size_t len = 0;

	if (reply)
		line = reply_to_line(reply, &len);
	if (!line)
		return queue(c, oom, sizeof(oom) - 1);
	return queue(c, line, len);
}

static void handle_line(Client *c, const char *line, size_t len)
{
	_cleanup_json_ json_object *reply = NULL;
	DaemonInfo info;
	RequestContext ctx = {
		.uid = c->uid,
		.model = &c->m->model,
		.info = &info,
		.ops = &manager_request_ops,
		.userdata = c->m,
	};

	while (len && (line[len - 1] == '\r'))
		len--;
	if (len == 0)
		return;		/* empty lines are ignored */
	manager_daemon_info(c->m, &info);
	reply = request_handle(&ctx, line, len);
	if (queue_reply(c, reply) < 0)
		log_warning("client pid %d: cannot queue a reply: out of memory", (int)c->pid);
}

static void reply_too_large(Client *c)
{
	_cleanup_json_ json_object *reply = json_error_new(NULL, ERR_TOO_LARGE,
		"request line longer than %d bytes", TBRDMAD_LINE_MAX);

	queue_reply(c, reply);
}

/* Takes complete lines out of the input buffer while the output queue is under OUT_HIGH; at
 * EOF, once every complete line is answered, a last line without its newline too. */
static void process_input(Client *c)
{
	size_t start = 0;

	for (;;) {
		char *nl;
		size_t n;

		if (!c->discard && pending(c) >= OUT_HIGH)
			break;		/* the rest waits until the client reads its replies */
		nl = memchr(c->in + start, '\n', c->in_len - start);
		if (!nl)
			break;
		n = nl - (c->in + start);
		if (c->discard)
			c->discard = false;
		else if (n > TBRDMAD_LINE_MAX)
			reply_too_large(c);
		else
			handle_line(c, c->in + start, n);
		start += n + 1;
	}
	memmove(c->in, c->in + start, c->in_len - start);
	c->in_len -= start;
	if (c->discard) {
		c->in_len = 0;
		return;
	}
	if (memchr(c->in, '\n', c->in_len))
		return;		/* throttled: the waiting lines keep their order */
	if (c->in_len > TBRDMAD_LINE_MAX) {
		/* no newline yet and already too long: answer now, skip to its end */
		reply_too_large(c);
		c->discard = true;
		c->in_len = 0;
	} else if (c->eof && c->in_len) {
		/* a last request without its newline still counts */
		handle_line(c, c->in, c->in_len);
		c->in_len = 0;
	}
}

static int do_read(Client *c)
{
	ssize_t n;

	if (c->in_cap - c->in_len < IN_CHUNK) {
		size_t cap = c->in_len + IN_CHUNK;
		char *p;

		if (cap < c->in_cap)
			cap = c->in_cap;
		p = realloc(c->in, cap);
		if (!p)
			return -ENOMEM;
		c->in = p;
		c->in_cap = cap;
	}
	n = recv(c->fd, c->in + c->in_len, IN_CHUNK, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0) {
		c->eof = true;
		return 0;
	}
	c->in_len += n;
	process_input(c);
	/* shrink a buffer a huge line left behind */
	if (c->in_cap > 4 * IN_CHUNK && c->in_len < IN_CHUNK) {
		char *p = realloc(c->in, IN_CHUNK * 2);

		if (p) {
			c->in = p;
			c->in_cap = IN_CHUNK * 2;
		}
	}
	return 0;
}

static int do_write(Client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		c->out_off += n;
	}
	c->out_off = c->out_len = 0;
	free(c->out);
	c->out = NULL;
	return 0;
}

/* Returns false when the client is finished and was freed. */
static bool update_events(Client *c)
{
	uint32_t ev = 0;

	if (!c->eof && pending(c) < OUT_HIGH)
		ev |= EPOLLIN;
	if (pending(c))
		ev |= EPOLLOUT;
	if (!ev) {
		client_free(c);
		return false;
	}
	sd_event_source_set_io_events(c->source, ev);
	return true;
}

static int client_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	Client *c = userdata;
	int r = 0;

	(void)s; (void)fd;
	if ((revents & EPOLLIN) && pending(c) < OUT_HIGH)
		r = do_read(c);
	if (r >= 0 && pending(c)) {
		r = do_write(c);
		/* room again: answer what waited (or the last line after EOF) */
		if (r >= 0 && c->in_len)
			process_input(c);
	} else if (r >= 0 && c->eof && c->in_len) {
		process_input(c);
	}
	if (r < 0) {
		if (r != -EPIPE && r != -ECONNRESET)
			log_debug_errno(r, "client pid %d: %m", (int)c->pid);
		client_free(c);
		return 0;
	}
	if ((revents & (EPOLLHUP | EPOLLERR)) && !(revents & EPOLLIN) &&
	    c->out_len == c->out_off) {
		client_free(c);
		return 0;
	}
	update_events(c);
	return 0;
}

static unsigned clients_of(Manager *m, uid_t uid)
{
	unsigned n = 0;

	for (Client *c = m->clients; c; c = c->next)
		n += c->uid == uid;
	return n;
}

/* one "busy" error line, then the connection is closed */
static void refuse(int fd, const char *why)
{
	_cleanup_json_ json_object *reply = json_error_new(NULL, "busy", "%s", why);
	_cleanup_free_ char *line = NULL;
	size_t len = 0;

	line = reply ? reply_to_line(reply, &len) : NULL;
	if (line)
		(void)!send(fd, line, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
}

static void accept_one(Manager *m, int fd)
{
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	socklen_t len = sizeof(cred);
	Client *c;
	int r;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		log_warning_errno(errno, "SO_PEERCRED: %m");
		cred.uid = (uid_t)-1;	/* unknown: treated as unprivileged */
	}
	if (m->n_clients >= m->config.max_clients ||
	    (cred.uid != 0 && m->n_clients >= m->config.max_clients - m->config.max_clients / 16)) {
		refuse(fd, "too many clients");
		log_warning("refusing a client of pid %d uid %u: %u clients already", (int)cred.pid,
			    (unsigned)cred.uid, m->n_clients);
		return;
	}
	if (cred.uid != 0 && clients_of(m, cred.uid) >= m->config.max_clients_per_user) {
		refuse(fd, "too many clients of this user");
		log_warning("refusing a client of pid %d uid %u: %u connections of that uid already",
			    (int)cred.pid, (unsigned)cred.uid, m->config.max_clients_per_user);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->m = m;
	c->fd = fd;
	c->uid = cred.uid;
	c->pid = cred.pid;
	r = sd_event_add_io(m->event, &c->source, fd, EPOLLIN, client_io, c);
	if (r < 0) {
		log_warning_errno(r, "client io source: %m");
		close(fd);
		free(c);
		return;
	}
	c->next = m->clients;
	if (m->clients)
		m->clients->prev = c;
	m->clients = c;
	m->n_clients++;
	log_debug("client pid %d uid %u connected (%u clients)", (int)c->pid, (unsigned)c->uid,
		  m->n_clients);
}

static int listen_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	Manager *m = userdata;

	(void)s; (void)revents;
	for (int i = 0; i < ACCEPTS_PER_WAKEUP; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				log_warning_errno(errno, "accept: %m");
			break;
		}
		accept_one(m, cfd);
	}
	return 0;
}

static int mkdir_parents(const char *path, mode_t mode)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

/* An existing path: refuse if a daemon answers there, else remove the stale socket. */
static int clear_stale(const char *path, const struct sockaddr_un *sa, socklen_t salen)
{
	struct stat st;
	_cleanup_close_ int fd = -1;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return log_error_errno(EEXIST, "%s exists and is not a socket", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, salen) == 0)
		return log_error_errno(EADDRINUSE, "%s: another tbrdmad is serving there", path);
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int state_socket_open(Manager *m)
{
	const char *path = m->config.socket_path;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t salen;
	_cleanup_close_ int fd = -1;
	int r, n;

	n = sd_listen_fds(1);
	if (n > 1)
		log_warning("%d sockets passed, using the first", n);
	if (n >= 1 && sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, NULL, 0) > 0) {
		fd = SD_LISTEN_FDS_START;
		m->socket_activated = true;
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
			return log_error_errno(errno, "O_NONBLOCK: %m");
		log_info("using the socket passed by systemd");
	} else {
		if (strlen(path) >= sizeof(sa.sun_path))
			return log_error_errno(ENAMETOOLONG, "socket path too long: %s", path);
		strcpy(sa.sun_path, path);
		salen = offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
		r = mkdir_parents(path, 0755);
		if (r < 0)
			return log_error_errno(r, "creating the directory of %s: %m", path);
		r = clear_stale(path, &sa, salen);
		if (r < 0)
			return r;
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return log_error_errno(errno, "socket: %m");
		if (bind(fd, (struct sockaddr *)&sa, salen) < 0)
			return log_error_errno(errno, "bind %s: %m", path);
		if (chmod(path, m->config.socket_mode) < 0)
			return log_error_errno(errno, "chmod %s: %m", path);
		if (listen(fd, SOMAXCONN) < 0)
			return log_error_errno(errno, "listen: %m");
	}
	r = sd_event_add_io(m->event, &m->listen_source, fd, EPOLLIN, listen_io, m);
	if (r < 0)
		return log_error_errno(r, "listen io source: %m");
	m->listen_fd = TAKE_FD(fd);
	if (!m->socket_activated)
		log_info("serving %s (mode %04o)", path, m->config.socket_mode);
	return 0;
}

void state_socket_close(Manager *m)
{
	while (m->clients)
		client_free(m->clients);
	m->listen_source = sd_event_source_disable_unref(m->listen_source);
	if (m->listen_fd >= 0) {
		close(m->listen_fd);
		m->listen_fd = -1;
		if (!m->socket_activated)
			unlink(m->config.socket_path);
	}
}
