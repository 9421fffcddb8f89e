#!/usr/bin/env python3
"""A local fake of Modal's gRPC API: the control plane (modal.client.ModalClient) and the task
command router (modal.task_command_router.TaskCommandRouter), both h2c, from our trimmed protos
(protos/modal), whose Python stubs are generated at start into a temporary folder with Debian's
python3-grpc-tools.

Each sandbox is a real Docker container (the image as named by the FROM line; no pulls), label
fake-modal=<pid>, removed when it ends and at exit. Commands run with `docker exec`. The router is
reached through a small TCP proxy that the test can tell to cut or refuse connections. A third
listener, plain HTTP JSON, shows the state and injects faults:

  GET  /state                   sandboxes, images, requests
  POST /inject   {method, code, message?, count?, after?}   the next `count` calls of method
                 fail (after: done first, then failed, as a reply lost on the way)
  POST /flood    {entries}      DictContents yields `entries` more (junk) entries
  POST /terminate {sandbox_id}  as if terminated from Modal's dashboard
  POST /proxy    {mode}         pass | cut (sever open router connections once) | drop (refuse all)
  POST /clear                   forget injections and requests
  any request whose Host is a tunnel's host (SandboxGetTunnels): relayed to that port of the
  sandbox's container, as Modal's tunnel edge does (plain HTTP here; Modal's is TLS)

Named Dicts (DictGetOrCreate, DictUpdate, DictGet, DictContents, DictPop) keep bytes as given;
ImageDelete forgets an image (a sandbox of it can no longer be created) and removes a snapshot's
committed image.

Prints "PORTS <api> <router> <ctl>" on stdout. Faithful to the documented API: metadata names
(x-modal-token-id, x-modal-token-secret, x-modal-client-type, x-modal-auth-token, authorization:
Bearer), JWT-shaped tokens with an exp claim, status codes, field numbers (from the protos).
"""
import argparse, base64, json, os, queue, secrets, shutil, signal, socket, subprocess, sys, tempfile
import threading, time
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
PROTOS = os.path.normpath(os.path.join(HERE, '..', '..', 'protos', 'modal'))
PID = os.getpid()
LABEL = f'fake-modal={PID}'
LOCK = threading.RLock()
CHANGED = threading.Condition(LOCK)
ARGS = None
api = api_grpc = tcr = tcr_grpc = None
STUBS = None

APPS = {}        # (env, name) -> app id
IMAGES = {}      # image id -> {ref, status, exception, logs, snapshot}
SANDBOXES = {}   # sandbox id -> Sbx
TASKS = {}       # task id -> Sbx
TOKENS = {}      # auth token -> exp
JWTS = {}        # router jwt -> (task id, exp)
INJECT = []      # {method, code, message, count, after}
FLOOD = {'entries': 0}
REQUESTS = []
SNAPSHOTS = []   # local image refs made by docker commit
DICTS = {}       # (env, name) -> dict id
DICT_DATA = {}   # dict id -> {key bytes: value bytes} (modal.Dict; kept in insertion order)
ROUTER_URL = None
BUILDER_VERSION = '2024.10'
READY = 'fake-router-ready'


def docker(*a, inp=None, timeout=120):
    return subprocess.run(['docker', *a], capture_output=True, input=inp, timeout=timeout)


def b64(b):
    return base64.urlsafe_b64encode(b).rstrip(b'=').decode()


def jwt(claims):
    return '.'.join([b64(b'{"alg":"HS256","typ":"JWT"}'), b64(json.dumps(claims).encode()),
                     b64(secrets.token_bytes(16))])


def ident(prefix):
    return prefix + '-' + secrets.token_hex(10)


def generate_stubs():
    global api, api_grpc, tcr, tcr_grpc, STUBS
    from grpc_tools import protoc
    STUBS = tempfile.mkdtemp(prefix='fake-modal-stubs-')
    files = [os.path.join(PROTOS, f) for f in ('modal_client.proto', 'modal_task_command_router.proto')]
    rc = protoc.main(['protoc', f'-I{PROTOS}', f'--python_out={STUBS}', f'--grpc_python_out={STUBS}', *files])
    if rc != 0:
        sys.exit(f'fake_modal: protoc failed ({rc})')
    sys.path.insert(0, STUBS)
    import modal_client_pb2 as a, modal_client_pb2_grpc as ag
    import modal_task_command_router_pb2 as t, modal_task_command_router_pb2_grpc as tg
    api, api_grpc, tcr, tcr_grpc = a, ag, t, tg


# ---------------------------------------------------------------------------------------------
# faults and checks

def injected(ctx, method, after=False):
    with LOCK:
        for i in INJECT:
            if i['method'] == method and i['count'] > 0 and i.get('after', False) == after:
                i['count'] -= 1
                code, msg = grpc.StatusCode[i['code']], i.get('message') or 'injected failure'
                break
        else:
            return
    ctx.abort(code, msg)


