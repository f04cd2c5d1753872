#!/usr/bin/python3
# tests/bats/canned.py PATH REPLY: a stand-in for tbrdmad's state socket that answers every
# request line on PATH with the JSON object in file REPLY, its "method" set to the request's
# (tbctl's tables over data the daemon without a kernel never has). Runs until killed.
import json, os, socket, sys

path, reply_file = sys.argv[1], sys.argv[2]
with open(reply_file) as f:
    reply = json.load(f)
if os.path.exists(path):
    os.unlink(path)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(4)
while True:
    c, _ = srv.accept()
    buf = b""
    while b"\n" not in buf:
        d = c.recv(4096)
        if not d:
            break
        buf += d
    try:
        req = json.loads(buf.split(b"\n")[0])
        out = dict(reply, method=req.get("method"))
        c.sendall((json.dumps(out) + "\n").encode())
    except ValueError:
        pass
    c.close()
