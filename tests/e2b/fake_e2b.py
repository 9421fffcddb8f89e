#!/usr/bin/env python3
"""A local fake of E2B's control-plane API and envd's process API (Connect, JSON codec).

One listener: requests with an E2b-Sandbox-Id header go to envd, others to the control plane, but
for a Host of E2B's per-port form, <port>-<sandboxID>.<domain>: those go to that port of the sandbox
(its container's address), as E2B's edge serves a sandbox's ports at their public host.
Each sandbox is a real Docker container (debian:bookworm-slim, label fake-e2b=<pid>), removed on
exit. Snapshots (POST /sandboxes/{id}/snapshots, GET /snapshots, DELETE /templates/{id}, and
templateID = a snapshot's id at create) are committed images of those containers, with the same
label. Prints "PORT <n>" on stdout. Standard library only.
"""
import argparse, base64, json, os, queue, re, secrets, signal, socket, struct, subprocess, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs, parse_qsl, unquote

IMAGE = 'debian:bookworm-slim'
LABEL = f'fake-e2b={os.getpid()}'
LOCK = threading.Lock()
SANDBOXES = {}   # id -> dict
TEMPLATES = {}   # snapshot templates: id -> {'alias', 'image', 'sandbox'}
TEAM = 'fake-team'
ALIAS_RE = re.compile(r'[a-z0-9][a-z0-9_-]*')
PROCS = {}       # (sandbox, pid) -> Proc
REQUESTS = []
ARGS = None
# A lagging or hostile provider (POST /_fake/behave, reset by /_fake/clear): listLag, seconds a
# new snapshot stays out of GET /snapshots; endlessPages, a nextToken on every page; extraRows,
# rows (any JSON) listed first.
BEHAVE = {}


def docker(*a, check=False, inp=None):
    return subprocess.run(['docker', *a], capture_output=True, input=inp, check=check)


class Proc:
    def __init__(self, sbx, pid, popen):
        self.sbx, self.pid, self.popen = sbx, pid, popen
        self.stdin_open = True

    def kill(self):
        # kill the process inside the container (its pid is in a file), then the client
        docker('exec', self.sbx['container'], 'sh', '-c',
               f'kill -9 $(cat /run/fake-envd.{self.pid} 2>/dev/null) 2>/dev/null; true')
        try:
            self.popen.kill()
        except OSError:
            pass


FAKE_DOMAIN = [None]


def public(s, tokens=True):
    d = {k: s[k] for k in ('sandboxID', 'templateID', 'clientID', 'envdVersion', 'metadata',
                           'startedAt', 'endAt', 'state', 'cpuCount', 'memoryMB')}
    if tokens:
        d['envdAccessToken'] = s['envdAccessToken']
        d['domain'] = FAKE_DOMAIN[0]
    return d


def snapshot_info(tid, t):
    """SnapshotInfo as E2B's API gives it (spec/openapi.yml)."""
    if t['alias']:
        name = f"{TEAM}/{t['alias']}:default"
        return {'snapshotID': name, 'names': [name]}
    return {'snapshotID': f'{tid}:default', 'names': []}


def resolve_template(ref):
    """A template id or name ("id", "id:tag", "alias", "team/alias:tag") -> (id, template)."""
    base = ref.split(':', 1)[0]
    if '/' in base:
        team, base = base.split('/', 1)
        if team != TEAM:
            return None, None
    with LOCK:
        for tid, t in TEMPLATES.items():
            if base == tid or (t['alias'] and base == t['alias']):
                return tid, t
    return None, None


def expire_loop():
    while True:
        time.sleep(0.5)
        now = time.time()
        with LOCK:
            gone = [s for s in SANDBOXES.values() if s['state'] == 'running' and s['deadline'] < now]
        for s in gone:
            if s['autoPause']:
                pause(s)
            else:
                kill(s)


def kill(s):
    with LOCK:
        SANDBOXES.pop(s['sandboxID'], None)
    docker('rm', '-f', s['container'])


def pause(s):
    docker('pause', s['container'])
    s['state'] = 'paused'