def record(ctx, method, md):
    with LOCK:
        REQUESTS.append({'method': method, 'client_type': md.get('x-modal-client-type'),
                         'client_version': md.get('x-modal-client-version'),
                         'auth_token': 'x-modal-auth-token' in md,
                         'authorization': (md.get('authorization') or '').split(' ')[0],
                         'timeout': ctx.time_remaining()})


def check_api(ctx, method, auth=True):
    md = dict(ctx.invocation_metadata())
    record(ctx, method, md)
    if md.get('x-modal-token-id') != ARGS.token_id or md.get('x-modal-token-secret') != ARGS.token_secret:
        ctx.abort(grpc.StatusCode.UNAUTHENTICATED, 'Token ID or secret is invalid. Please check your token.')
    if not md.get('x-modal-client-type') or not md.get('x-modal-client-version'):
        ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, 'missing client type or version')
    if auth:
        tok = md.get('x-modal-auth-token')
        with LOCK:
            exp = TOKENS.get(tok)
        if exp is None or exp < time.time():
            ctx.abort(grpc.StatusCode.UNAUTHENTICATED, 'auth token is missing or expired')
    injected(ctx, method)


def check_router(ctx, method, task_id):
    md = dict(ctx.invocation_metadata())
    record(ctx, method, md)
    auth = md.get('authorization') or ''
    if not auth.startswith('Bearer '):
        ctx.abort(grpc.StatusCode.UNAUTHENTICATED, 'missing bearer token')
    with LOCK:
        tid, exp = JWTS.get(auth[7:], (None, 0))
    if exp < time.time():
        ctx.abort(grpc.StatusCode.UNAUTHENTICATED, 'token expired or unknown')
    if tid != task_id:
        ctx.abort(grpc.StatusCode.PERMISSION_DENIED, 'token is for another task')
    injected(ctx, method)
    with LOCK:
        s = TASKS.get(task_id)
    if s is None:
        ctx.abort(grpc.StatusCode.NOT_FOUND, f'task {task_id} not found')
    if s.result is not None:
        ctx.abort(grpc.StatusCode.UNAVAILABLE, f'task {task_id} is not running')
    return s


# ---------------------------------------------------------------------------------------------
# sandboxes and commands

class Exec:
    def __init__(self, s, req):
        self.s, self.id = s, req.exec_id
        self.bufs, self.eof = [bytearray(), bytearray()], [False, False]
        self.code = self.signal = None
        self.killed = False
        self.written, self.stdin_closed = 0, False
        self.argv = list(req.command_args)
        cmd = ['docker', 'exec', '-i']
        if req.workdir:
            cmd += ['-w', req.workdir]
        for k, v in req.env.items():
            cmd += ['-e', f'{k}={v}']
        # The wrapper says READY on stderr once `docker exec` runs it: stdin sent earlier can be lost
        # by the docker CLI, so it waits for that (Modal's router has no such race).
        cmd += [s.container, '/bin/sh', '-c', f'echo $$ > /run/fake-router.{self.id}; echo {READY} >&2; '
                'exec "$@"', 'sh', *req.command_args]
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.ready = threading.Event()
        self.stdin_q = queue.Queue()
        for fd, f in enumerate((self.p.stdout, self.p.stderr)):
            threading.Thread(target=self.pump, args=(fd, f), daemon=True).start()
        threading.Thread(target=self.reap, daemon=True).start()
        threading.Thread(target=self.feed, daemon=True).start()
        if req.timeout_secs:
            t = threading.Timer(req.timeout_secs, self.kill)
            t.daemon = True
            t.start()

    def pump(self, fd, f):
        if fd == 1:
            line = f.readline()
            if line.strip() != READY.encode():
                with CHANGED:
                    self.bufs[1] += line   # docker's own error: the command never ran
            self.ready.set()
        while True:
            b = f.read1(65536)
            with CHANGED:
                if not b:
                    self.eof[fd] = True
                    CHANGED.notify_all()
                    return
                self.bufs[fd] += b
                CHANGED.notify_all()

    def reap(self):
        rc = self.p.wait()
        with CHANGED:
            if self.killed and rc in (137, 143, -9):
                self.signal = 9
            else:
                self.code = rc
            CHANGED.notify_all()

    def kill(self):
        self.killed = True
        docker('exec', self.s.container, 'sh', '-c',
               f'kill -9 $(cat /run/fake-router.{self.id} 2>/dev/null) 2>/dev/null; true', timeout=30)

    def write(self, offset, data, eof):
        # offsets make a resent chunk harmless; a gap is an error
        with LOCK:
            if offset > self.written:
                return f'offset {offset} is past the {self.written} bytes written'
            data = data[self.written - offset:]
            if self.stdin_closed:
                return None
            self.written += len(data)
            self.stdin_closed = eof
        self.stdin_q.put((data, eof))
        return None

    def feed(self):
        self.ready.wait(30)
        while True:
            data, eof = self.stdin_q.get()
            try:
                if data:
                    self.p.stdin.write(data)
                    self.p.stdin.flush()
                if eof:
                    self.p.stdin.close()
                    return
            except (BrokenPipeError, OSError):
                return


