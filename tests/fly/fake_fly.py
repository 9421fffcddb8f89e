#!/usr/bin/env python3
"""A local fake of the Fly Machines REST API subset the fly-driver uses.

Python 3 standard library only. Each Machine is a real local Docker
container (labelled kilntainers.fake-fly=1), so commands really run:
exec is `docker exec` with stdin, honouring the request's timeout (408
past it, or past the proxy cap). Apps, organizations, states and the
documented status codes follow ../../shared/notes/backend-apis.md §2/§5.2.

Usage: fake_fly.py [--port 0] [--token T] [--orgs personal,acme]
                   [--regions ams,iad] [--proxy-cap 30] [--start-delay 0.2]
Prints "PORT <n>" on stdout once listening. Every container it made is
removed when it exits (SIGTERM, SIGINT, or its parent going away).

Test controls (no auth):
  POST /_fake/inject   {"status": 429, "count": 3, "match": "regex",
                        "retry_after": 0}  next N matching requests fail
  GET  /_fake/requests  [{"method","path","auth"}] ("auth" is the scheme;
                        an exec's also carry "command", its argv, and
                        "stdin_len", the characters of its stdin or null)
  POST /_fake/clear     forget recorded requests and injections
  POST /_fake/ratelimit {"rate": 1, "burst": 3}  per (action, machine)
  GET  /_fake/state     apps and machines
"""

import argparse
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

LABEL = "kilntainers.fake-fly"
LOCK = threading.RLock()
APPS = {}        # name -> {"id", "name", "org"}
MACHINES = {}    # id -> machine dict (with private "_ctr", "_app")
REQUESTS = []
INJECT = []      # [{"status", "count", "match", "retry_after"}]
BUCKETS = {}     # (action, machine) -> [tokens, last]
RATE = {"rate": 0, "burst": 0}
ARGS = None
INSTANCE = secrets.token_hex(4)
SURROGATE = re.compile("[\ud800-\udfff]")


def now_iso():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def docker(*args, input=None, timeout=None):
    return subprocess.run(["docker", *args], input=input, capture_output=True,
                          timeout=timeout)


def local_image(ref):
    # The driver sends the image as the user named it; the fake runs it
    # from the local engine under that name.
    return ref


def public(m):
    return {k: v for k, v in m.items() if not k.startswith("_")}


def run_container(m):
    cfg = m["config"]
    init = (cfg.get("init") or {}).get("exec") or ["/bin/sleep", "inf"]
    name = "fakefly-%s-%s" % (INSTANCE, m["id"])
    docker("rm", "-f", name)
    r = docker("run", "-d", "--init", "--label", LABEL + "=1", "--label",
               LABEL + ".instance=" + INSTANCE, "--name", name,
               "--entrypoint", init[0], local_image(cfg["image"]), *init[1:])
    if r.returncode != 0:
        return None
    return r.stdout.decode().strip()


def persist(m):
    cfg = m["config"]
    return (cfg.get("rootfs") or {}).get("persist") or \
        (cfg.get("guest") or {}).get("persist_rootfs") or "never"


def boot(m, fresh):
    """Starts (or recreates, for an ephemeral rootfs) the container."""
    time.sleep(ARGS.start_delay)
    with LOCK:
        if m["state"] in ("destroyed", "destroying"):
            return
        ctr = m.get("_ctr")
    if fresh or ctr is None:
        if ctr:
            docker("rm", "-f", ctr)
        ctr = run_container(m)
    else:
        if docker("start", ctr).returncode != 0:
            ctr = run_container(m)
    with LOCK:
        m["_ctr"] = ctr
        m["state"] = "started" if ctr else "failed"
        m["instance_id"] = secrets.token_hex(8).upper()
        m["updated_at"] = now_iso()
        m["events"].append({"type": "start", "status": m["state"],
                            "timestamp": int(time.time() * 1000)})


def destroy(m):
    with LOCK:
        ctr, m["_ctr"] = m.get("_ctr"), None
        m["state"] = "destroyed"
        m["updated_at"] = now_iso()
    if ctr:
        docker("rm", "-f", ctr)


