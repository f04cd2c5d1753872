// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Addresses of the sweep (docs/sweep.md "Assignment", "guid2addr"): Pool= and Pool6=, the
 * persisted GUID -> address map (a file anyone with root may have edited: rejected whole, never
 * half-read; tests/fuzz/fuzz_addrmap.c) and the master's allocator.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "addrmap.h"
#include "json.h"
#include "util.h"

int pool_parse(Pool *p, const char *s)
{
	char buf[32], *slash, *end;
	struct in_addr a;
	unsigned long len;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (!slash)
		return -EINVAL;
	*slash = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -EINVAL;
	errno = 0;
	len = strtoul(slash + 1, &end, 10);
	if (errno || end == slash + 1 || *end || len < 8 || len > 30)
		return -EINVAL;
	p->prefix = (unsigned)len;
	p->net = ntohl(a.s_addr) & (0xffffffffu << (32 - len));
	return 0;
}

int pool6_parse(Pool6 *p, const char *s)
{
	char buf[64], *slash;
	struct in6_addr a;

	memset(p, 0, sizeof(*p));
	if (!*s || !strcmp(s, "no"))
		return 0;
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (!slash || strcmp(slash + 1, "64"))
		return -EINVAL;
	*slash = '\0';
	if (inet_pton(AF_INET6, buf, &a) != 1)
		return -EINVAL;
	/* not multicast, link-local, loopback, unspecified or IPv4-mapped */
	if (a.s6_addr[0] == 0xff || (a.s6_addr[0] == 0xfe && (a.s6_addr[1] & 0xc0) == 0x80) ||
	    IN6_IS_ADDR_LOOPBACK(&a) || IN6_IS_ADDR_UNSPECIFIED(&a) || IN6_IS_ADDR_V4MAPPED(&a))
		return -EINVAL;
	memcpy(p->prefix, a.s6_addr, 8);
	p->enabled = true;
	return 0;
}

void addr6_from_guid(const Pool6 *p, uint64_t guid, uint8_t out[16])
{
	memcpy(out, p->prefix, 8);
	be_put64(out + 8, guid ^ 0x0200000000000000ULL);	/* modified EUI-64 */
}

void ipv6_str(const uint8_t a[16], char buf[46])
{
	if (!inet_ntop(AF_INET6, a, buf, 46))
		strcpy(buf, "?");
}

bool pool_contains(const Pool *p, uint32_t a)
{
	uint32_t mask = 0xffffffffu << (32 - p->prefix);

	return (a & mask) == p->net && (a & ~mask) != 0 && (a & ~mask) != ~mask;
}

uint32_t addrmap_get(const AddrMap *m, uint64_t guid)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].guid == guid)
			return m->e[i].addr;
	return 0;
}

uint64_t addrmap_owner(const AddrMap *m, uint32_t addr)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].addr == addr)
			return m->e[i].guid;
	return 0;
}

int addrmap_set(AddrMap *m, uint64_t guid, uint32_t addr)
{
	/* an address belongs to one GUID: drop any other holder */
	for (size_t i = 0; i < m->n;)
		if (m->e[i].addr == addr && m->e[i].guid != guid)
			m->e[i] = m->e[--m->n];
		else
			i++;
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].guid == guid) {
			m->e[i].addr = addr;
			return 0;
		}
	if (m->n >= ELEMENTSOF(m->e))
		return -ENOSPC;
	m->e[m->n].guid = guid;
	m->e[m->n].addr = addr;
	m->e[m->n].seen = 0;
	m->n++;
	return 0;
}

int addrmap_touch(AddrMap *m, uint64_t guid, uint64_t now)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].guid == guid) {
			if (m->e[i].seen + MAP_TOUCH_SEC > now && m->e[i].seen <= now)
				return 0;
			m->e[i].seen = now;
			return 1;
		}
	return 0;
}

int addrmap_expire(AddrMap *m, uint64_t now, uint64_t keep)
{
	int gone = 0;

	for (size_t i = 0; i < m->n;) {
		if (!m->e[i].seen || m->e[i].seen > now)
			m->e[i].seen = now;
		if (now - m->e[i].seen >= keep) {
			m->e[i] = m->e[--m->n];
			gone++;
		} else {
			i++;
		}
	}
	return gone;
}

