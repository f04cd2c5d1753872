#!/usr/bin/python3
# tests/bats/sock.py: raw clients of tbrdmad's state socket for the bats tests.
#   sock.py PATH send          stdin's bytes as they are, half-close, print every reply line
#   sock.py PATH concurrent N  N connections at once, one status each; prints "ok N" if all answered
#   sock.py PATH flood N       N requests on one connection without reading, then close abruptly
#   sock.py PATH abrupt N      N connections closed mid-request / right after sending
#   sock.py PATH stale         make PATH a socket nobody listens on (bound, then closed)
import json, os, socket, sys, time

path, mode = sys.argv[1], sys.argv[2]


def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(20)
    s.connect(path)
    return s


def read_all(s):
    buf = b""
    while True:
        d = s.recv(65536)
        if not d:
            return buf
        buf += d


if mode == "send":
    s = conn()
    s.sendall(sys.stdin.buffer.read())
    s.shutdown(socket.SHUT_WR)
    sys.stdout.write(read_all(s).decode())
elif mode == "concurrent":
    n = int(sys.argv[3])
    socks = [conn() for _ in range(n)]
    for i, s in enumerate(socks):
        s.sendall(json.dumps({"method": "status", "id": i}).encode() + b"\n")
    good = 0
    for i, s in enumerate(socks):
        f = s.makefile("rb")
        r = json.loads(f.readline())
        good += r.get("ok") is True and r.get("id") == i
        s.close()
    print("ok %d" % good if good == n else "only %d of %d" % (good, n))
elif mode == "flood":
    n = int(sys.argv[3])
    s = conn()
    s.setblocking(False)
    sent = 0
    line = b'{"method":"status"}\n' * 100
    t0 = time.time()
    while sent < n and time.time() - t0 < 10:
        try:
            s.send(line)
            sent += 100
        except BlockingIOError:
            time.sleep(0.01)
    # abrupt close with unread replies queued: RST
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.close()
    print("sent %d" % sent)
elif mode == "abrupt":
    for i in range(int(sys.argv[3])):
        s = conn()
        s.sendall([b'{"meth', b'{"method":"status"}\n', b"\xff" * 70000][i % 3])
        s.close()
    print("done")
elif mode == "stale":
    if os.path.exists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()
else:
    sys.exit("unknown mode " + mode)