class Sbx:
    def __init__(self, sid, app_id, req, image):
        d = req.definition
        self.id, self.app_id = sid, app_id
        self.tags = {t.tag_name: t.tag_value for t in req.tags}
        self.created_at = time.time()
        self.timeout_secs = d.timeout_secs or 300
        # Like Modal: ended after this long without a command starting or running (0: never).
        self.idle_timeout_secs = d.idle_timeout_secs
        self.last_active = time.time()
        self.network = api.NetworkAccess.NetworkAccessType.Name(d.network_access.network_access_type)
        self.block_network = d.block_network
        self.allowed_domains = list(d.network_access.allowed_domains)
        self.milli_cpu, self.memory_mb = d.resources.milli_cpu, d.resources.memory_mb
        self.gpu = d.resources.gpu_config.gpu_type
        self.gpu_count = d.resources.gpu_config.count
        self.regions = list(d.scheduler_placement.regions)
        self.image_id, self.image_ref = d.image_id, image['ref']
        self.task_id = ident('ta')
        self.ready_at = time.time() + 0.3
        self.result = None   # (status, exception)
        self.execs = {}
        net = ['--network', 'none'] if self.network == 'BLOCKED' else []
        res = []
        if self.milli_cpu:
            res += ['--cpus', str(self.milli_cpu / 1000)]
        if self.memory_mb:
            res += ['--memory', f'{max(self.memory_mb, 8)}m']
        self.entrypoint = list(d.entrypoint_args)
        # Like Modal: tunnels only for the ports named at creation (open_ports), each its own host.
        self.open_ports = [p.port for p in d.open_ports.ports]
        self.tunnels = {p: f'{ident("tn")}.tunnels.localhost' for p in self.open_ports}
        entry = self.entrypoint or ['sleep', 'infinity']
        r = docker('run', '-d', '--label', LABEL, '--name', f'fake-modal-{PID}-{sid}', *net, *res,
                   image['ref'], *entry)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.decode()[-300:])
        self.container = r.stdout.decode().strip()
        threading.Thread(target=self.wait_entrypoint, daemon=True).start()

    def wait_entrypoint(self):
        # Like Modal: a sandbox ends when its entrypoint exits.
        r = subprocess.run(['docker', 'wait', self.container], capture_output=True)
        code = r.stdout.decode().strip()
        if r.returncode == 0 and self.result is None:
            status = api.GenericResult.GENERIC_STATUS_SUCCESS if code == '0' else \
                api.GenericResult.GENERIC_STATUS_FAILURE
            finish(self, status, f'entrypoint exited with {code}')

    def public(self):
        return {'sandbox_id': self.id, 'task_id': self.task_id, 'tags': self.tags,
                'status': None if self.result is None else api.GenericResult.GenericStatus.Name(self.result[0]),
                'container': self.container, 'entrypoint': self.entrypoint,
                'timeout_secs': self.timeout_secs,
                'idle_timeout_secs': self.idle_timeout_secs, 'network': self.network,
                'block_network': self.block_network, 'allowed_domains': self.allowed_domains,
                'milli_cpu': self.milli_cpu,
                'memory_mb': self.memory_mb, 'gpu': self.gpu, 'gpu_count': self.gpu_count,
                'regions': self.regions, 'image_ref': self.image_ref, 'created_at': self.created_at,
                'open_ports': self.open_ports, 'tunnels': self.tunnels,
                'execs': [{'id': e.id, 'stdout': e.bufs[0].decode('utf-8', 'replace')[-2000:],
                           'stderr': e.bufs[1].decode('utf-8', 'replace')[-2000:], 'code': e.code,
                           'signal': e.signal, 'stdin_bytes': e.written, 'argv': e.argv}
                          for e in self.execs.values()]}

    def result_proto(self):
        if self.result is None:
            return None
        return api.GenericResult(status=self.result[0], exception=self.result[1])


def finish(s, status, exception=''):
    with CHANGED:
        if s.result is not None:
            return
        s.result = (status, exception)
        CHANGED.notify_all()
    docker('rm', '-f', s.container)
    with CHANGED:
        CHANGED.notify_all()


def expire_loop():
    while True:
        time.sleep(0.3)
        now = time.time()
        with LOCK:
            due = [s for s in SANDBOXES.values() if s.result is None and s.created_at + s.timeout_secs < now]
            for s in SANDBOXES.values():
                if any(e.p.poll() is None for e in s.execs.values()):
                    s.last_active = now
            idle = [s for s in SANDBOXES.values() if s.result is None and s not in due and
                    s.idle_timeout_secs and s.last_active + s.idle_timeout_secs < now]
        for s in due:
            finish(s, api.GenericResult.GENERIC_STATUS_TIMEOUT, 'Sandbox timed out')
        for s in idle:
            finish(s, api.GenericResult.GENERIC_STATUS_TIMEOUT, 'Sandbox idle timed out')