/* v1: "GUID ADDRESS" lines (read only); v2: "GUID ADDRESS SEEN" */
#define MAP_HEADER_V1 "# tbrdmad guid2addr v1"
#define MAP_HEADER "# tbrdmad guid2addr v2"

int addrmap_parse(AddrMap *m, const char *text, size_t len, char *why, size_t whylen)
{
	size_t pos = 0;
	unsigned line = 0;
	bool v1 = false;

	m->n = 0;
	if (memchr(text, '\0', len))
		return failf(why, whylen, -EBADMSG, "NUL byte");
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		char buf[128], g[64], a[64], seen[64] = "0", extra[2];
		struct in_addr ia;
		uint64_t guid, when;
		char *end;
		int fields;

		line++;
		if (!nl)
			return failf(why, whylen, -EBADMSG, "line %u: no newline at the end", line);
		if (n >= sizeof(buf))
			return failf(why, whylen, -EBADMSG, "line %u: too long", line);
		memcpy(buf, text + pos, n);
		buf[n] = '\0';
		pos += n + 1;
		if (line == 1) {
			v1 = !strcmp(buf, MAP_HEADER_V1);
			if (!v1 && strcmp(buf, MAP_HEADER))
				return failf(why, whylen, -EBADMSG, "line 1: not \"%s\"", MAP_HEADER);
			continue;
		}
		if (!buf[0] || buf[0] == '#')
			continue;
		fields = v1 ? sscanf(buf, "%63s %63s %1s", g, a, extra) + 1 :
			      sscanf(buf, "%63s %63s %63s %1s", g, a, seen, extra);
		if (fields != 3)
			return failf(why, whylen, -EBADMSG, "line %u: want \"GUID ADDRESS%s\"", line,
				   v1 ? "" : " SEEN");
		errno = 0;
		when = strtoull(seen, &end, 10);
		if (errno || *end || !isdigit((unsigned char)seen[0]) || when > UINT32_MAX * 16ULL)
			return failf(why, whylen, -EBADMSG, "line %u: bad SEEN", line);
		if (strlen(g) != 16 || strspn(g, "0123456789abcdef") != 16)
			return failf(why, whylen, -EBADMSG, "line %u: bad GUID", line);
		guid = strtoull(g, &end, 16);
		if (!guid)
			return failf(why, whylen, -EBADMSG, "line %u: GUID 0", line);
		if (inet_pton(AF_INET, a, &ia) != 1 || !ia.s_addr)
			return failf(why, whylen, -EBADMSG, "line %u: bad IPv4 address", line);
		if (addrmap_get(m, guid))
			return failf(why, whylen, -EBADMSG, "line %u: duplicate GUID", line);
		if (addrmap_owner(m, ntohl(ia.s_addr)))
			return failf(why, whylen, -EBADMSG, "line %u: duplicate address", line);
		if (addrmap_set(m, guid, ntohl(ia.s_addr)) < 0)
			return failf(why, whylen, -EBADMSG, "line %u: too many entries", line);
		m->e[m->n - 1].seen = when;
	}
	if (line == 0)
		return failf(why, whylen, -EBADMSG, "empty file");
	return 0;
}

char *addrmap_format(const AddrMap *m)
{
	size_t cap = sizeof(MAP_HEADER) + 1 + m->n * 64, off;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	off = (size_t)snprintf(s, cap, "%s\n", MAP_HEADER);
	for (size_t i = 0; i < m->n; i++) {
		char g[17], a[16];

		guid_to_string(m->e[i].guid, g);
		ipv4_str(m->e[i].addr, a);
		off += (size_t)snprintf(s + off, cap - off, "%s %s %" PRIu64 "\n", g, a,
					m->e[i].seen);
	}
	return s;
}

int addrmap_load(AddrMap *m, const char *path, char *why, size_t whylen)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	size_t cap = 65536, n = 0;
	ssize_t k;

	m->n = 0;
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return failf(why, whylen, negative_errno(), "%s: %s", path, strerror(errno));
	}
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	while ((k = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)k;
		if (n == cap)
			return failf(why, whylen, -EBADMSG, "%s: larger than %zu bytes", path, cap - 1);
	}
	if (k < 0)
		return failf(why, whylen, negative_errno(), "%s: %s", path, strerror(errno));
	return addrmap_parse(m, buf, n, why, whylen);
}

