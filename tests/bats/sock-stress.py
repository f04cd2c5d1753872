#!/usr/bin/python3
# tests/bats/sock-stress.py: socket fuzz/stress client for tbrdmad (tests/bats/tbrdmad.bats).
#   sock-stress.py SOCKET PID N SEED
# Sends N request lines (random bytes, invalid UTF-8, NUL bytes, non-objects, hostile types,
# deep nesting, lines over the 64 KiB limit up to 2 MiB, unknown/changing methods, valid requests)
# over many connections, 8 at a time plus 40 idle ones held open. Most connections read every
# reply and check it against its request (one reply per non-empty line, in order, a JSON object
# with schema 1; valid requests answered ok with their id echoed, bad ones with the right error
# code); the others disconnect abruptly (RST with replies unread, mid-line, mid-huge-line).
# Prints "RSS_WARM <kB>" after a warm-up, "RSS_END <kB>" at the end, then "sent N lines in T s"
# and "PASS"; anything wrong is printed as "BAD ..." and makes the exit status 1.
import json, os, random, socket, sys, threading, time
from concurrent.futures import ThreadPoolExecutor

path, pid, total, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
LINE_MAX = 65536
ERR_ANY = {"parse-error", "too-large", "invalid-request", "unknown-method", "permission-denied",
           "unavailable", "not-found", "kernel-error"}
bad = []
lock = threading.Lock()
sent = [0]


def fail(msg):
    with lock:
        if len(bad) < 20:
            bad.append(msg)


def rss():
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit("no VmRSS for pid %d" % pid)


def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(path)
    return s


def rand_bytes(r, n):
    return bytes(r.randrange(256) for _ in range(n)).replace(b"\n", b" ")


def rand_json(r, depth=0):
    k = r.randrange(9 if depth < 3 else 5)
    if k == 0:
        return None
    if k == 1:
        return r.choice([True, False])
    if k == 2:
        return r.choice([0, -1, 1, 2**31, 2**63, -2**63, 2**64 + 5, 10**30, 1.5, -0.0, 1e300])
    if k == 3:
        return "".join(chr(r.choice([r.randrange(32, 127), r.randrange(0x80, 0xd7ff),
                                     r.randrange(0x10000, 0x10ffff)])) for _ in range(r.randrange(20)))
    if k == 4:
        return r.choice(["version", "status", "rail-disable", "sweep", "", "\u0000", "x" * 300])
    if k in (5, 6):
        return {r.choice(["method", "id", "device", "link", "rail", "k%d" % r.randrange(9)]):
                rand_json(r, depth + 1) for _ in range(r.randrange(5))}
    return [rand_json(r, depth + 1) for _ in range(r.randrange(5))]


VALID = ["version", "status", "devices", "links", "rails"]