def wait_for(pred, timeout, ctx=None):
    end = time.time() + timeout
    with CHANGED:
        while not pred():
            left = end - time.time()
            if left <= 0 or (ctx is not None and not ctx.is_active()):
                return False
            CHANGED.wait(min(left, 0.25))
    return True


# ---------------------------------------------------------------------------------------------
# control plane

class ModalClient:
    def AuthTokenGet(self, req, ctx):
        check_api(ctx, 'AuthTokenGet', auth=False)
        exp = int(time.time()) + ARGS.auth_ttl
        tok = jwt({'exp': exp, 'sub': ARGS.token_id})
        with LOCK:
            TOKENS[tok] = exp
        return api.AuthTokenGetResponse(token=tok)

    def AppGetOrCreate(self, req, ctx):
        check_api(ctx, 'AppGetOrCreate')
        if not req.app_name:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, 'app_name is required')
        key = (req.environment_name, req.app_name)
        with LOCK:
            if key not in APPS:
                if req.object_creation_type != api.OBJECT_CREATION_TYPE_CREATE_IF_MISSING:
                    ctx.abort(grpc.StatusCode.NOT_FOUND, f"App '{req.app_name}' not found")
                APPS[key] = ident('ap')
            return api.AppGetOrCreateResponse(app_id=APPS[key])

    def EnvironmentGetOrCreate(self, req, ctx):
        check_api(ctx, 'EnvironmentGetOrCreate')
        name = req.deployment_name or 'main'
        return api.EnvironmentGetOrCreateResponse(
            environment_id='en-fake', metadata=api.EnvironmentMetadata(
                name=name, settings=api.EnvironmentSettings(image_builder_version=BUILDER_VERSION)))

    def ImageGetOrCreate(self, req, ctx):
        check_api(ctx, 'ImageGetOrCreate')
        if req.app_id not in APPS.values():
            ctx.abort(grpc.StatusCode.NOT_FOUND, f'app {req.app_id} not found')
        if req.builder_version != BUILDER_VERSION:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, f'unknown image builder version {req.builder_version!r}')
        cmds = list(req.image.dockerfile_commands)
        if len(cmds) != 1 or not cmds[0].startswith('FROM '):
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, 'the fake builds only a single FROM line')
        ref = cmds[0][5:].strip()
        iid = 'im-' + base64.b32encode(ref.encode()).decode().strip('=').lower()[:20]
        with LOCK:
            im = IMAGES.get(iid)
            if im is None:
                ok = docker('image', 'inspect', ref).returncode == 0
                im = IMAGES[iid] = {
                    'ref': ref, 'builds': 0,
                    'status': api.GenericResult.GENERIC_STATUS_SUCCESS if ok else api.GenericResult.GENERIC_STATUS_FAILURE,
                    'exception': '' if ok else
                    f"Image build for {iid} failed: manifest for {ref} not found: manifest unknown",
                    'logs': [f'Building image {iid}', f'=> Step 0: FROM {ref}'], 'done_at': time.time() + 0.5}
                return api.ImageGetOrCreateResponse(image_id=iid)   # building: join the stream
            im['builds'] += 1
            return api.ImageGetOrCreateResponse(image_id=iid, result=api.GenericResult(
                status=im['status'], exception=im['exception']))

    def ImageJoinStreaming(self, req, ctx):
        check_api(ctx, 'ImageJoinStreaming')
        with LOCK:
            im = IMAGES.get(req.image_id)
        if im is None:
            ctx.abort(grpc.StatusCode.NOT_FOUND, f'image {req.image_id} not found')
        start = int(req.last_entry_id or 0)
        for i, line in enumerate(im['logs']):
            if i + 1 > start:
                yield api.ImageJoinStreamingResponse(entry_id=str(i + 1),
                                                     task_logs=[api.TaskLogs(data=line + '\n')])
        time.sleep(max(0, im['done_at'] - time.time()))
        yield api.ImageJoinStreamingResponse(entry_id=str(len(im['logs']) + 1), eof=True, result=api.GenericResult(
            status=im['status'], exception=im['exception']))

    def SandboxCreate(self, req, ctx):
        check_api(ctx, 'SandboxCreate')
        if req.app_id not in APPS.values():
            ctx.abort(grpc.StatusCode.NOT_FOUND, f'app {req.app_id} not found')
        with LOCK:
            im = IMAGES.get(req.definition.image_id)
        if im is None or im['status'] != api.GenericResult.GENERIC_STATUS_SUCCESS:
            ctx.abort(grpc.StatusCode.FAILED_PRECONDITION, f'image {req.definition.image_id} is not built')
        if req.definition.timeout_secs > 86400:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, 'timeout_secs must be at most 86400')
        sid = ident('sb')
        try:
            s = Sbx(sid, req.app_id, req, im)
        except RuntimeError as e:
            ctx.abort(grpc.StatusCode.INTERNAL, f'cannot start the sandbox: {e}')
        with CHANGED:
            SANDBOXES[sid] = s
            TASKS[s.task_id] = s
            CHANGED.notify_all()
        return api.SandboxCreateResponse(sandbox_id=sid)

    def sandbox(self, ctx, sid):
        with LOCK:
            s = SANDBOXES.get(sid)
        if s is None:
            ctx.abort(grpc.StatusCode.NOT_FOUND, f'sandbox {sid} not found')
        return s

    def SandboxGetTunnels(self, req, ctx):
        check_api(ctx, 'SandboxGetTunnels')
        s = self.sandbox(ctx, req.sandbox_id)
        if s.result is not None:
            ctx.abort(grpc.StatusCode.FAILED_PRECONDITION, f'sandbox {s.id} has finished')
        return api.SandboxGetTunnelsResponse(tunnels=[
            api.TunnelData(host=h, port=443, container_port=p) for p, h in s.tunnels.items()])

    def SandboxGetTaskId(self, req, ctx):
        check_api(ctx, 'SandboxGetTaskId')
        s = self.sandbox(ctx, req.sandbox_id)
        if req.wait_until_ready:
            wait_for(lambda: s.result is not None or time.time() >= s.ready_at, req.timeout or 55, ctx)
        if s.result is not None:
            return api.SandboxGetTaskIdResponse(task_result=s.result_proto())
        if time.time() < s.ready_at:
            return api.SandboxGetTaskIdResponse()
        return api.SandboxGetTaskIdResponse(task_id=s.task_id)

    def TaskGetCommandRouterAccess(self, req, ctx):
        check_api(ctx, 'TaskGetCommandRouterAccess')
        with LOCK:
            s = TASKS.get(req.task_id)
        if s is None:
            ctx.abort(grpc.StatusCode.NOT_FOUND, f'task {req.task_id} not found')
        if s.result is not None:
            ctx.abort(grpc.StatusCode.FAILED_PRECONDITION, f'task {req.task_id} has finished')
        exp = int(time.time()) + ARGS.jwt_ttl
        tok = jwt({'exp': exp, 'task_id': req.task_id})
        with LOCK:
            JWTS[tok] = (req.task_id, exp)
        return api.TaskGetCommandRouterAccessResponse(jwt=tok, url=ROUTER_URL)

    def SandboxWait(self, req, ctx):
        check_api(ctx, 'SandboxWait')
        s = self.sandbox(ctx, req.sandbox_id)
        wait_for(lambda: s.result is not None, min(req.timeout, 55), ctx)
        return api.SandboxWaitResponse(result=s.result_proto())

    def SandboxTerminate(self, req, ctx):
        check_api(ctx, 'SandboxTerminate')
        s = self.sandbox(ctx, req.sandbox_id)
        old = s.result_proto()
        finish(s, api.GenericResult.GENERIC_STATUS_TERMINATED, 'Sandbox terminated')
        return api.SandboxTerminateResponse(existing_result=old)

    def SandboxList(self, req, ctx):
        check_api(ctx, 'SandboxList')
        if not req.app_id:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, 'app_id is required')
        want = {t.tag_name: t.tag_value for t in req.tags}
        with LOCK:
            rows = [s for s in SANDBOXES.values() if s.app_id == req.app_id and
                    (req.include_finished or s.result is None) and
                    all(s.tags.get(k) == v for k, v in want.items()) and
                    (not req.before_timestamp or s.created_at < req.before_timestamp)]
        rows.sort(key=lambda s: -s.created_at)
        out = []
        for s in rows[:ARGS.page_size]:
            out.append(api.SandboxInfo(
                id=s.id, created_at=s.created_at, app_id=s.app_id, image_id=s.image_id,
                timeout_secs=s.timeout_secs, regions=s.regions,
                tags=[api.SandboxTag(tag_name=k, tag_value=v) for k, v in s.tags.items()],
                task_info=api.TaskInfo(id=s.task_id, started_at=s.created_at, result=s.result_proto())))
        return api.SandboxListResponse(sandboxes=out)

    def SandboxSnapshotFs(self, req, ctx):
        check_api(ctx, 'SandboxSnapshotFs')
        s = self.sandbox(ctx, req.sandbox_id)
        if s.result is not None:
            ctx.abort(grpc.StatusCode.FAILED_PRECONDITION, f'sandbox {s.id} has finished')
        ref = f'fake-modal-snap-{PID}:{secrets.token_hex(6)}'
        r = docker('commit', s.container, ref)
        if r.returncode != 0:
            return api.SandboxSnapshotFsResponse(result=api.GenericResult(
                status=api.GenericResult.GENERIC_STATUS_FAILURE, exception=r.stderr.decode()[-300:]))
        iid = ident('im')
        with LOCK:
            SNAPSHOTS.append(ref)
            IMAGES[iid] = {'ref': ref, 'builds': 0, 'status': api.GenericResult.GENERIC_STATUS_SUCCESS,
                           'exception': '', 'logs': [], 'done_at': 0}
        return api.SandboxSnapshotFsResponse(image_id=iid, result=api.GenericResult(
            status=api.GenericResult.GENERIC_STATUS_SUCCESS))

    # ---- named Dicts (modal.Dict) and image deletion ----
    def DictGetOrCreate(self, req, ctx):
        check_api(ctx, 'DictGetOrCreate')
        if not req.deployment_name or len(req.deployment_name) > 64:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, 'Invalid Dict name')
        key = (req.environment_name or 'main', req.deployment_name)
        with LOCK:
            did = DICTS.get(key)
            if did is None:
                if req.object_creation_type != api.OBJECT_CREATION_TYPE_CREATE_IF_MISSING:
                    ctx.abort(grpc.StatusCode.NOT_FOUND, f"Dict '{req.deployment_name}' not found")
                did = DICTS[key] = ident('di')
                DICT_DATA[did] = {}
        return api.DictGetOrCreateResponse(dict_id=did)

    def dict_of(self, ctx, did):
        with LOCK:
            d = DICT_DATA.get(did)
        if d is None:
            ctx.abort(grpc.StatusCode.NOT_FOUND, f'Dict {did} not found')
        return d

    def DictUpdate(self, req, ctx):
        check_api(ctx, 'DictUpdate')
        d = self.dict_of(ctx, req.dict_id)
        created = False
        with LOCK:
            for e in req.updates:
                if req.if_not_exists and e.key in d:
                    continue
                created = created or e.key not in d
                d[e.key] = e.value
        injected(ctx, 'DictUpdate', after=True)
        return api.DictUpdateResponse(created=created)

    def DictGet(self, req, ctx):
        check_api(ctx, 'DictGet')
        d = self.dict_of(ctx, req.dict_id)
        with LOCK:
            v = d.get(req.key)
        return api.DictGetResponse(found=v is not None, value=v or b'')

    def DictPop(self, req, ctx):
        check_api(ctx, 'DictPop')
        d = self.dict_of(ctx, req.dict_id)
        with LOCK:
            v = d.pop(req.key, None)
        return api.DictPopResponse(found=v is not None, value=v or b'')

    def DictContents(self, req, ctx):
        check_api(ctx, 'DictContents')
        d = self.dict_of(ctx, req.dict_id)
        with LOCK:
            items = list(d.items())
        for k, v in items:
            yield api.DictEntry(key=k if req.keys else b'', value=v if req.values else b'')
        for n in range(FLOOD['entries']):
            yield api.DictEntry(key=b'junk-%d' % n, value=b'{}')

    def ImageDelete(self, req, ctx):
        check_api(ctx, 'ImageDelete')
        with LOCK:
            im = IMAGES.pop(req.image_id, None)
        if im is None:
            ctx.abort(grpc.StatusCode.NOT_FOUND, f"Image '{req.image_id}' not found")
        if im['ref'] in SNAPSHOTS:
            docker('rmi', '-f', im['ref'])
        return api.ImageDeleteResponse()