def refresh(m):
    """Follows the container: gone -> destroyed, exited -> stopped."""
    with LOCK:
        ctr, state = m.get("_ctr"), m["state"]
    if state not in ("started",) or not ctr:
        return
    r = docker("inspect", "-f", "{{.State.Running}}", ctr)
    if r.returncode != 0:
        with LOCK:
            m["_ctr"], m["state"] = None, "destroyed"
    elif r.stdout.decode().strip() != "true":
        if m["config"].get("auto_destroy"):
            destroy(m)
        else:
            with LOCK:
                m["state"] = "stopped"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        if os.environ.get("FAKE_FLY_TRACE"):
            sys.stderr.write("fake-fly: " + (fmt % a) + "\n")

    def reply(self, status, body=None, headers=None):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("fly-request-id", secrets.token_hex(8))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, text, code=None):
        body = {"error": text}
        if code:
            body["status"] = code
        self.reply(status, body)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return {}
        try:
            return json.loads(raw)
        except ValueError:
            return None

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_DELETE(self):
        self.route("DELETE")

    def route(self, method):
        u = urlsplit(self.path)
        q = parse_qs(u.query)
        path = u.path
        body = self.body() if method == "POST" else {}
        if path.startswith("/_fake/"):
            return self.control(method, path, body)
        auth = self.headers.get("Authorization") or ""
        scheme, _, tok = auth.partition(" ")
        rec = {"method": method, "path": self.path, "auth": scheme}
        if method == "POST" and path.endswith("/exec") and \
                isinstance(body, dict):
            rec["command"] = body.get("command") or body.get("cmd")
            st = body.get("stdin")
            rec["stdin_len"] = len(st) if isinstance(st, str) else None
        with LOCK:
            REQUESTS.append(rec)
        if scheme not in ("Bearer", "FlyV1") or tok != ARGS.token or \
                (tok.startswith(("fm1r_", "fm1a_", "fm2_")) and
                 scheme != "FlyV1"):
            return self.error(401, "unauthorized: invalid token")
        if body is None:
            return self.error(400, "invalid JSON body")
        with LOCK:
            for inj in INJECT:
                if inj["count"] > 0 and re.search(inj.get("match", ""),
                                                  method + " " + self.path):
                    inj["count"] -= 1
                    hdr = {}
                    if inj.get("retry_after") is not None:
                        hdr["Retry-After"] = str(inj["retry_after"])
                    st = inj["status"]
                    return self.reply(st, {"error": "injected %d" % st}, hdr)
        parts = [p for p in path.split("/") if p]
        if parts[:2] != ["v1", "apps"]:
            return self.error(404, "not found")
        if self.limited(method, parts):
            return self.error(429, "rate limited")
        try:
            return self.api(method, parts[2:], q, body)
        except BrokenPipeError:
            pass

    def limited(self, method, parts):
        if not RATE["rate"]:
            return False
        action = method + ":" + (parts[5] if len(parts) > 5 else
                                 ("get" if method == "GET" else "op"))
        key = (action, parts[4] if len(parts) > 4 else "")
        rate, burst = RATE["rate"], RATE["burst"]
        if action == "GET:get":
            rate, burst = rate * 5, burst * 3
        with LOCK:
            tokens, last = BUCKETS.get(key, [burst, time.monotonic()])
            t = time.monotonic()
            tokens = min(burst, tokens + (t - last) * rate)
            if tokens < 1:
                BUCKETS[key] = [tokens, t]
                return True
            BUCKETS[key] = [tokens - 1, t]
        return False

    def control(self, method, path, body):
        with LOCK:
            if path == "/_fake/inject" and method == "POST":
                INJECT.append(dict(body, count=int(body.get("count", 1))))
                return self.reply(200, {"ok": True})
            if path == "/_fake/requests":
                return self.reply(200, list(REQUESTS))
            if path == "/_fake/clear":
                REQUESTS.clear()
                INJECT.clear()
                return self.reply(200, {"ok": True})
            if path == "/_fake/ratelimit" and method == "POST":
                RATE.update(rate=body.get("rate", 0),
                            burst=body.get("burst", 0))
                BUCKETS.clear()
                return self.reply(200, {"ok": True})
            if path == "/_fake/state":
                return self.reply(200, {
                    "apps": list(APPS.values()),
                    "machines": [dict(public(m), app=m["_app"],
                                      container=m.get("_ctr"))
                                 for m in MACHINES.values()]})
        return self.error(404, "no such control")

    # ---------------------------------------------------------------- apps

    def api(self, method, p, q, body):
        if not p:
            if method == "GET":
                org = (q.get("org_slug") or [None])[0]
                with LOCK:
                    apps = [{"id": a["id"], "name": a["name"],
                             "machine_count": 0, "network": "default"}
                            for a in APPS.values()
                            if org is None or a["org"] == org]
                return self.reply(200, {"total_apps": len(apps),
                                        "apps": apps})
            if method == "POST":
                name, org = body.get("app_name"), body.get("org_slug")
                if not name or not org:
                    return self.error(400, "app_name and org_slug required")
                if org not in ARGS.orgs.split(","):
                    return self.error(404, "organization %s not found" % org)
                with LOCK:
                    if name in APPS:
                        return self.error(422, "app name already taken",
                                          "name_taken")
                    APPS[name] = {"id": secrets.token_hex(7), "name": name,
                                  "org": org}
                    return self.reply(201, {"id": APPS[name]["id"],
                                            "created_at": now_iso()})
            return self.error(405, "method not allowed")
        with LOCK:
            app = APPS.get(p[0])
        if app is None:
            return self.error(404, "app not found")
        if len(p) == 1:
            if method == "GET":
                return self.reply(200, {
                    "id": app["id"], "name": app["name"],
                    "status": "deployed",
                    "organization": {"name": app["org"],
                                     "slug": app["org"]}})
            if method == "DELETE":
                with LOCK:
                    del APPS[p[0]]
                return self.reply(202)
        if len(p) >= 2 and p[1] == "machines":
            return self.machines(method, app["name"], p[2:], q, body)
        return self.error(404, "not found")

    # ------------------------------------------------------------ machines

    def machines(self, method, app, p, q, body):
        if not p and method == "POST":
            return self.create(app, body)
        if not p and method == "GET":
            with LOCK:
                ms = [m for m in MACHINES.values() if m["_app"] == app]
            for m in ms:
                refresh(m)
            deleted = (q.get("include_deleted") or ["false"])[0] == "true"
            region = (q.get("region") or [None])[0]
            out = []
            for m in ms:
                if m["state"] == "destroyed" and not deleted:
                    continue
                if region and m["region"] != region:
                    continue
                meta = m["config"].get("metadata") or {}
                if all(meta.get(k[9:]) == v[0] for k, v in q.items()
                       if k.startswith("metadata.")):
                    out.append(public(m))
            return self.reply(200, out)
        with LOCK:
            m = MACHINES.get(p[0]) if p else None
        if m is None or m["_app"] != app:
            return self.error(404, "machine not found")
        refresh(m)
        action = p[1] if len(p) > 1 else None
        if action is None and method == "GET":
            return self.reply(200, public(m))
        if action is None and method == "DELETE":
            force = (q.get("force") or q.get("kill") or ["false"])[0]
            if m["state"] == "started" and force != "true":
                return self.error(412, "machine is running; stop it first "
                                  "or pass force=true", "failed_precondition")
            if m["state"] == "destroyed":
                return self.error(404, "machine not found")
            destroy(m)
            return self.reply(200, {"ok": True})
        handler = {"wait": self.wait, "start": self.start,
                   "stop": self.stop, "restart": self.restart,
                   "exec": self.exec, "signal": self.signal}.get(action)
        if handler is None or (action == "wait") != (method == "GET"):
            return self.error(404, "not found")
        return handler(m, q, body)

    def create(self, app, body):
        cfg = body.get("config") or {}
        if not cfg.get("image"):
            return self.error(422, "config.image is required", "invalid")
        mem = (cfg.get("guest") or {}).get("memory_mb", 256)
        if mem % 256:
            return self.error(422, "memory_mb must be a multiple of 256",
                              "invalid")
        region = body.get("region") or "ams"
        if region not in ARGS.regions.split(","):
            return self.error(400, "region %s not found" % region)
        name = body.get("name") or "m-" + secrets.token_hex(4)
        with LOCK:
            for o in MACHINES.values():
                if o["_app"] == app and o["name"] == name and \
                        o["state"] != "destroyed":
                    return self.error(409, "a machine named %s already "
                                      "exists" % name, "already_exists")
            mid = secrets.token_hex(7)
            m = {"id": mid, "name": name, "state": "created",
                 "region": region, "instance_id": secrets.token_hex(8),
                 "private_ip": "fdaa::%x" % len(MACHINES), "config": cfg,
                 "image_ref": {"repository": local_image(cfg["image"])},
                 "created_at": now_iso(), "updated_at": now_iso(),
                 "events": [], "_app": app}
            MACHINES[mid] = m
        threading.Thread(target=boot, args=(m, True), daemon=True).start()
        return self.reply(200, public(m))

    def wait(self, m, q, body):
        state = (q.get("state") or ["started"])[0]
        try:
            timeout = int((q.get("timeout") or ["60"])[0])
        except ValueError:
            return self.error(400, "invalid timeout", "invalid_argument")
        if timeout < 1 or timeout > 60:
            return self.error(400, "timeout must be 1-60 seconds",
                              "invalid_argument")
        if state == "stopped" and not (q.get("instance_id") or
                                       q.get("version")):
            return self.error(400, "instance_id is required for stopped",
                              "invalid_argument")
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            refresh(m)
            if m["state"] == state:
                return self.reply(200, {"ok": True})
            if m["state"] == "destroyed" and state != "destroyed":
                return self.error(404, "machine was destroyed")
            time.sleep(0.1)
        return self.error(408, "deadline_exceeded: machine did not reach "
                          "state %s" % state, "deadline_exceeded")

    def start(self, m, q, body):
        prev = m["state"]
        if prev in ("stopped", "created", "failed", "suspended"):
            with LOCK:
                m["state"] = "starting"
            threading.Thread(target=boot, args=(m, persist(m) == "never"),
                             daemon=True).start()
        elif prev == "destroyed":
            return self.error(404, "machine not found")
        return self.reply(200, {"message": "started", "status": "success",
                                "previous_state": prev})

    def stop(self, m, q, body):
        if m["state"] == "started":
            with LOCK:
                m["state"] = "stopping"
            docker("stop", "-t", "1", m["_ctr"])
            if m["config"].get("auto_destroy"):
                destroy(m)
            else:
                with LOCK:
                    m["state"] = "stopped"
        return self.reply(200, {"ok": True})

    def restart(self, m, q, body):
        if m["state"] != "started":
            return self.error(412, "machine is not started",
                              "failed_precondition")
        with LOCK:
            m["state"] = "restarting"
        if persist(m) == "never":
            boot(m, True)
        else:
            docker("restart", "-t", "1", m["_ctr"])
            with LOCK:
                m["state"] = "started"
        return self.reply(200, {"ok": True})

    def signal(self, m, q, body):
        sig = body.get("signal", 9)
        if m["_ctr"]:
            docker("kill", "-s", str(sig), m["_ctr"])
        return self.reply(200, {"ok": True})

    def exec(self, m, q, body):
        if m["state"] != "started":
            return self.error(412, "machine is not in the started state",
                              "failed_precondition")
        argv = body.get("command")
        if not argv and body.get("cmd"):
            argv = ["/bin/sh", "-c", body["cmd"]]
        if not isinstance(argv, list) or not argv:
            return self.error(400, "command is required")
        timeout = body.get("timeout") or ARGS.proxy_cap
        limit = min(float(timeout), ARGS.proxy_cap)
        stdin = body.get("stdin")
        # The API decodes the body into Go strings (MachineExecRequest):
        # stdin and the argv are text, a non-string is a 400, and a lone
        # surrogate escape becomes U+FFFD; there are no bytes in it.
        if stdin is not None and not isinstance(stdin, str):
            return self.error(400, "json: cannot unmarshal %s into Go "
                              "struct field MachineExecRequest.stdin of "
                              "type string" % type(stdin).__name__)
        if not all(isinstance(a, str) for a in argv):
            return self.error(400, "json: cannot unmarshal into Go struct "
                              "field MachineExecRequest.command of type "
                              "string")
        argv = [SURROGATE.sub("\ufffd", a) for a in argv]
        cmd = ["docker", "exec"] + (["-i"] if stdin is not None else []) + \
            [m["_ctr"]] + argv
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            out, err = proc.communicate(
                SURROGATE.sub("\ufffd", stdin or "").encode("utf-8"),
                timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return self.error(408, "deadline_exceeded: exec did not finish "
                              "in %gs" % limit, "deadline_exceeded")
        refresh(m)
        if m["state"] != "started":
            return self.error(412, "machine is not in the started state",
                              "failed_precondition")
        reply = {"stdout": out.decode("utf-8", "replace"),
                 "stderr": err.decode("utf-8", "replace")}
        if proc.returncode:
            reply["exit_code"] = proc.returncode
        return self.reply(200, reply)


def cleanup(*_):
    ids = docker("ps", "-aq", "--filter",
                 "label=%s.instance=%s" % (LABEL, INSTANCE)).stdout.split()
    if ids:
        docker("rm", "-f", *[i.decode() for i in ids])


def watch_parent(ppid):
    while True:
        time.sleep(1)
        if os.getppid() != ppid:
            cleanup()
            os._exit(0)


def follow_loop():
    """Like Fly, follows every Machine by itself: a Machine whose init
    exited stops (and with auto_destroy is destroyed) without any call."""
    while True:
        time.sleep(0.5)
        with LOCK:
            ms = list(MACHINES.values())
        for m in ms:
            refresh(m)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--token", default=os.environ.get("FAKE_FLY_TOKEN",
                                                      "fake-token"))
    ap.add_argument("--orgs", default="personal")
    ap.add_argument("--regions", default="ams,iad,ord,fra,gru,syd")
    ap.add_argument("--proxy-cap", type=float, default=30.0)
    ap.add_argument("--start-delay", type=float, default=0.2)
    ARGS = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    srv.daemon_threads = True

    def stop(*_):
        cleanup()
        os._exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    threading.Thread(target=watch_parent, args=(os.getppid(),),
                     daemon=True).start()
    threading.Thread(target=follow_loop, daemon=True).start()
    print("PORT %d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    finally:
        cleanup()


if __name__ == "__main__":
    main()