def make_request(r, i):
    """(line without newline, check) where check(reply) -> None or a complaint"""
    k = r.randrange(20)
    if k < 5:  # valid, must succeed with its id
        m = r.choice(VALID)
        rid = r.choice([i, "id-%d" % i, [i, None], {"n": i}])

        def check(rep, m=m, rid=rid):
            if rep.get("ok") is not True or rep.get("method") != m or rep.get("id") != rid:
                return "valid %s id %r answered %r" % (m, rid, rep)
            if m == "version" and rep.get("daemon") != "tbrdmad":
                return "version answered %r" % rep
            if m == "status" and rep["kernel"]["present"] is not False:
                return "status answered %r" % rep
        return json.dumps({"method": m, "id": rid}).encode(), check
    if k < 7:  # random bytes, never valid JSON of an object with a method
        b = rand_bytes(r, r.randrange(1, 400))
        if not b.rstrip(b"\r"):
            b = b"\x01"
        return b, err_check({"parse-error", "invalid-request", "unknown-method"})
    if k < 10:  # random JSON, mostly wrong
        return json.dumps(rand_json(r)).encode(), err_check(ERR_ANY, may_succeed=True)
    if k < 11:  # invalid UTF-8 / NUL inside a string
        bs = r.choice([b"\xff\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"\x00", b"\xf4\x90\x80\x80"])
        return b'{"method":"ver' + bs + b'sion","id":1}', err_check({"parse-error"})
    if k < 12:  # deep nesting
        n = r.randrange(17, 20000)
        return b"[" * n + b"]" * n, err_check({"parse-error"})
    if k < 13:  # over the limit: too-large, the rest of the line skipped
        n = r.choice([LINE_MAX + 1, LINE_MAX + 100, 300000, 2 << 20])
        return b'{"method":"status","pad":"' + b"a" * n + b'"}', err_check({"too-large"})
    if k < 14:  # just under the limit: parsed
        pad = LINE_MAX - 60
        return json.dumps({"method": "version", "id": i, "pad": "b" * pad}).encode(), \
            lambda rep, i=i: None if rep.get("ok") is True and rep.get("id") == i else \
            "near-limit answered %r" % rep
    if k < 15:  # unknown method
        return json.dumps({"method": "no-such-%d" % i, "id": i}).encode(), \
            err_check({"unknown-method"})
    if k < 17:  # changing methods with hostile parameters (root: unavailable or invalid)
        m = r.choice(["rail-disable", "rail-enable", "sweep"])
        req = {"method": m}
        for key in ("device", "link", "rail"):
            if r.random() < 0.7:
                req[key] = rand_json(r, 2) if r.random() < 0.5 else \
                    r.choice(["tbrdma0", 1, 0, -1, 15, 16, 2**40, "x" * 40])
        return json.dumps(req).encode(), \
            err_check({"invalid-request", "unavailable", "permission-denied", "not-found"})
    if k < 18:  # trailing data, duplicate keys, bad numbers
        return r.choice([b'{"method":"status"} x', b'{"method":"status"}{}',
                         b'{"method":1e99999}', b'{"method":"status",}', b"{'method':'status'}",
                         b'{"method":"status","method":7}', b"nan", b"-", b'"\\ud800"']), \
            err_check({"parse-error", "invalid-request"}, may_succeed=True)
    if k < 19:  # CRLF and a whitespace-padded valid request
        return b'  {"method":"version","id":%d}  \r' % i, \
            lambda rep, i=i: None if rep.get("ok") is True and rep.get("id") == i else \
            "crlf answered %r" % rep
    return json.dumps({"method": r.choice(VALID + ["fabric"]), "id": i,
                       "device": rand_json(r, 2)}).encode(), err_check(ERR_ANY, may_succeed=True)


def err_check(codes, may_succeed=False):
    def check(rep):
        if rep.get("ok") is True:
            return None if may_succeed else "expected an error in %s, got %r" % (codes, rep)
        code = rep.get("error", {}).get("code")
        if code not in codes:
            return "expected %s, got %r" % (codes, rep)
    return check


def valid_reply(line):
    try:
        rep = json.loads(line)
    except ValueError:
        return None, "reply not JSON: %r" % line[:200]
    if not isinstance(rep, dict) or rep.get("schema") != 1 or not isinstance(rep.get("ok"), bool):
        return None, "reply not a schema 1 object: %r" % line[:200]
    if rep["ok"] is False and rep.get("error", {}).get("code") not in ERR_ANY:
        return None, "unknown error code: %r" % line[:200]
    return rep, None


def session(job):
    seed_i, n, mode = job
    r = random.Random(seed_i)
    reqs = [make_request(r, seed_i * 1000 + j) for j in range(n)]
    data = b"".join(line + b"\n" for line, _ in reqs)
    with lock:
        sent[0] += n
    try:
        s = conn()
    except OSError as e:
        fail("connect: %s" % e)
        return
    try:
        if mode == "read":
            # send in random pieces (lines split anywhere), then half-close and read everything
            pos = 0
            while pos < len(data):
                step = r.choice([1, 7, 100, 4096, 65536, 1 << 20])
                s.sendall(data[pos:pos + step])
                pos += step
            s.shutdown(socket.SHUT_WR)
            f = s.makefile("rb")
            replies = f.read().split(b"\n")
            if replies[-1] != b"":
                fail("last reply without newline: %r" % replies[-1][:100])
            replies = replies[:-1]
            if len(replies) != n:
                fail("%d requests, %d replies" % (n, len(replies)))
                return
            for (line, check), rl in zip(reqs, replies):
                rep, why = valid_reply(rl)
                why = why or check(rep)
                if why:
                    fail("request %r: %s" % (line[:120], why))
        elif mode == "rst":  # everything sent, nothing read, reset
            s.sendall(data)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
        elif mode == "midline":  # cut inside some line
            s.sendall(data[:r.randrange(1, len(data))])
        elif mode == "slow":  # a few bytes, a pause, then gone
            s.sendall(data[:r.randrange(1, 50)])
            time.sleep(0.01)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
    except (BrokenPipeError, ConnectionResetError):
        if mode == "read":
            fail("connection reset in read mode")
    finally:
        s.close()


def run(count, seed0):
    r = random.Random(seed0)
    jobs, n = [], 0
    while n < count:
        k = min(r.randrange(1, 60), count - n)
        jobs.append((seed0 * 100000 + len(jobs), k, r.choice(["read"] * 6 + ["rst", "midline", "slow"])))
        n += k
    with ThreadPoolExecutor(8) as ex:
        list(ex.map(session, jobs))


t0 = time.time()
idle = [conn() for _ in range(40)]       # clients that connect and say nothing
for s in idle[:20]:
    s.sendall(b'{"method":"sta')         # ... or half a line
warm = max(500, total // 10)
run(warm, seed)
time.sleep(0.3)
rss_warm = rss()
print("RSS_WARM %d" % rss_warm)
run(total - warm, seed + 1)
for s in idle:
    s.close()
# a status on a fresh connection after everything: every other client is gone
time.sleep(0.3)
s = conn()
s.sendall(b'{"method":"status","id":"final"}\n')
rep, why = valid_reply(s.makefile("rb").readline())
s.close()
if why or rep.get("ok") is not True or rep.get("id") != "final":
    fail("final status: %s %r" % (why, rep))
elif rep["daemon"]["clients"] != 1:
    fail("final status: %d clients still connected" % rep["daemon"]["clients"])
rss_end = rss()
print("RSS_END %d" % rss_end)
print("sent %d lines in %.1f s" % (sent[0], time.time() - t0))
for b in bad:
    print("BAD " + b)
print("FAIL" if bad else "PASS")
sys.exit(1 if bad else 0)