# ---------------------------------------------------------------------------------------------
# command router

class Router:
    def exec_of(self, ctx, s, exec_id):
        with LOCK:
            e = s.execs.get(exec_id)
        if e is None:
            ctx.abort(grpc.StatusCode.NOT_FOUND, f'exec {exec_id} not found')
        return e

    def TaskExecStart(self, req, ctx):
        s = check_router(ctx, 'TaskExecStart', req.task_id)
        if not req.exec_id or not req.command_args:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, 'exec_id and command_args are required')
        with LOCK:
            if req.exec_id in s.execs:
                return tcr.TaskExecStartResponse()   # idempotent
            s.execs[req.exec_id] = Exec(s, req)
            s.last_active = time.time()
        return tcr.TaskExecStartResponse()

    def TaskExecStdinWrite(self, req, ctx):
        s = check_router(ctx, 'TaskExecStdinWrite', req.task_id)
        e = self.exec_of(ctx, s, req.exec_id)
        bad = e.write(req.offset, req.data, req.eof)
        if bad:
            ctx.abort(grpc.StatusCode.OUT_OF_RANGE, bad)
        return tcr.TaskExecStdinWriteResponse()

    def TaskExecStdioRead(self, req, ctx):
        s = check_router(ctx, 'TaskExecStdioRead', req.task_id)
        e = self.exec_of(ctx, s, req.exec_id)
        fd, off = int(req.file_descriptor), req.offset
        while True:
            with CHANGED:
                while (len(e.bufs[fd]) <= off and not e.eof[fd] and s.result is None and ctx.is_active()):
                    CHANGED.wait(0.25)
                if s.result is not None:
                    ctx.abort(grpc.StatusCode.UNAVAILABLE, f'task {s.task_id} terminated')
                if not ctx.is_active():
                    return
                chunk = bytes(e.bufs[fd][off:off + 65536])
                if not chunk and e.eof[fd]:
                    return
            off += len(chunk)
            yield tcr.TaskExecStdioReadResponse(data=chunk)

    def TaskExecWait(self, req, ctx):
        s = check_router(ctx, 'TaskExecWait', req.task_id)
        e = self.exec_of(ctx, s, req.exec_id)
        cap = min(ARGS.wait_cap, max(0.0, (ctx.time_remaining() or 60) - 0.5))
        wait_for(lambda: s.result is not None or e.code is not None or e.signal is not None, cap, ctx)
        if s.result is not None:
            ctx.abort(grpc.StatusCode.UNAVAILABLE, f'task {s.task_id} terminated')
        if e.signal is not None:
            return tcr.TaskExecWaitResponse(signal=e.signal)
        if e.code is not None:
            return tcr.TaskExecWaitResponse(code=e.code)
        ctx.abort(grpc.StatusCode.DEADLINE_EXCEEDED, 'still running')