class H(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *a):
        pass

    def body(self):
        n = int(self.headers.get('Content-Length') or 0)
        return self.rfile.read(n) if n else b''

    def reply(self, status, obj=None, headers=None, ctype='application/json'):
        data = b'' if obj is None else json.dumps(obj).encode()
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if data:
            self.send_header('Content-Type', ctype)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def err(self, status, msg):
        self.reply(status, {'code': status, 'message': msg})

    def handle_any(self, method):
        u = urlsplit(self.path)
        raw = self.body()
        m = re.fullmatch(r'(\d+)-([a-z0-9]+)\.[a-z0-9.-]+', (self.headers.get('Host') or '').rsplit(':', 1)[0])
        if m and not self.headers.get('E2b-Sandbox-Id'):
            REQUESTS.append({'method': method, 'path': u.path, 'host': self.headers.get('Host')})
            return self.port_host(method, int(m.group(1)), m.group(2), raw)
        REQUESTS.append({'method': method, 'path': u.path, 'key': self.headers.get('X-API-Key'),
                         'sandbox': self.headers.get('E2b-Sandbox-Id')})
        if u.path.startswith('/_fake/'):
            return self.fake(method, u, raw)
        inj = ARGS.inject
        if inj and inj[0]['n'] > 0 and re.search(inj[0]['match'], f'{method} {u.path}'):
            inj[0]['n'] -= 1
            return self.err(inj[0]['status'], inj[0]['message'])
        if self.headers.get('E2b-Sandbox-Id'):
            return self.envd(method, u, raw)
        if self.headers.get('X-API-Key') != ARGS.key:
            return self.err(401, 'Invalid API key, it must start with e2b_')
        return self.api(method, u, raw)

    def do_GET(self):
        self.handle_any('GET')

    def do_POST(self):
        self.handle_any('POST')

    def do_DELETE(self):
        self.handle_any('DELETE')

    def fake(self, method, u, raw):
        if u.path == '/_fake/state':
            with LOCK:
                return self.reply(200, {'sandboxes': [dict(public(s), container=s['container'],
                                                           createTimeout=s['body'].get('timeout'))
                                                      for s in SANDBOXES.values()]})
        if u.path == '/_fake/requests':
            return self.reply(200, REQUESTS)
        if u.path == '/_fake/templates':
            with LOCK:
                return self.reply(200, {tid: dict(t) for tid, t in TEMPLATES.items()})
        if u.path == '/_fake/inject':
            j = json.loads(raw)
            ARGS.inject.append({'match': j['match'], 'status': j['status'], 'n': j.get('count', 1),
                                'message': j.get('message', 'injected')})
            return self.reply(200, {})
        if u.path == '/_fake/behave':
            BEHAVE.update(json.loads(raw))
            return self.reply(200, BEHAVE)
        if u.path == '/_fake/end':        # E2B ends a sandbox (its timeout)
            with LOCK:
                s = SANDBOXES.get(json.loads(raw)['sandboxID'])
            if s is not None:
                kill(s)
            return self.reply(200, {})
        if u.path == '/_fake/domain':     # the domain replies name (None: E2B_DOMAIN's)
            FAKE_DOMAIN[0] = json.loads(raw).get('domain')
            return self.reply(200, {})
        if u.path == '/_fake/clear':
            BEHAVE.clear()
            ARGS.inject.clear()
            REQUESTS.clear()
            return self.reply(200, {})
        self.err(404, 'no such fake endpoint')

    # ---- control plane ----
    def api(self, method, u, raw):
        p = u.path
        if method == 'POST' and p == '/sandboxes':
            j = json.loads(raw or b'{}')
            image, tpl = IMAGE, 'base'
            if j.get('templateID') != 'base':
                tid, t = resolve_template(str(j.get('templateID')))
                if t is None:
                    return self.err(400, f"template '{j.get('templateID')}' not found")
                image, tpl = t['image'], tid
            sid = 'i' + secrets.token_hex(10)
            envs = []
            for k, v in (j.get('envVars') or {}).items():
                envs += ['-e', f'{k}={v}']
            net = [] if j.get('allow_internet_access', True) else ['--network', 'none']
            r = docker('run', '-d', '--label', LABEL, '--name', f'fake-e2b-{sid}', *net, *envs,
                       image, 'sleep', 'infinity')
            if r.returncode != 0:
                return self.err(500, r.stderr.decode()[-300:])
            now = time.time()
            s = {'sandboxID': sid, 'templateID': tpl, 'clientID': 'fake', 'envdVersion': '0.5.7',
                 'envdAccessToken': secrets.token_hex(16), 'metadata': j.get('metadata') or {},
                 'startedAt': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now)),
                 'endAt': None, 'state': 'running', 'cpuCount': 2, 'memoryMB': 512,
                 'container': r.stdout.decode().strip(), 'deadline': now + j.get('timeout', 15),
                 'autoPause': bool(j.get('autoPause')), 'body': j, 'next_pid': 100}
            with LOCK:
                SANDBOXES[sid] = s
            return self.reply(201, public(s))
        if method == 'GET' and p == '/v2/sandboxes':
            q = parse_qs(u.query)
            want = dict(parse_qsl(q.get('metadata', [''])[0]))
            states = (q.get('state', ['running,paused'])[0]).split(',')
            limit = int(q.get('limit', ['100'])[0])
            start = int(q.get('nextToken', ['0'])[0])
            with LOCK:
                rows = [public(s, False) for s in SANDBOXES.values() if s['state'] in states and
                        all(s['metadata'].get(k) == v for k, v in want.items())]
            page = rows[start:start + limit]
            hdr = {'X-Total-Running': str(len(rows))}
            if start + limit < len(rows):
                hdr['X-Next-Token'] = str(start + limit)
            return self.reply(200, page, hdr)
        if method == 'GET' and p == '/snapshots':
            return self.list_snapshots(u)
        m = re.fullmatch(r'/templates/([^/]+)', p)
        if method == 'DELETE' and m:
            tid, t = resolve_template(unquote(m.group(1)))
            if t is None:
                return self.err(404, f"template '{unquote(m.group(1))}' not found")
            with LOCK:
                TEMPLATES.pop(tid, None)
            docker('rmi', '-f', t['image'])
            return self.reply(204)
        m = re.fullmatch(r'/sandboxes/([^/]+)(/[a-z]+)?', p)
        if not m:
            return self.err(404, 'not found')
        with LOCK:
            s = SANDBOXES.get(m.group(1))
        if s is None:
            return self.err(404, f"sandbox '{m.group(1)}' not found")
        op = m.group(2)
        if method == 'GET' and op is None:
            return self.reply(200, public(s))
        if method == 'DELETE' and op is None:
            kill(s)
            return self.reply(204)
        j = json.loads(raw or b'{}')
        if method == 'POST' and op == '/snapshots':
            return self.snapshot(s, j)
        if method == 'POST' and op == '/timeout':
            s['deadline'] = time.time() + j.get('timeout', 15)
            return self.reply(204)
        if method == 'POST' and op == '/pause':
            if s['state'] != 'running':
                return self.err(409, 'sandbox is not running')
            pause(s)
            return self.reply(204)
        if method == 'POST' and op == '/connect':
            s['deadline'] = time.time() + j.get('timeout', 15)
            if s['state'] == 'paused':
                docker('unpause', s['container'])
                s['state'] = 'running'
                return self.reply(201, public(s))
            return self.reply(200, public(s))
        self.err(404, 'not found')

    # ---- a sandbox's port at its public host ----
    def port_host(self, method, port, sid, raw):
        with LOCK:
            s = SANDBOXES.get(sid)
        if s is None or s['state'] != 'running':
            return self.err(502, 'The sandbox was not found')
        r = docker('inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', s['container'])
        ip = r.stdout.decode().strip()
        try:
            c = socket.create_connection((ip, port), timeout=10)
        except (OSError, ValueError):
            return self.err(502, f'The sandbox is running but port is not open: {port}')
        hdrs = ''.join(f'{k}: {v}\r\n' for k, v in self.headers.items()
                       if k.lower() not in ('connection', 'content-length', 'keep-alive'))
        c.sendall(f'{method} {self.path} HTTP/1.1\r\n{hdrs}Content-Length: {len(raw)}\r\n'
                  f'Connection: close\r\n\r\n'.encode() + raw)
        try:
            while True:
                d = c.recv(65536)
                if not d:
                    break
                self.wfile.write(d)
        except OSError:
            pass
        c.close()
        self.close_connection = True

    def snapshot(self, s, j):
        """POST /sandboxes/{id}/snapshots: a persistent template of the sandbox's state; the
        sandbox is paused meanwhile (docker commit pauses it). A name that exists gets a new
        build of the same template."""
        alias = j.get('name')
        if alias is not None and (not isinstance(alias, str) or not ALIAS_RE.fullmatch(alias)):
            return self.err(400, f"invalid template name '{alias}'")
        tid, t = resolve_template(alias) if alias else (None, None)
        if t is None:
            tid = secrets.token_hex(10)
        image = f'fake-e2b-snap:{tid}-{secrets.token_hex(4)}'
        r = docker('commit', '--pause=true', s['container'], image)
        if r.returncode != 0:
            return self.err(500, r.stderr.decode()[-300:])
        with LOCK:
            old = TEMPLATES.get(tid)
            TEMPLATES[tid] = {'alias': alias, 'image': image, 'sandbox': s['sandboxID'],
                              'made': time.time()}
        if old:
            docker('rmi', old['image'])   # a new build; in use by a sandbox: kept until exit
        return self.reply(201, snapshot_info(tid, TEMPLATES[tid]))

    def list_snapshots(self, u):
        q = parse_qs(u.query)
        sbx = q.get('sandboxID', [None])[0]
        name = q.get('name', [None])[0]
        limit = int(q.get('limit', ['100'])[0])
        if not 1 <= limit <= 100:
            return self.err(400, 'limit must be 1 to 100')
        limit = min(limit, ARGS.snapshot_page)
        try:   # an opaque cursor, base64 as E2B's are (padding and all)
            start = int(base64.b64decode(q.get('nextToken', [''])[0]).decode() or 0)
        except ValueError:
            return self.err(400, 'invalid nextToken')
        with LOCK:
            items = sorted(TEMPLATES.items())
        rows = list(BEHAVE.get('extraRows', []))
        lag = BEHAVE.get('listLag', 0)
        for tid, t in items:
            if time.time() - t.get('made', 0) < lag:
                continue
            if sbx and t['sandbox'] != sbx:
                continue
            if name and resolve_template(name)[0] != tid:
                continue
            rows.append(snapshot_info(tid, t))
        page = rows[start:start + limit]
        hdr = {}
        if start + limit < len(rows) or BEHAVE.get('endlessPages'):
            hdr['X-Next-Token'] = base64.b64encode(str(start + limit).encode()).decode()
        return self.reply(200, page, hdr)

    # ---- envd ----
    def envd(self, method, u, raw):
        with LOCK:
            s = SANDBOXES.get(self.headers.get('E2b-Sandbox-Id'))
        if s is None or s['state'] != 'running':
            return self.err(502, 'sandbox not found')
        if u.path == '/health':
            return self.reply(204)
        if self.headers.get('X-Access-Token') != s['envdAccessToken']:
            return self.reply(401, {'code': 'unauthenticated', 'message': 'invalid access token'})
        if u.path == '/process.Process/Start':
            return self.start(s, raw)
        j = json.loads(raw or b'{}')
        pid = (j.get('process') or {}).get('pid')
        with LOCK:
            pr = PROCS.get((s['sandboxID'], pid))
        if pr is None:
            return self.reply(404, {'code': 'not_found', 'message': f'process {pid} not found'})
        try:
            if u.path == '/process.Process/SendInput':
                pr.popen.stdin.write(base64.b64decode(j['input']['stdin']))
                pr.popen.stdin.flush()
            elif u.path == '/process.Process/CloseStdin':
                pr.popen.stdin.close()
            elif u.path == '/process.Process/SendSignal':
                pr.kill()
            else:
                return self.reply(404, {'code': 'unimplemented', 'message': u.path})
        except (OSError, ValueError) as e:
            return self.reply(400, {'code': 'failed_precondition', 'message': str(e)})
        self.reply(200, {})

    def start(self, s, raw):
        if self.headers.get('Content-Type') != 'application/connect+json' or len(raw) < 5:
            return self.reply(415, {'code': 'invalid_argument', 'message': 'bad content type'})
        flags, n = struct.unpack('>BI', raw[:5])
        j = json.loads(raw[5:5 + n])
        p = j['process']
        timeout_ms = int(self.headers.get('Connect-Timeout-Ms') or 0)
        keep = int(self.headers.get('Keepalive-Ping-Interval') or 90)
        with LOCK:
            pid = s['next_pid']
            s['next_pid'] += 1
        cmd = ['docker', 'exec'] + (['-i'] if j.get('stdin') else [])
        if p.get('cwd'):
            cmd += ['-w', p['cwd']]
        for k, v in (p.get('envs') or {}).items():
            cmd += ['-e', f'{k}={v}']
        cmd += [s['container'], '/bin/sh', '-c', f'echo $$ > /run/fake-envd.{pid}; exec "$@"', '--',
                p['cmd'], *p.get('args', [])]
        popen = subprocess.Popen(cmd, stdin=subprocess.PIPE if j.get('stdin') else subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        pr = Proc(s, pid, popen)
        with LOCK:
            PROCS[(s['sandboxID'], pid)] = pr
        q = queue.Queue()

        def pump(f, name):
            while True:
                b = f.read1(32768)
                if not b:
                    break
                q.put((name, b))
            q.put((name, None))
        for f, name in ((popen.stdout, 'stdout'), (popen.stderr, 'stderr')):
            threading.Thread(target=pump, args=(f, name), daemon=True).start()
        self.send_response(200)
        self.send_header('Content-Type', 'application/connect+json')
        self.send_header('Transfer-Encoding', 'chunked')
        self.end_headers()

        def send(obj, fl=0):
            data = json.dumps(obj).encode()
            env = struct.pack('>BI', fl, len(data)) + data
            # split across chunks to exercise the client's reassembly
            for part in (env[:3], env[3:]):
                if part:
                    self.wfile.write(b'%x\r\n%s\r\n' % (len(part), part))
            self.wfile.flush()
        try:
            send({'event': {'start': {'pid': pid}}})
            done, deadline, last = 0, time.time() + timeout_ms / 1000 if timeout_ms else None, time.time()
            while done < 2:
                if deadline and time.time() > deadline:
                    pr.kill()
                    send({'error': {'code': 'deadline_exceeded', 'message': 'context deadline exceeded'}}, 2)
                    self.wfile.write(b'0\r\n\r\n')
                    return
                try:
                    name, b = q.get(timeout=0.2)
                except queue.Empty:
                    if time.time() - last > keep:
                        send({'event': {'keepalive': {}}})
                        last = time.time()
                    continue
                if b is None:
                    done += 1
                    continue
                send({'event': {'data': {name: base64.b64encode(b).decode()}}})
            rc = popen.wait()
            with LOCK:
                alive = s['sandboxID'] in SANDBOXES
            if not alive:   # killed mid-command: the edge drops the stream
                self.close_connection = True
                self.wfile.flush()
                self.connection.shutdown(2)
                return
            end = {'exited': True, 'status': f'exit status {rc}'}
            if rc > 128 and rc - 128 in (9, 15):
                end = {'exitCode': -1, 'status': 'signal: killed' if rc == 137 else 'signal: terminated'}
            elif rc != 0:
                end['exitCode'] = rc
            send({'event': {'end': end}})
            send({}, 2)
            self.wfile.write(b'0\r\n\r\n')
        except (BrokenPipeError, ConnectionResetError):
            pass   # the client went away: the process keeps running, as in envd
        finally:
            with LOCK:
                PROCS.pop((s['sandboxID'], pid), None)


def cleanup(*_):
    r = docker('ps', '-aq', '--filter', f'label={LABEL}')
    ids = r.stdout.decode().split()
    if ids:
        docker('rm', '-f', *ids)
    # snapshot images inherit the containers' label
    r = docker('images', '-q', '--filter', f'label={LABEL}')
    ids = sorted(set(r.stdout.decode().split()))
    if ids:
        docker('rmi', '-f', *ids)
    os._exit(0)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument('--key', required=True)
    ap.add_argument('--snapshot-page', type=int, default=100, help='snapshots per GET /snapshots page at most')
    ARGS = ap.parse_args()
    ARGS.inject = []
    signal.signal(signal.SIGTERM, cleanup)
    signal.signal(signal.SIGINT, cleanup)
    srv = ThreadingHTTPServer(('127.0.0.1', 0), H)
    srv.daemon_threads = True
    threading.Thread(target=expire_loop, daemon=True).start()
    print(f'PORT {srv.server_address[1]}', flush=True)
    try:
        srv.serve_forever()
    finally:
        cleanup()


if __name__ == '__main__':
    main()
