// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sweep's pure logic (docs/sweep.md): message codec, fabric database, election, address
 * allocation, persisted GUID -> address map. Everything here takes untrusted input (datagrams
 * from any peer, a file anyone with root may have edited) and must reject, never crash.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fabric.h"
#include "json.h"
#include "util.h"

/* ---- codec (big-endian) ---------------------------------------------------------------- */

static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }
static void put64(uint8_t *p, uint64_t v) { put32(p, v >> 32); put32(p + 4, v); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) << 32 | get32(p + 4); }

static size_t rec_len(const HostRecord *r)
{
	return SWEEP_REC_LEN + 8u * r->n_neigh + 12u * r->n_assign;
}

int sweep_encode(const SweepMsg *m, uint8_t *buf, size_t len)
{
	size_t off = SWEEP_HDR_LEN;

	if (len < SWEEP_HDR_LEN || m->n_records > FABRIC_HOSTS_MAX)
		return -EMSGSIZE;
	memset(buf, 0, SWEEP_HDR_LEN);
	put32(buf, SWEEP_MAGIC);
	buf[4] = SWEEP_VERSION;
	buf[5] = m->type;
	put16(buf + 6, m->n_records);
	put64(buf + 8, m->sender);
	put64(buf + 16, m->master);
	put32(buf + 24, m->epoch);
	buf[28] = m->priority;
	for (unsigned i = 0; i < m->n_records; i++) {
		const HostRecord *r = &m->rec[i];
		uint8_t *p = buf + off;

		if (r->n_neigh > FABRIC_NEIGH_MAX || r->n_assign > FABRIC_ASSIGN_MAX ||
		    off + rec_len(r) > len)
			return -EMSGSIZE;
		memset(p, 0, SWEEP_REC_LEN);
		put64(p, r->guid);
		put64(p + 8, r->seq);
		put32(p + 16, r->age_ms);
		p[20] = r->priority;
		p[21] = r->flags;
		p[22] = r->n_neigh;
		p[23] = r->n_assign;
		put32(p + 24, r->addr);
		put64(p + 28, r->master);
		put32(p + 36, r->epoch);
		p += SWEEP_REC_LEN;
		for (unsigned j = 0; j < r->n_neigh; j++, p += 8)
			put64(p, r->neigh[j]);
		for (unsigned j = 0; j < r->n_assign; j++, p += 12) {
			put64(p, r->assign[j].guid);
			put32(p + 8, r->assign[j].addr);
		}
		off += rec_len(r);
	}
	return (int)off;
}

int sweep_fragment(const SweepMsg *m, size_t frame, unsigned *pos, SweepMsg *out,
		   unsigned *skipped)
{
	size_t used = SWEEP_HDR_LEN + rec_len(&m->rec[0]);

	if (!m->n_records || used > frame)
		return -EMSGSIZE;
	if (*pos == 0)
		*pos = 1;
	else if (*pos >= m->n_records)
		return 0;
	*out = *m;
	out->n_records = 1;
	for (; *pos < m->n_records; ++*pos) {
		size_t rl = rec_len(&m->rec[*pos]);

		if (used + rl <= frame) {
			out->rec[out->n_records++] = m->rec[*pos];
			used += rl;
		} else if (SWEEP_HDR_LEN + rec_len(&m->rec[0]) + rl > frame) {
			++*skipped;		/* would not fit any message */
		} else {
			break;			/* next message */
		}
	}
	return out->n_records;
}

static int bad(char *why, size_t n, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return err;
}