def generic(servicer, service, methods, module):
    handlers = {}
    for name, (kind, req_t, resp_t) in methods.items():
        fn = getattr(servicer, name)
        make = grpc.unary_unary_rpc_method_handler if kind == 'unary' else grpc.unary_stream_rpc_method_handler
        handlers[name] = make(fn, request_deserializer=getattr(module, req_t).FromString,
                              response_serializer=getattr(module, resp_t).SerializeToString)
    return grpc.method_handlers_generic_handler(service, handlers)


def api_methods():
    m = {}
    for name in ('AppGetOrCreate', 'AuthTokenGet', 'EnvironmentGetOrCreate', 'ImageGetOrCreate', 'SandboxCreate',
                 'SandboxGetTaskId', 'SandboxGetTunnels', 'SandboxList', 'SandboxSnapshotFs', 'SandboxTerminate', 'SandboxWait',
                 'TaskGetCommandRouterAccess', 'DictGetOrCreate', 'DictUpdate', 'DictGet', 'DictPop',
                 'ImageDelete'):
        m[name] = ('unary', name + 'Request', name + 'Response')
    m['ImageJoinStreaming'] = ('stream', 'ImageJoinStreamingRequest', 'ImageJoinStreamingResponse')
    m['DictContents'] = ('stream', 'DictContentsRequest', 'DictEntry')
    return m


