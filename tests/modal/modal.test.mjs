// The modal backend against the local fake of Modal's gRPC API (fake_modal.py: control plane and
// command router over h2c, each sandbox a real Docker container), driven through the official MCP
// SDK client like a real host: the reference's Modal acceptance cases, exec semantics over the
// router's streams, tags and resources, permanent computers found again after a restart, temporary
// ones terminated, restart keeping files, and every failure injected: bad tokens, an image that
// cannot be built, a sandbox terminated or expired mid-command, streams cut short, error statuses;
// a cancelled call whose processes are killed (issue 16).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  startServer, cid, assertReplyShape, assertToolError, textOf, sleep, TIMEOUT_MARKER, LIMIT_MARKER,
  assertProviderError, CREATE_FAILED, EXEC_FAILED, waitFor, TOOL, docker, containerProcesses,
} from '../integration/lib.mjs';
import { startPrincipalServer, assertPermanentIsPrincipals } from '../integration/principals_lib.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PY = process.env.MODAL_FAKE_PYTHON || 'python3';
const RND = Math.random().toString(16).slice(2);
const TOKEN_ID = `ak-fake${RND}`;
const TOKEN_SECRET = `as-fake${RND}`;
const TMP = mkdtempSync(path.join(os.tmpdir(), 'msc-modal-'));
let fake;
let api;
let ctl;

function startFake() {
  return new Promise((resolve, reject) => {
    const p = spawn(PY, [path.join(HERE, 'fake_modal.py'), '--token-id', TOKEN_ID, '--token-secret', TOKEN_SECRET],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (c) => {
      out += c;
      const m = /PORTS (\d+) (\d+) (\d+)/.exec(out);
      if (m) resolve({ proc: p, api: `http://127.0.0.1:${m[1]}`, ctl: `http://127.0.0.1:${m[3]}` });
    });
    p.on('exit', (code) => reject(new Error(`fake_modal.py exited ${code}`)));
  });
}

