#!/usr/bin/python3
# tests/bats/sock-quota.py: state socket quotas of tbrdmad (tests/bats/tbrdmad.bats, issue 13).
#   sock-quota.py hold SOCKET N     open N connections, ask "version" on each, print
#                                   "HELD <answered> BUSY <busy>", then keep them open until killed
#   sock-quota.py flood SOCKET PID LINES
#                                   pipeline LINES "status" requests on one connection without
#                                   reading; once the daemon stops reading it (no progress for
#                                   2 s), read daemon.output_peak from a second connection; then
#                                   read every reply. Prints "PEAK <bytes>", "RSS <kB>",
#                                   "REPLIES <n>"; exit 1 if a reply is missing or out of order.
import json, socket, sys, threading, time


def conn(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(path)
    return s


def ask(path, req):
    s = conn(path)
    s.sendall((json.dumps(req) + "\n").encode())
    line = s.makefile("rb").readline()
    s.close()
    return json.loads(line)


def hold(path, n):
    socks = [conn(path) for _ in range(n)]
    held = busy = 0
    for s in socks:
        try:
            s.sendall(b'{"method":"version"}\n')
        except OSError:
            pass		# refused: closed after its "busy" line
        r = json.loads(s.makefile("rb").readline())
        if r.get("ok"):
            held += 1
        elif r.get("error", {}).get("code") == "busy":
            busy += 1
        else:
            sys.exit("unexpected reply %r" % r)
    print("HELD %d BUSY %d" % (held, busy), flush=True)
    while True:
        time.sleep(3600)


def rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])


def flood(path, pid, lines):
    s = conn(path)
    data = b"".join(b'{"method":"status","id":%d}\n' % i for i in range(lines))
    sent = [0]
    stalled = threading.Event()

    def sender():
        s.settimeout(2)
        while sent[0] < len(data):
            try:
                sent[0] += s.send(data[sent[0]:sent[0] + 65536])
            except socket.timeout:
                stalled.set()		# the daemon stopped reading us: its queue is full
                s.settimeout(None)
        stalled.set()

    t = threading.Thread(target=sender)
    t.start()
    if not stalled.wait(300):
        sys.exit("the sender never stalled nor finished")
    st = ask(path, {"method": "status"})
    print("PEAK %d" % st["daemon"]["output_peak"], flush=True)
    print("RSS %d" % rss(pid), flush=True)
    f = s.makefile("rb")
    n = 0
    for i in range(lines):
        r = json.loads(f.readline())
        if r.get("id") != i or not r.get("ok"):
            sys.exit("reply %d: %r" % (i, r))
        n += 1
    t.join()
    print("REPLIES %d" % n, flush=True)


if sys.argv[1] == "hold":
    hold(sys.argv[2], int(sys.argv[3]))
else:
    flood(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