def router_methods():
    m = {n: ('unary', n + 'Request', n + 'Response') for n in ('TaskExecStart', 'TaskExecStdinWrite', 'TaskExecWait')}
    m['TaskExecStdioRead'] = ('stream', 'TaskExecStdioReadRequest', 'TaskExecStdioReadResponse')
    return m


# ---------------------------------------------------------------------------------------------
# a TCP proxy in front of the router, to cut streams for real

class Proxy:
    def __init__(self, target):
        self.target, self.mode, self.conns = target, 'pass', set()
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(('127.0.0.1', 0))
        self.ls.listen(64)
        self.port = self.ls.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            c, _ = self.ls.accept()
            if self.mode == 'drop':
                c.close()
                continue
            try:
                u = socket.create_connection(('127.0.0.1', self.target))
            except OSError:
                c.close()
                continue
            with LOCK:
                self.conns.add((c, u))
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self.pipe, args=(a, b), daemon=True).start()

    def pipe(self, a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        a.close()

    def sever(self):
        with LOCK:
            conns, self.conns = list(self.conns), set()
        for c, u in conns:
            for s in (c, u):
                # shutdown wakes the pipe threads blocked in recv (a bare close would not)
                try:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b'\x01\x00\x00\x00\x00\x00\x00\x00')
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


PROXY = None