int sweep_decode(SweepMsg *m, const uint8_t *buf, size_t len, char *why, size_t whylen)
{
	size_t off = SWEEP_HDR_LEN;

	memset(m, 0, sizeof(*m));
	if (len < SWEEP_HDR_LEN)
		return bad(why, whylen, -EBADMSG, "short message (%zu bytes)", len);
	if (len > SWEEP_MSG_MAX)
		return bad(why, whylen, -EBADMSG, "message too long (%zu bytes)", len);
	if (get32(buf) != SWEEP_MAGIC)
		return bad(why, whylen, -EBADMSG, "bad magic");
	m->version = buf[4];
	if (m->version != SWEEP_VERSION)
		return bad(why, whylen, -EPROTONOSUPPORT, "version %u not supported", m->version);
	m->type = buf[5];
	if (m->type != SWEEP_TYPE_STATE)
		return bad(why, whylen, -EPROTONOSUPPORT, "unknown type %u", m->type);
	m->n_records = get16(buf + 6);
	m->sender = get64(buf + 8);
	m->master = get64(buf + 16);
	m->epoch = get32(buf + 24);
	m->priority = buf[28];
	if (!m->sender)
		return bad(why, whylen, -EBADMSG, "sender GUID 0");
	if (m->n_records < 1 || m->n_records > FABRIC_HOSTS_MAX)
		return bad(why, whylen, -EBADMSG, "record count %u out of 1..%d", m->n_records,
			   FABRIC_HOSTS_MAX);
	for (unsigned i = 0; i < m->n_records; i++) {
		HostRecord *r = &m->rec[i];
		const uint8_t *p = buf + off;

		if (len - off < SWEEP_REC_LEN)
			return bad(why, whylen, -EBADMSG, "record %u truncated", i);
		r->guid = get64(p);
		r->seq = get64(p + 8);
		r->age_ms = get32(p + 16);
		r->priority = p[20];
		r->flags = p[21];
		r->n_neigh = p[22];
		r->n_assign = p[23];
		r->addr = get32(p + 24);
		r->master = get64(p + 28);
		r->epoch = get32(p + 36);
		if (!r->guid)
			return bad(why, whylen, -EBADMSG, "record %u: GUID 0", i);
		if (r->n_neigh > FABRIC_NEIGH_MAX || r->n_assign > FABRIC_ASSIGN_MAX)
			return bad(why, whylen, -EBADMSG, "record %u: too many neighbours/assignments", i);
		if (len - off < rec_len(r))
			return bad(why, whylen, -EBADMSG, "record %u truncated", i);
		for (unsigned j = 0; j < i; j++)
			if (m->rec[j].guid == r->guid)
				return bad(why, whylen, -EBADMSG, "record %u: duplicate GUID", i);
		p += SWEEP_REC_LEN;
		for (unsigned j = 0; j < r->n_neigh; j++, p += 8) {
			r->neigh[j] = get64(p);
			if (!r->neigh[j] || r->neigh[j] == r->guid)
				return bad(why, whylen, -EBADMSG, "record %u: bad neighbour", i);
		}
		for (unsigned j = 0; j < r->n_assign; j++, p += 12) {
			r->assign[j].guid = get64(p);
			r->assign[j].addr = get32(p + 8);
			if (!r->assign[j].guid)
				return bad(why, whylen, -EBADMSG, "record %u: assignment to GUID 0", i);
		}
		off += rec_len(r);
	}
	if (off != len)
		return bad(why, whylen, -EBADMSG, "%zu trailing bytes", len - off);
	if (m->rec[0].guid != m->sender)
		return bad(why, whylen, -EBADMSG, "first record is not the sender's");
	return 0;
}

/* ---- election -------------------------------------------------------------------------- */

bool election_better(uint8_t pa, uint64_t ga, uint8_t pb, uint64_t gb)
{
	if (pa != pb)
		return pa > pb;
	return ga < gb;
}

