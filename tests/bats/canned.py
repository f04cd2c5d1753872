#!/usr/bin/python3
# tests/bats/canned.py PATH REPLY: a stand-in for tbrdmad's state socket that answers every
# request line on PATH with the JSON object in file REPLY, its "method" set to the request's
# (tbctl's tables over data the daemon without a kernel never has). A REPLY with the key
# "by_method" answers each method with its own object there (a method not in it: unknown-method),
# "schema" and "ok": true added where absent. REPLY is read again for every request (a test
# changes it between requests). Runs until killed.
import json, os, socket, sys

path, reply_file = sys.argv[1], sys.argv[2]
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
        with open(reply_file) as f:
            reply = json.load(f)
        req = json.loads(buf.split(b"\n")[0])
        if "by_method" in reply:
            out = reply["by_method"].get(req.get("method"), {
                "ok": False, "error": {"code": "unknown-method", "message": "unknown method"}})
            out = dict({"schema": 1, "ok": True}, **out)
            out["method"] = req.get("method")
        else:
            out = dict(reply, method=req.get("method"))
        c.sendall((json.dumps(out) + "\n").encode())
    except ValueError:
        pass
    c.close()