class Ctl(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *a):
        pass

    def reply(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def tunnel(self):
        host = (self.headers.get('Host') or '').rsplit(':', 1)[0]
        with LOCK:
            hit = [(s, p) for s in SANDBOXES.values() for p, h in s.tunnels.items() if h == host]
        if not hit:
            return False
        s, port = hit[0]
        if s.result is not None:
            self.reply(502, {'error': 'the sandbox has finished'})
            return True
        r = docker('inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', s.container)
        try:
            c = socket.create_connection((r.stdout.decode().strip(), port), timeout=10)
        except (OSError, ValueError):
            self.reply(502, {'error': f'nothing listens on port {port}'})
            return True
        n = int(self.headers.get('Content-Length') or 0)
        raw = self.rfile.read(n) if n else b''
        hdrs = ''.join(f'{k}: {v}\r\n' for k, v in self.headers.items()
                       if k.lower() not in ('connection', 'content-length', 'keep-alive'))
        c.sendall(f'{self.command} {self.path} HTTP/1.1\r\n{hdrs}Content-Length: {len(raw)}\r\n'
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
        return True

    def do_GET(self):
        if self.tunnel():
            return
        if self.path == '/state':
            with LOCK:
                return self.reply(200, {
                    'sandboxes': [s.public() for s in SANDBOXES.values()],
                    'images': {k: {'ref': v['ref'], 'builds': v['builds']} for k, v in IMAGES.items()},
                    'apps': [{'environment': k[0], 'name': k[1], 'app_id': v} for k, v in APPS.items()],
                    'dicts': {f'{k[0]}/{k[1]}': {kk.decode(errors='replace'): vv.decode(errors='replace')
                                                  for kk, vv in DICT_DATA.get(v, {}).items()}
                              for k, v in DICTS.items()},
                    'requests': REQUESTS[-2000:]})
        self.reply(404, {'error': 'no such fake endpoint'})

    def do_POST(self):
        if self.tunnel():
            return
        n = int(self.headers.get('Content-Length') or 0)
        j = json.loads(self.rfile.read(n) or b'{}')
        if self.path == '/inject':
            with LOCK:
                INJECT.append({'method': j['method'], 'code': j['code'], 'message': j.get('message'),
                               'count': j.get('count', 1), 'after': bool(j.get('after'))})
            return self.reply(200, {})
        if self.path == '/flood':
            FLOOD['entries'] = int(j['entries'])
            return self.reply(200, {})
        if self.path == '/terminate':
            with LOCK:
                s = SANDBOXES.get(j['sandbox_id'])
            if s is None:
                return self.reply(404, {'error': 'no such sandbox'})
            finish(s, api.GenericResult.GENERIC_STATUS_TERMINATED, 'Sandbox terminated from the dashboard')
            return self.reply(200, {})
        if self.path == '/tunnel_host':   # Modal names another host for a port's tunnel
            with LOCK:
                s = SANDBOXES.get(j['sandbox_id'])
                if s is not None:
                    s.tunnels[j['port']] = j['host']
            return self.reply(200 if s is not None else 404, {})
        if self.path == '/proxy':
            mode = j['mode']
            PROXY.mode = 'drop' if mode == 'drop' else 'pass'
            if mode in ('cut', 'drop'):
                PROXY.sever()
            return self.reply(200, {})
        if self.path == '/clear':
            with LOCK:
                INJECT.clear()
                REQUESTS.clear()
            FLOOD['entries'] = 0
            PROXY.mode = 'pass'
            return self.reply(200, {})
        self.reply(404, {'error': 'no such fake endpoint'})


def cleanup(*_):
    r = docker('ps', '-aq', '--filter', f'label={LABEL}')
    ids = r.stdout.decode().split()
    if ids:
        docker('rm', '-f', *ids)
    if SNAPSHOTS:
        docker('rmi', '-f', *SNAPSHOTS)
    if STUBS:
        shutil.rmtree(STUBS, ignore_errors=True)
    os._exit(0)


def main():
    global ARGS, ROUTER_URL, PROXY
    ap = argparse.ArgumentParser()
    ap.add_argument('--token-id', required=True)
    ap.add_argument('--token-secret', required=True)
    ap.add_argument('--auth-ttl', type=int, default=1200, help='seconds an x-modal-auth-token lives')
    ap.add_argument('--jwt-ttl', type=int, default=1200, help='seconds a command router JWT lives')
    ap.add_argument('--wait-cap', type=float, default=5.0, help='TaskExecWait answers DEADLINE_EXCEEDED after this')
    ap.add_argument('--page-size', type=int, default=3, help='sandboxes per SandboxList page')
    ARGS = ap.parse_args()
    signal.signal(signal.SIGTERM, cleanup)
    signal.signal(signal.SIGINT, cleanup)
    generate_stubs()
    api_srv = grpc.server(futures.ThreadPoolExecutor(max_workers=64))
    api_srv.add_generic_rpc_handlers((generic(ModalClient(), 'modal.client.ModalClient', api_methods(), api),))
    api_port = api_srv.add_insecure_port('127.0.0.1:0')
    router_srv = grpc.server(futures.ThreadPoolExecutor(max_workers=64))
    router_srv.add_generic_rpc_handlers((generic(Router(), 'modal.task_command_router.TaskCommandRouter',
                                                 router_methods(), tcr),))
    router_port = router_srv.add_insecure_port('127.0.0.1:0')
    PROXY = Proxy(router_port)
    ROUTER_URL = f'http://127.0.0.1:{PROXY.port}'
    api_srv.start()
    router_srv.start()
    ctl = ThreadingHTTPServer(('127.0.0.1', 0), Ctl)
    ctl.daemon_threads = True
    threading.Thread(target=expire_loop, daemon=True).start()
    print(f'PORTS {api_port} {PROXY.port} {ctl.server_address[1]}', flush=True)
    try:
        ctl.serve_forever()
    finally:
        cleanup()


if __name__ == '__main__':
    main()