/* ---- pool and map ---------------------------------------------------------------------- */

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
	put64(out + 8, guid ^ 0x0200000000000000ULL);
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
		return bad(why, whylen, -EBADMSG, "NUL byte");
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
			return bad(why, whylen, -EBADMSG, "line %u: no newline at the end", line);
		if (n >= sizeof(buf))
			return bad(why, whylen, -EBADMSG, "line %u: too long", line);
		memcpy(buf, text + pos, n);
		buf[n] = '\0';
		pos += n + 1;
		if (line == 1) {
			v1 = !strcmp(buf, MAP_HEADER_V1);
			if (!v1 && strcmp(buf, MAP_HEADER))
				return bad(why, whylen, -EBADMSG, "line 1: not \"%s\"", MAP_HEADER);
			continue;
		}
		if (!buf[0] || buf[0] == '#')
			continue;
		fields = v1 ? sscanf(buf, "%63s %63s %1s", g, a, extra) + 1 :
			      sscanf(buf, "%63s %63s %63s %1s", g, a, seen, extra);
		if (fields != 3)
			return bad(why, whylen, -EBADMSG, "line %u: want \"GUID ADDRESS%s\"", line,
				   v1 ? "" : " SEEN");
		errno = 0;
		when = strtoull(seen, &end, 10);
		if (errno || *end || !isdigit((unsigned char)seen[0]) || when > UINT32_MAX * 16ULL)
			return bad(why, whylen, -EBADMSG, "line %u: bad SEEN", line);
		if (strlen(g) != 16 || strspn(g, "0123456789abcdef") != 16)
			return bad(why, whylen, -EBADMSG, "line %u: bad GUID", line);
		guid = strtoull(g, &end, 16);
		if (!guid)
			return bad(why, whylen, -EBADMSG, "line %u: GUID 0", line);
		if (inet_pton(AF_INET, a, &ia) != 1 || !ia.s_addr)
			return bad(why, whylen, -EBADMSG, "line %u: bad IPv4 address", line);
		if (addrmap_get(m, guid))
			return bad(why, whylen, -EBADMSG, "line %u: duplicate GUID", line);
		if (addrmap_owner(m, ntohl(ia.s_addr)))
			return bad(why, whylen, -EBADMSG, "line %u: duplicate address", line);
		if (addrmap_set(m, guid, ntohl(ia.s_addr)) < 0)
			return bad(why, whylen, -EBADMSG, "line %u: too many entries", line);
		m->e[m->n - 1].seen = when;
	}
	if (line == 0)
		return bad(why, whylen, -EBADMSG, "empty file");
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
		return bad(why, whylen, negative_errno(), "%s: %s", path, strerror(errno));
	}
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	while ((k = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)k;
		if (n == cap)
			return bad(why, whylen, -EBADMSG, "%s: larger than %zu bytes", path, cap - 1);
	}
	if (k < 0)
		return bad(why, whylen, negative_errno(), "%s: %s", path, strerror(errno));
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

/* ---- database ---------------------------------------------------------------------------- */

HostRecord *fabric_find(Fabric *f, uint64_t guid)
{
	for (size_t i = 0; i < f->n_hosts; i++)
		if (f->hosts[i].guid == guid)
			return &f->hosts[i];
	return NULL;
}

int fabric_validate(const Fabric *f, const HostRecord *r, uint64_t real_now, char *why,
		    size_t whylen)
{
	if (r->seq > real_now + SEQ_AHEAD_USEC)
		return bad(why, whylen, -EBADMSG, "generation %" PRIu64 " is %" PRIu64
			   " s in the future", r->seq, (r->seq - real_now) / 1000000);
	if (r->addr && !pool_contains(&f->pool, r->addr))
		return bad(why, whylen, -EBADMSG, "address outside the pool");
	if (r->n_assign && !(r->flags & REC_FLAG_MASTER))
		return bad(why, whylen, -EBADMSG, "assignments from a host that is not master");
	for (unsigned i = 0; i < r->n_assign; i++) {
		if (!pool_contains(&f->pool, r->assign[i].addr))
			return bad(why, whylen, -EBADMSG, "assignment %u outside the pool", i);
		for (unsigned j = 0; j < i; j++)
			if (r->assign[j].addr == r->assign[i].addr ||
			    r->assign[j].guid == r->assign[i].guid)
				return bad(why, whylen, -EBADMSG, "assignment %u: duplicate", i);
	}
	return 0;
}

void fabric_reachable(const Fabric *f, bool out[FABRIC_HOSTS_MAX])
{
	size_t queue[FABRIC_HOSTS_MAX], head = 0, tail = 0;

	memset(out, 0, FABRIC_HOSTS_MAX * sizeof(bool));
	for (size_t i = 0; i < f->n_hosts; i++)
		if (f->hosts[i].guid == f->self) {
			out[i] = true;
			queue[tail++] = i;
		}
	while (head < tail) {
		const HostRecord *a = &f->hosts[queue[head++]];

		for (unsigned k = 0; k < a->n_neigh; k++)
			for (size_t j = 0; j < f->n_hosts; j++) {
				const HostRecord *b = &f->hosts[j];
				bool back = false;

				if (out[j] || b->guid != a->neigh[k])
					continue;
				for (unsigned l = 0; l < b->n_neigh; l++)
					back |= b->neigh[l] == a->guid;
				if (back) {
					out[j] = true;
					queue[tail++] = j;
				}
			}
	}
}