async function fakeCtl(method, p, body) {
  const r = await fetch(ctl + p, {
    method, headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.equal(r.status, 200, `fake ${p}: ${r.status}`);
  return r.json();
}

const state = () => fakeCtl('GET', '/state');
const inject = (method, code, message, count = 1) => fakeCtl('POST', '/inject', { method, code, message, count });
const clearFaults = () => fakeCtl('POST', '/clear', {});
/** Every sandbox of computer `id`, newest first. */
const sandboxesOf = async (id) => (await state()).sandboxes
  .filter((s) => s.tags['kilntainers-computer-id'] === id).sort((a, b) => b.created_at - a.created_at);
const liveOf = async (id) => (await sandboxesOf(id)).find((s) => s.status === null);

function modal(flags = [], env = {}) {
  return startServer(['--backend', 'modal', ...flags], {
    env: {
      MODAL_SERVER_URL: api, MODAL_TOKEN_ID: TOKEN_ID, MODAL_TOKEN_SECRET: TOKEN_SECRET,
      MODAL_CONFIG_PATH: path.join(TMP, 'absent.toml'), MODAL_PROFILE: '', MODAL_ENVIRONMENT: '',
      ...env,
    },
  });
}

before(async () => { ({ proc: fake, api, ctl } = await startFake()); });

after(async () => {
  fake?.kill('SIGTERM');
  await new Promise((r) => (fake.exitCode !== null ? r() : fake.once('exit', r)));
  rmSync(TMP, { recursive: true, force: true });
});

describe('modal backend', () => {
  it('starts without --tool-instruction-override and describes the sandbox for any image', async () => {
    const s = await modal();
    try {
      const d = (await s.client.listTools()).tools[0].description;
      for (const w of ['Modal', 'bash', '120', 'Debian']) assert.ok(d.includes(w), `description has ${w}: ${d}`);
    } finally { await s.close(); }
    const s2 = await modal(['--image', 'alpine:3', '--shell', '/bin/sh', '--timeout', '30']);
    try {
      const d = (await s2.client.listTools()).tools[0].description;
      for (const w of ['Modal', 'alpine:3', 'sh', '30']) assert.ok(d.includes(w), `description has ${w}: ${d}`);
    } finally { await s2.close(); }
  });

  it('runs commands: echo, stderr, args, stdin, cwd, exit codes, signals, timeout 124, output limit', async () => {
    const s = await modal(['--output-limit', '1000', '--modal-cpu', '0.5', '--modal-memory', '256', '--gpu', 'a10g:2',
      '--region', 'us-east', '--sandbox-timeout', '900']);
    try {
      const id = cid('exec');
      const base = { computer_id: id };
      let r = assertReplyShape(await s.call({ ...base, command: 'echo hello world' }));
      assert.deepEqual([r.stdout, r.stderr, r.exit_code, r.computer_id, r.temporary], ['hello world\n', '', 0, id, true]);
      const sb = await liveOf(id);
      assert.deepEqual(sb.tags, { kilntainers: 'true', 'kilntainers-computer-id': id, 'kilntainers-temporary': 'true',
        'kilntainers-image': 'debian:bookworm-slim' });
      assert.deepEqual([sb.milli_cpu, sb.memory_mb, sb.gpu, sb.gpu_count, sb.regions, sb.timeout_secs, sb.network],
        [500, 256, 'A10G', 2, ['us-east'], 900, 'OPEN']);
      assert.equal(sb.image_ref, 'debian:bookworm-slim', 'FROM debian:bookworm-slim');
      const reqs = (await state()).requests;
      assert.ok(reqs.every((q) => q.client_type === '9' || q.authorization === 'Bearer'), 'client type on every call');
      assert.ok(reqs.filter((q) => q.method !== 'AuthTokenGet' && q.client_type).every((q) => q.auth_token),
        'x-modal-auth-token on every control-plane call but AuthTokenGet');
      assert.ok(!s.stderr().includes(TOKEN_SECRET), 'the secret is never logged');
      r = assertReplyShape(await s.call({ ...base, command: 'echo hello | tr a-z A-Z; echo err >&2; exit 3' }));
      assert.deepEqual([r.stdout, r.stderr, r.exit_code], ['HELLO\n', 'err\n', 3]);
      r = assertReplyShape(await s.call({ ...base, args: ['echo', 'hello | tr a-z A-Z'] }));
      assert.equal(r.stdout, 'hello | tr a-z A-Z\n');
      r = assertReplyShape(await s.call({ ...base, command: 'pwd && cat', working_directory: '/etc', stdin: 'Hello\nWorld\t!' }));
      assert.equal(r.stdout, '/etc\nHello\nWorld\t!');
      r = assertReplyShape(await s.call({ ...base, command: 'cat > /tmp/e2e_content', stdin: "it's \"quoted\" $HOME" }));
      r = assertReplyShape(await s.call({ ...base, command: 'cat /tmp/e2e_content; export X=1; cd /tmp' }));
      assert.equal(r.stdout, "it's \"quoted\" $HOME");
      r = assertReplyShape(await s.call({ ...base, command: 'echo "[$X]"; pwd' }));
      assert.equal(r.stdout, '[]\n/\n', 'export and cd do not persist');
      r = assertReplyShape(await s.call({ ...base, command: 'ls /nonexistent' }));
      assert.notEqual(r.exit_code, 0);
      assert.match(r.stderr, /No such file/);
      r = assertReplyShape(await s.call({ ...base, command: 'false' }));
      assert.equal(r.exit_code, 1);
      r = assertReplyShape(await s.call({ ...base, command: 'kill -9 $$' }));
      assert.equal(r.exit_code, 137, 'killed by a signal: 128 + 9');
      const big = 'x'.repeat(300000);
      r = assertReplyShape(await s.call({ ...base, command: 'wc -c', stdin: big }));
      assert.equal(r.stdout.trim(), '300000', 'stdin of 300 kB');
      r = assertReplyShape(await s.call({ ...base, command: 'sleep 7; echo done' }));
      assert.equal(r.stdout, 'done\n', 'a command longer than one TaskExecWait');
      const t0 = Date.now();
      r = assertReplyShape(await s.call({ ...base, command: 'sleep 300 & echo started; sleep 100', timeout: 2 }));
      assert.deepEqual([r.stdout, r.stderr, r.exit_code], ['', TIMEOUT_MARKER(2), 124]);
      assert.ok(Date.now() - t0 < 15000, 'timeout honoured');
      r = assertReplyShape(await s.call({ ...base, command: 'cat /proc/[0-9]*/cmdline | tr "\\0" " "' }));
      assert.ok(!/sleep (300|100)/.test(r.stdout), `leftover processes: ${r.stdout}`);
      r = assertReplyShape(await s.call({ ...base, command: 'head -c 2048 /dev/zero | tr "\\0" a' }));
      assert.deepEqual([r.stdout, r.stderr, r.exit_code], ['', LIMIT_MARKER(1000), 1]);
      r = assertReplyShape(await s.call({ ...base, command: 'head -c 1000 /dev/zero | tr "\\0" a' }));
      assert.equal(r.stdout.length, 1000, 'exactly at the limit passes');
      r = assertReplyShape(await s.call({ ...base, command: 'yes', timeout: 30 }));
      assert.equal(r.stderr, LIMIT_MARKER(1000));
      r = assertReplyShape(await s.call({ ...base, command: 'ps -e 2>/dev/null; cat /proc/[0-9]*/cmdline | tr "\\0" " "' }));
      assert.ok(!/(^| )yes /.test(r.stdout), `yes was killed: ${r.stdout}`);
      const five = await Promise.all([1, 2, 3, 4, 5].map((i) => s.call({ ...base, command: `echo ${i}` })));
      assert.deepEqual(five.map((x) => assertReplyShape(x).stdout), ['1\n', '2\n', '3\n', '4\n', '5\n']);
    } finally { await s.close(); }
  });

  it('--no-network blocks the network; --shell /bin/sh works', async () => {
    const s = await modal(['--no-network', '--shell', '/bin/sh']);
    try {
      const id = cid('nonet');
      const r = assertReplyShape(await s.call({ computer_id: id, command: 'ls /sys/class/net; echo $0' }));
      assert.equal(r.stdout, 'lo\n/bin/sh\n');
      const sb = await liveOf(id);
      assert.deepEqual([sb.network, sb.block_network], ['BLOCKED', true]);
    } finally { await s.close(); }
  });

  it('--network-allow maps onto Modal\'s egress rules: blocked but for those domains', async () => {
    const s = await modal(['--network-allow', 'api.example,*.PyPI.example']);
    try {
      const id = cid('allow');
      assertReplyShape(await s.call({ computer_id: id, command: 'true' }));
      const sb = await liveOf(id);
      assert.deepEqual([sb.network, sb.block_network, sb.allowed_domains],
        ['BLOCKED', false, ['api.example', '*.pypi.example']]);
    } finally { await s.close(); }
  });

  it('terminates temporary sandboxes at session end; finds permanent ones after a restart; restart keeps files', async () => {
    const tmp = cid('tmp');
    const perm = cid('perm');
    const env = { ENABLE_LIFECYCLE_TOOLS: 'true' };
    const s = await modal([], env);
    try {
      assertReplyShape(await s.call({ computer_id: tmp, command: 'true' }));
      assertReplyShape(await s.call({ computer_id: perm, temporary: false, command: 'echo kept > /root/f' }));
      assert.equal((await liveOf(perm)).tags['kilntainers-temporary'], 'false');
    } finally { await s.eof(20000); }
    assert.equal(await liveOf(tmp), undefined, 'temporary terminated');
    assert.equal((await sandboxesOf(tmp))[0].status, 'GENERIC_STATUS_TERMINATED');
    const kept = await liveOf(perm);
    assert.ok(kept, 'permanent kept running');
    const s2 = await modal([], env);
    try {
      const list = (await s2.call({}, { name: 'computer_list' })).structuredContent;
      const row = list.computers.find((c) => c.computer_id === perm);
      assert.ok(row, `listed after a restart: ${JSON.stringify(list)}`);
      assert.deepEqual([row.backend, row.temporary, row.sandbox_id, row.state, row.image],
        ['modal', false, kept.sandbox_id, 'running', 'debian:bookworm-slim']);
      let r = assertReplyShape(await s2.call({ computer_id: perm, temporary: false, command: 'cat /root/f' }));
      assert.equal(r.stdout, 'kept\n');
      assert.equal((await liveOf(perm)).sandbox_id, kept.sandbox_id, 'the same sandbox');
      const rs = await s2.call({ computer_id: perm }, { name: 'computer_restart' });
      assert.ok(!rs.isError, textOf(rs));
      const after = await liveOf(perm);
      assert.notEqual(after.sandbox_id, kept.sandbox_id, 'a new sandbox');
      assert.equal(after.tags['kilntainers-temporary'], 'false');
      r = assertReplyShape(await s2.call({ computer_id: perm, temporary: false, command: 'cat /root/f' }));
      assert.equal(r.stdout, 'kept\n', 'restart keeps the filesystem (snapshot)');
      const rz = await s2.call({ computer_id: perm }, { name: 'computer_factory_reset' });
      assert.ok(!rz.isError, textOf(rz));
      r = assertReplyShape(await s2.call({ computer_id: perm, temporary: false, command: 'cat /root/f' }));
      assert.notEqual(r.exit_code, 0, 'factory reset starts from the image');
      const del = await s2.call({ computer_id: perm }, { name: 'computer_delete' });
      assert.ok(!del.isError, textOf(del));
    } finally { await s2.close(); }
    assert.equal(await liveOf(perm), undefined, 'deleted');
  });

  it('credentials: wrong tokens, none, flags and a ~/.modal.toml profile', async () => {
    let s = await modal([], { MODAL_TOKEN_SECRET: 'as-wrong' });
    try {
      const text = await assertProviderError(s, await s.call({ command: 'true' }), CREATE_FAILED, 'Modal authentication failed');
      assert.ok(!text.includes('as-wrong'));
    } finally { await s.close(); }
    s = await modal([], { MODAL_TOKEN_ID: '', MODAL_TOKEN_SECRET: '' });
    try {
      await assertProviderError(s, await s.call({ command: 'true' }), CREATE_FAILED, 'MODAL_TOKEN_ID');
    } finally { await s.close(); }
    s = await modal([], { MODAL_SERVER_URL: 'http://127.0.0.1:1' });
    try {
      await assertProviderError(s, await s.call({ command: 'true' }), CREATE_FAILED, 'Cannot connect to Modal');
    } finally { await s.close(); }
    s = await modal(['--modal-token-id', TOKEN_ID, '--modal-token-secret', TOKEN_SECRET],
      { MODAL_TOKEN_ID: '', MODAL_TOKEN_SECRET: '' });
    try {
      assert.equal(assertReplyShape(await s.call({ computer_id: cid('flags'), command: 'echo f' })).stdout, 'f\n');
      assert.ok(s.stderr().includes('kilntainers: warning: --modal-token-secret is visible to other users in ps; '
        + 'use MODAL_TOKEN_SECRET or --modal-token-secret-file'), s.stderr());
      assert.ok(!s.stderr().includes(TOKEN_SECRET), 'the secret is never logged');
    } finally { await s.close(); }
    const secretFile = path.join(TMP, 'modal-secret');
    writeFileSync(secretFile, `${TOKEN_SECRET}\n`, { mode: 0o600 });
    s = await modal(['--modal-token-id', TOKEN_ID, '--modal-token-secret-file', secretFile],
      { MODAL_TOKEN_ID: '', MODAL_TOKEN_SECRET: '', SERVER_ONLY_CANARY: 'canary-modal-env-8f0a' });
    try {
      const r = assertReplyShape(await s.call({ computer_id: cid('secretfile'), command: 'env' }));
      assert.equal(r.exit_code, 0);
      assert.ok(!r.stdout.includes(TOKEN_SECRET), `the secret is not in the sandbox's env: ${r.stdout}`);
      assert.ok(!r.stdout.includes('canary-modal-env-8f0a'), 'nor the server environment');
      assert.ok(!s.stderr().includes(TOKEN_SECRET), 'the secret is never logged');
      assert.ok(!s.stderr().includes('visible to other users'), 'a file is not in ps');
    } finally { await s.close(); }
    const toml = path.join(TMP, 'modal.toml');
    writeFileSync(toml, `# written by modal token new\n[other]\ntoken_id = "ak-nope"\ntoken_secret = "as-nope"\n\n`
      + `[work]\ntoken_id = "${TOKEN_ID}"\ntoken_secret = '${TOKEN_SECRET}'\nserver_url = "${api}"\nactive = true\n`);
    s = await modal([], { MODAL_TOKEN_ID: '', MODAL_TOKEN_SECRET: '', MODAL_SERVER_URL: '', MODAL_CONFIG_PATH: toml });
    try {
      assert.equal(assertReplyShape(await s.call({ computer_id: cid('toml'), command: 'echo t' })).stdout, 't\n');
    } finally { await s.close(); }
  });

  it('an image that cannot be built is a clear error with the exception, and makes no sandbox', async () => {
    const before = (await state()).sandboxes.length;
    const s = await modal(['--image', 'fake-modal-missing/none:latest']);
    try {
      assertToolError(await s.call({ computer_id: cid('noimg'), command: 'true' }),
        'Failed to create Modal sandbox', 'fake-modal-missing/none:latest', 'manifest unknown');
    } finally { await s.close(); }
    assert.equal((await state()).sandboxes.length, before);
  });

  it('a failed create terminates the sandbox it made', async () => {
    const s = await modal(['--shell', '/bin/nonexistent']);
    const id = cid('noshell');
    try {
      await assertProviderError(s, await s.call({ computer_id: id, command: 'true' }), CREATE_FAILED,
        'readiness check failed', '--shell /bin/sh');
    } finally { await s.close(); }
    let all = await sandboxesOf(id);
    assert.ok(all.length >= 1 && all.every((x) => x.status === 'GENERIC_STATUS_TERMINATED'), JSON.stringify(all));
    await inject('TaskGetCommandRouterAccess', 'FAILED_PRECONDITION', 'router unavailable for this task', 1);
    const id2 = cid('norouter');
    const s2 = await modal();
    try {
      // Invalid argument (what Modal's FAILED_PRECONDITION maps to) is shown, not Modal's words.
      assert.equal(assertToolError(await s2.call({ computer_id: id2, command: 'true' })),
        'Failed to create Modal sandbox: Modal TaskGetCommandRouterAccess: FAILED_PRECONDITION');
      assert.ok(await waitFor(() => s2.stderr().includes('router unavailable for this task'),
        { timeoutMs: 5000, intervalMs: 100 }));
    } finally { await s2.close(); await clearFaults(); }
    all = await sandboxesOf(id2);
    assert.ok(all.length === 1 && all[0].status === 'GENERIC_STATUS_TERMINATED', JSON.stringify(all));
  });

  it('a sandbox terminated or expired mid-command is reported as died, and the next call starts again', async () => {
    const s = await modal(['--sandbox-timeout', '8']);
    try {
      const id = cid('died');
      assertReplyShape(await s.call({ computer_id: id, command: 'true' }));
      let sb = await liveOf(id);
      let t0 = Date.now();
      let pending = s.call({ computer_id: id, command: 'sleep 60', timeout: 90 });
      await sleep(1500);
      await fakeCtl('POST', '/terminate', { sandbox_id: sb.sandbox_id });
      assertToolError(await pending, 'died', sb.sandbox_id, 'terminated');
      assert.ok(Date.now() - t0 < 20000, 'no hang');
      const r = assertReplyShape(await s.call({ computer_id: id, command: 'echo back' }));
      assert.equal(r.stdout, 'back\n');
      sb = await liveOf(id);
      t0 = Date.now();
      pending = s.call({ computer_id: id, command: 'sleep 60', timeout: 90 });
      assertToolError(await pending, 'died', 'lifetime timeout');
      assert.ok(Date.now() - t0 < 20000, 'no hang');
    } finally { await s.close(); }
  });

  it('a cancelled call (notifications/cancelled) kills every process of it within a second, no response; the sandbox and its other commands go on', async (t) => {
    const s = await modal(['--timeout', '60']);
    try {
      const id = cid('cancel');
      assertReplyShape(await s.call({ computer_id: id, command: 'echo ready > /tmp/before' }));
      const sb = await liveOf(id);
      const ctr = sb.container;
      const procs = async () => (await containerProcesses(ctr)).filter((l) => /sleep 4[12][0-9]/.test(l));
      const seen = [];
      const orig = s.transport.onmessage;
      s.transport.onmessage = (m, extra) => { seen.push(m); orig?.(m, extra); };
      const other = s.call({ computer_id: id, command: 'sleep 3; echo other done' });
      // A shell, a child in its group and a grandchild in a session of its own.
      const ac = new AbortController();
      const p = s.client.callTool({ name: TOOL, arguments: { computer_id: id,
        command: '(setsid sleep 427 &) ; sleep 428 & sleep 429; echo done' } }, undefined,
      { signal: ac.signal, timeout: 120000 }).then((r) => ({ r }), (e) => ({ e }));
      let ps = [];
      assert.ok(await waitFor(async () => (ps = await procs()) && ['427', '428', '429']
        .every((n) => ps.some((l) => l === `sleep ${n}`)), { timeoutMs: 10000 }), 'the command started');
      const watch = 'while grep -qs "sleep.4[12][0-9]" /proc/[0-9]*/cmdline; do sleep 0.01; done; date +%s%3N > /tmp/gone';
      assert.equal((await docker(['exec', '-d', ctr, 'sh', '-c', watch])).code, 0);
      await sleep(300);
      const t0 = Date.now();
      ac.abort('test cancels');
      assert.ok((await p).e, 'the SDK call rejects with the abort');
      assert.ok(await waitFor(async () => (await procs()).length === 0, { timeoutMs: 10000, intervalMs: 100 }),
        `processes left: ${(await procs()).join(' | ')}`);
      let at = null;
      await waitFor(async () => {
        const c = await docker(['exec', ctr, 'cat', '/tmp/gone']);
        at = c.code === 0 && c.stdout.trim() ? Number(c.stdout.trim()) : null;
        return at;
      }, { timeoutMs: 10000, intervalMs: 100 });
      t.diagnostic(`killed ${at - t0} ms after the cancel`);
      assert.ok(at - t0 < 1000, `killed ${at - t0} ms after the cancel`);
      assert.equal(assertReplyShape(await other).stdout, 'other done\n');
      await sleep(1500);
      const ids = seen.filter((m) => m.id !== undefined).map((m) => m.id);
      assert.equal(ids.length, 1, `one response only (the other command's): ${JSON.stringify(seen)}`);
      assert.equal((await liveOf(id)).sandbox_id, sb.sandbox_id);
      assert.equal(assertReplyShape(await s.call({ computer_id: id, command: 'cat /tmp/before' })).stdout, 'ready\n');
      assert.ok(!s.stderr().includes('cannot sweep'), 'the sweep ran');
    } finally { await s.close(); }
  });

  it('streams cut short: resumed from the offset once, a clear error when the router stays away', async () => {
    const s = await modal();
    try {
      const id = cid('cut');
      assertReplyShape(await s.call({ computer_id: id, command: 'true' }));
      let pending = s.call({ computer_id: id, command: 'echo a; sleep 2; echo b >&2; sleep 1; echo c' });
      await sleep(1000);
      await fakeCtl('POST', '/proxy', { mode: 'cut' });
      let r = assertReplyShape(await pending);
      assert.deepEqual([r.stdout, r.stderr, r.exit_code], ['a\nc\n', 'b\n', 0], 'nothing lost or repeated');
      const t0 = Date.now();
      pending = s.call({ computer_id: id, command: 'echo a; sleep 30' });
      await sleep(1000);
      await fakeCtl('POST', '/proxy', { mode: 'drop' });
      await assertProviderError(s, await pending, EXEC_FAILED, 'Modal command router');
      assert.ok(Date.now() - t0 < 40000, `no hang (${Date.now() - t0} ms)`);
      await fakeCtl('POST', '/proxy', { mode: 'pass' });
      r = assertReplyShape(await s.call({ computer_id: id, command: 'echo again' }));
      assert.equal(r.stdout, 'again\n');
    } finally { await s.close(); await clearFaults(); }
  });

  it('gRPC error statuses: transient ones retried, others a clear error', async () => {
    const s = await modal();
    try {
      const id = cid('status');
      await inject('SandboxList', 'UNAVAILABLE', 'try again', 2);
      assertReplyShape(await s.call({ computer_id: id, command: 'true' }));
      await inject('TaskExecStart', 'INVALID_ARGUMENT', 'command_args too long', 1);
      // Invalid argument is the agent's to read, without Modal's words (those go to stderr).
      assert.equal(assertToolError(await s.call({ computer_id: id, command: 'true' })),
        'Modal command router TaskExecStart: INVALID_ARGUMENT');
      assert.ok(await waitFor(() => s.stderr().includes('command_args too long'), { timeoutMs: 5000, intervalMs: 100 }));
      await inject('TaskExecWait', 'INTERNAL', 'router hiccup', 2);
      assert.equal(assertReplyShape(await s.call({ computer_id: id, command: 'echo w' })).stdout, 'w\n');
      await inject('TaskExecStdioRead', 'PERMISSION_DENIED', 'not yours', 1);
      await assertProviderError(s, await s.call({ computer_id: id, command: 'echo x' }), EXEC_FAILED, 'not yours');
      await inject('SandboxCreate', 'RESOURCE_EXHAUSTED', 'no capacity in us-east', 1);
      await assertProviderError(s, await s.call({ computer_id: cid('nocap'), command: 'true' }), CREATE_FAILED,
        'no capacity in us-east');
      assert.equal((await sandboxesOf(cid('nocap'))).length, 0, 'not retried: no second sandbox');
    } finally { await s.close(); await clearFaults(); }
  });

  it('leases: a temporary sandbox outlives idle time while held, and ends one lease after its server is killed, a command still running or not', async () => {
    const s = await modal(['--lease-timeout', '3']);
    const busy = cid('lease-busy');
    const idle = cid('lease-idle');
    const perm = cid('lease-perm');
    try {
      assertReplyShape(await s.call({ computer_id: idle, command: 'echo x > /tmp/f' }));
      assertReplyShape(await s.call({ computer_id: busy, command: 'true' }));
      assertReplyShape(await s.call({ computer_id: perm, temporary: false, command: 'echo kept > /root/kept' }));
      assert.equal((await liveOf(idle)).idle_timeout_secs, 3, 'a temporary gets the lease as its idle timeout');
      assert.equal((await liveOf(perm)).idle_timeout_secs, 0, 'a permanent one none');
      const entry = (await liveOf(busy)).entrypoint;
      assert.deepEqual([entry[0], entry[1], entry[3], entry[4]], ['/bin/sh', '-c', 'msc-lease', '3'],
        'a temporary runs the lease watch loop');
      assert.deepEqual((await liveOf(perm)).entrypoint, [], 'a permanent one idles');
      await new Promise((res) => setTimeout(res, 5000)); // idle past the lease
      const r = assertReplyShape(await s.call({ computer_id: idle, command: 'cat /tmp/f' }));
      assert.equal(r.stdout, 'x\n');
      // Running far past the lease: it no longer keeps its orphan (the watch loop ends the sandbox).
      const running = s.call({ computer_id: busy, command: 'sleep 60', timeout: 90 }, { timeoutMs: 120000 })
        .catch(() => null);
      await new Promise((res) => setTimeout(res, 500));
      const since = Date.now();
      s.proc.kill('SIGKILL');
      for (;;) {
        const [a, b] = [await liveOf(busy), await liveOf(idle)];
        if (!a && !b) break;
        assert.ok(Date.now() - since < 13000, `${a ? 'the busy one' : 'the idle one'} within the lease plus 10 s`);
        await new Promise((res) => setTimeout(res, 250));
      }
      await running;
      assert.ok(await liveOf(perm), 'the permanent sandbox is kept');
    } finally { await s.close(); }
    const s2 = await modal([], { ENABLE_LIFECYCLE_TOOLS: 'true' });
    try {
      const r = assertReplyShape(await s2.call({ computer_id: perm, temporary: false, command: 'cat /root/kept' }));
      assert.equal(r.stdout, 'kept\n');
      const del = await s2.call({ computer_id: perm }, { name: 'computer_delete' });
      assert.ok(!del.isError, textOf(del));
    } finally { await s2.close(); }
  });
});

// Issue 27: a permanent sandbox records its principal (a hash of the name) in a tag, carried to
// the sandbox a restart or reset makes, so a restarted server with --tokens-file does not hand
// alice's to bob. (It recorded none: bob named it and read alice's file.)
describe('modal: a permanent computer is its principal\'s, also after a restart', () => {
  it('bob naming alice\'s permanent sandbox is refused and does not see it', async () => {
    const id = cid('alice-box');
    await assertPermanentIsPrincipals(() => startPrincipalServer(['--backend', 'modal'], {
      MODAL_SERVER_URL: api, MODAL_TOKEN_ID: TOKEN_ID, MODAL_TOKEN_SECRET: TOKEN_SECRET,
      MODAL_CONFIG_PATH: path.join(TMP, 'absent.toml'), MODAL_PROFILE: '', MODAL_ENVIRONMENT: '',
    }), id, async (x) => (await liveOf(x))?.tags?.['kilntainers-principal']);
  });
});