/* The temporary file is created with O_EXCL|O_NOFOLLOW, so a symlink or file planted at its path
 * is never followed or truncated: it is removed (unlink removes a link, not its target) and the
 * creation retried once. After the rename the directory is fsync'd, so the rename is durable. */
static int create_tmp(const char *tmp)
{
	int fd;

	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST) {
		if (unlink(tmp) < 0)
			return negative_errno();
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	}
	return fd < 0 ? negative_errno() : fd;
}

static int fsync_parent(const char *path)
{
	_cleanup_free_ char *dir = strdup(path);
	_cleanup_close_ int fd = -1;
	char *slash;

	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0)
		return negative_errno();
	return 0;
}

int addrmap_save(const AddrMap *m, const char *path)
{
	_cleanup_free_ char *text = addrmap_format(m), *tmp = NULL;
	_cleanup_close_ int fd = -1;
	size_t len, off = 0;
	int r;

	if (!text || asprintf(&tmp, "%s.tmp", path) < 0)
		return -ENOMEM;
	fd = create_tmp(tmp);
	if (fd < 0)
		return fd;
	len = strlen(text);
	while (off < len) {
		ssize_t k = write(fd, text + off, len - off);

		if (k < 0)
			goto fail;
		off += (size_t)k;
	}
	if (fsync(fd) < 0 || rename(tmp, path) < 0)
		goto fail;
	return fsync_parent(path);
fail:
	r = negative_errno();
	unlink(tmp);
	return r;
}

int allocate(AddrMap *map, const Pool *pool, const uint64_t *guids, const uint32_t *claims,
	     size_t n, uint32_t *out)
{
	uint32_t size = 1u << (32 - pool->prefix);
	int changed = 0;

	/* 1: mapped addresses still in the pool */
	for (size_t i = 0; i < n; i++) {
		uint32_t a = addrmap_get(map, guids[i]);

		out[i] = pool_contains(pool, a) ? a : 0;
	}
	/* 2: claims (an address the host already has) that nobody else holds or is mapped to */
	for (size_t i = 0; i < n; i++) {
		uint64_t owner;
		bool taken = false;

		if (out[i] || !claims || !pool_contains(pool, claims[i]))
			continue;
		owner = addrmap_owner(map, claims[i]);
		for (size_t j = 0; j < n; j++)
			taken |= j != i && out[j] == claims[i];
		if (taken || (owner && owner != guids[i]))
			continue;
		out[i] = claims[i];
	}
	/* 3: the lowest free address */
	for (size_t i = 0; i < n; i++) {
		if (out[i])
			continue;
		for (uint32_t h = 1; h + 1 < size && !out[i]; h++) {
			uint32_t a = pool->net + h;
			bool taken = addrmap_owner(map, a) != 0;

			for (size_t j = 0; j < n && !taken; j++)
				taken = out[j] == a;
			if (!taken)
				out[i] = a;
		}
	}
	/* 4: pool exhausted: the least recently seen mapped host that is not live gives way */
	for (size_t i = 0; i < n; i++) {
		size_t victim = SIZE_MAX;

		if (out[i])
			continue;
		for (size_t k = 0; k < map->n; k++) {
			bool live = false;

			for (size_t j = 0; j < n && !live; j++)
				live = guids[j] == map->e[k].guid || out[j] == map->e[k].addr;
			if (!live && pool_contains(pool, map->e[k].addr) &&
			    (victim == SIZE_MAX || map->e[k].seen < map->e[victim].seen))
				victim = k;
		}
		if (victim != SIZE_MAX)
			out[i] = map->e[victim].addr;
	}
	for (size_t i = 0; i < n; i++)
		if (out[i] && addrmap_get(map, guids[i]) != out[i]) {
			if (addrmap_set(map, guids[i], out[i]) < 0)
				continue;
			changed++;
		}
	return changed;
}


void ipv4_str(uint32_t a, char buf[16])
{
	snprintf(buf, 16, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}