/* a full table: drops the oldest record not reachable from us; false if every one is */
static bool evict_unreachable(Fabric *f)
{
	bool reach[FABRIC_HOSTS_MAX];
	size_t victim = SIZE_MAX;

	fabric_reachable(f, reach);
	for (size_t i = 0; i < f->n_hosts; i++)
		if (!reach[i] && (victim == SIZE_MAX ||
				  f->hosts[i].origin_usec < f->hosts[victim].origin_usec))
			victim = i;
	if (victim == SIZE_MAX)
		return false;
	f->hosts[victim] = f->hosts[--f->n_hosts];
	f->evicted++;
	return true;
}

int fabric_merge(Fabric *f, const HostRecord *r, uint64_t now, uint64_t real_now)
{
	uint64_t age = (uint64_t)r->age_ms * 1000, origin;
	HostRecord *cur;

	if (fabric_validate(f, r, real_now, f->why, sizeof(f->why)) < 0) {
		f->rejected++;
		return -EBADMSG;
	}
	if (r->guid == f->self) {
		/* our own record comes from us; one newer than ours is someone else's (or ours
		 * from before a clock step): make our next generation newer, as OSPF does */
		if (r->seq >= f->seq_floor)
			f->seq_floor = r->seq + 1;
		return 0;
	}
	if (age >= f->dead_usec)
		return 0;		/* a stale copy is dropped */
	origin = now > age ? now - age : 0;
	cur = fabric_find(f, r->guid);
	if (cur) {
		if (r->seq < cur->seq || (r->seq == cur->seq && origin <= cur->origin_usec))
			return 0;
		if (r->seq == cur->seq) {	/* same generation by a shorter path: just fresher */
			cur->origin_usec = origin;
			return 0;
		}
	} else {
		if (f->n_hosts >= FABRIC_HOSTS_MAX && !evict_unreachable(f))
			return -ENOSPC;
		cur = &f->hosts[f->n_hosts++];
	}
	*cur = *r;
	cur->origin_usec = origin;
	return 1;
}

int fabric_expire(Fabric *f, uint64_t now)
{
	int gone = 0;

	for (size_t i = 0; i < f->n_hosts;) {
		HostRecord *h = &f->hosts[i];

		if (h->guid != f->self && now - h->origin_usec >= f->dead_usec) {
			f->hosts[i] = f->hosts[--f->n_hosts];
			gone++;
		} else {
			i++;
		}
	}
	return gone;
}

void fabric_pause(Fabric *f, uint64_t usec, uint64_t now)
{
	for (size_t i = 0; i < f->n_hosts; i++) {
		HostRecord *h = &f->hosts[i];

		if (h->guid != f->self)
			h->origin_usec = h->origin_usec + usec < now ? h->origin_usec + usec : now;
	}
}

uint64_t fabric_elect(const Fabric *f)
{
	const HostRecord *best = NULL;
	bool reach[FABRIC_HOSTS_MAX];

	fabric_reachable(f, reach);
	for (size_t i = 0; i < f->n_hosts; i++)
		if (reach[i] && (!best || election_better(f->hosts[i].priority, f->hosts[i].guid,
							  best->priority, best->guid)))
			best = &f->hosts[i];
	return best ? best->guid : 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

uint64_t fabric_digest(const Fabric *f)
{
	uint64_t h = 0, hosts = 0;

	/* order-independent: sum of per-host hashes */
	for (size_t i = 0; i < f->n_hosts; i++) {
		const HostRecord *r = &f->hosts[i];
		uint64_t x = mix(mix(0, r->guid), r->priority), ns = 0;

		for (unsigned j = 0; j < r->n_neigh; j++)
			ns += mix(1, r->neigh[j]);
		x = mix(x, ns);
		for (unsigned j = 0; j < r->n_assign; j++)
			x = mix(x, mix(r->assign[j].guid, r->assign[j].addr));
		hosts += x;
	}
	h = mix(hosts, fabric_elect(f));
	return h;
}

void ipv4_str(uint32_t a, char buf[16])
{
	snprintf(buf, 16, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}
