// The e2b backend against the local fake of E2B (fake_e2b.py), whose sandboxes are real Docker
// containers: exec semantics over the Connect process stream, temporary and permanent computers
// (killed / paused and resumed), metadata lookup after a restart, credentials, and a sandbox
// killed behind the server's back, and a cancelled call (issue 16) whose processes are killed.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  startServer, cid, assertReplyShape, assertToolError, TIMEOUT_MARKER, LIMIT_MARKER, run, MSC_BIN, waitFor,
  TOOL, docker, containerProcesses, sleep,
} from '../integration/lib.mjs';
import { startPrincipalServer, assertPermanentIsPrincipals } from '../integration/principals_lib.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
// The reference's generic text for a provider's failure to create (its later revision).
const CREATE_FAILED = 'Sandbox could not be created or attached';
const KEY = 'e2b_fake' + Math.random().toString(16).slice(2);
let fake;
let api;

function startFake() {
  return new Promise((resolve, reject) => {
    const p = spawn('python3', [path.join(HERE, 'fake_e2b.py'), '--key', KEY],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (c) => {
      out += c;
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve({ proc: p, url: `http://127.0.0.1:${m[1]}` });
    });
    p.on('exit', (code) => reject(new Error(`fake_e2b.py exited ${code}`)));
  });
}

async function fakeApi(method, p, body) {
  const r = await fetch(api + p, {
    method,
    headers: { 'X-API-Key': KEY, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

const sandboxOf = async (id) => (await fakeApi('GET', '/_fake/state')).body.sandboxes
  .find((s) => s.metadata?.['kilntainers-computer-id'] === id);

function e2b(flags = [], extra = {}) {
  return startServer(['--backend', 'e2b', ...flags], {
    env: { E2B_API_KEY: KEY, E2B_API_URL: api, E2B_SANDBOX_URL: api, E2B_DOMAIN: '', ...extra },
  });
}

before(async () => { ({ proc: fake, url: api } = await startFake()); });

after(async () => {
  fake?.kill('SIGTERM');
  await new Promise((r) => (fake.exitCode !== null ? r() : fake.once('exit', r)));
});

describe('e2b backend', () => {
  it('runs commands: echo, stdin, cwd, args, exit codes, timeout 124, output limit', async () => {
    const s = await e2b(['--output-limit', '1000', '--e2b-metadata', 'team=qa', '--e2b-env', 'GREETING=hi']);
    try {
      const id = cid('exec');
      const base = { computer_id: id };
      let r = assertReplyShape(await s.call({ ...base, command: 'echo hello world' }));
      assert.deepEqual([r.stdout, r.stderr, r.exit_code], ['hello world\n', '', 0]);
      assert.ok(!s.stderr().includes(KEY), 'the key is never logged');
      const sb = await sandboxOf(id);
      assert.equal(sb.metadata.team, 'qa');
      assert.equal(sb.metadata.kilntainers, 'true');
      assert.equal(sb.metadata['kilntainers-temporary'], 'true');
      r = assertReplyShape(await s.call({ ...base, command: 'echo $GREETING; echo hello | tr a-z A-Z; echo err >&2; exit 3' }));
      assert.deepEqual([r.stdout, r.stderr, r.exit_code], ['hi\nHELLO\n', 'err\n', 3]);
      r = assertReplyShape(await s.call({ ...base, args: ['echo', 'hello | tr a-z A-Z'] }));
      assert.equal(r.stdout, 'hello | tr a-z A-Z\n');
      r = assertReplyShape(await s.call({ ...base, command: 'pwd && cat', working_directory: '/etc', stdin: 'Hello\nWorld\t!' }));
      assert.equal(r.stdout, '/etc\nHello\nWorld\t!');
      r = assertReplyShape(await s.call({ ...base, command: 'cat > /tmp/e2e_content', stdin: "it's \"quoted\" $HOME" }));
      r = assertReplyShape(await s.call({ ...base, command: 'cat /tmp/e2e_content' }));
      assert.equal(r.stdout, "it's \"quoted\" $HOME");
      r = assertReplyShape(await s.call({ ...base, command: 'ls /nonexistent' }));
      assert.notEqual(r.exit_code, 0);
      assert.match(r.stderr, /No such file/);
      const t0 = Date.now();
      r = assertReplyShape(await s.call({ ...base, command: 'sleep 300 & echo started; sleep 100', timeout: 2 }));
      assert.equal(r.exit_code, 124);
      assert.equal(r.stderr, TIMEOUT_MARKER(2));
      assert.ok(Date.now() - t0 < 15000);
      r = assertReplyShape(await s.call({ ...base, command: 'cat /proc/[0-9]*/cmdline | tr "\\0" " "' }));
      assert.ok(!/sleep (300|100)/.test(r.stdout), `leftover processes: ${r.stdout}`);
      r = assertReplyShape(await s.call({ ...base, command: 'head -c 2048 /dev/zero | tr "\\0" a' }));
      assert.equal(r.exit_code, 1);
      assert.equal(r.stderr, LIMIT_MARKER(1000));
      r = assertReplyShape(await s.call({ ...base, command: 'yes', timeout: 30 }));
      assert.equal(r.stderr, LIMIT_MARKER(1000));
    } finally { await s.close(); }
  });

  it('takes the key from --e2b-api-key-file; the key and the server environment stay out of the sandbox', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msc-e2b-key-'));
    const file = path.join(dir, 'key');
    fs.writeFileSync(file, `${KEY}\n`, { mode: 0o600 });
    const s = await e2b(['--e2b-api-key-file', file], { E2B_API_KEY: '', SERVER_ONLY_CANARY: 'canary-e2b-env-71c3' });
    try {
      const r = assertReplyShape(await s.call({ computer_id: cid('keyfile'), command: 'env' }));
      assert.equal(r.exit_code, 0);
      assert.ok(!r.stdout.includes(KEY), `the key is not in the sandbox's env: ${r.stdout}`);
      assert.ok(!r.stdout.includes('canary-e2b-env-71c3'), 'nor the server environment');
      assert.ok(!s.stderr().includes(KEY), 'the key is never logged');
      assert.ok(!s.stderr().includes('visible to other users'), 'a file is not in ps');
    } finally {
      await s.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('warns when the key is a flag, blanks it from ps and never prints it', async () => {
    const s = await e2b(['--e2b-api-key', KEY], { E2B_API_KEY: '' });
    try {
      const r = assertReplyShape(await s.call({ computer_id: cid('keyflag'), command: 'echo ok' }));
      assert.equal(r.stdout, 'ok\n');
      assert.ok(s.stderr().includes('kilntainers: warning: --e2b-api-key is visible to other users in ps; '
        + 'use E2B_API_KEY or --e2b-api-key-file'), s.stderr());
      assert.ok(!s.stderr().includes(KEY), 'the key is never logged');
      assert.ok(!fs.readFileSync(`/proc/${s.pid}/cmdline`, 'latin1').includes(KEY), 'nor left in ps');
    } finally { await s.close(); }
  });

  it('kills temporary sandboxes at session end; pauses permanent ones and finds them after a restart', async () => {
    const tmp = cid('tmp');
    const perm = cid('perm');
    const s = await e2b();
    try {
      assertReplyShape(await s.call({ computer_id: tmp, command: 'true' }));
      assertReplyShape(await s.call({ computer_id: perm, temporary: false, command: 'echo kept > /root/f' }));
      assert.equal((await sandboxOf(perm)).metadata['kilntainers-temporary'], 'false');
    } finally { await s.eof(20000); }
    assert.equal(await sandboxOf(tmp), undefined, 'temporary killed');
    const kept = await sandboxOf(perm);
    assert.ok(kept, 'permanent kept');
    // paused when its last session ended: the next call resumes it
    assert.equal(kept.state, 'paused', 'paused at the end of its last session');
    const s2 = await e2b();
    try {
      const r = assertReplyShape(await s2.call({ computer_id: perm, temporary: false, command: 'cat /root/f' }));
      assert.equal(r.stdout, 'kept\n');
      assert.equal((await sandboxOf(perm)).state, 'running', 'resumed');
    } finally { await s2.close(); }
    await fakeApi('DELETE', `/sandboxes/${(await sandboxOf(perm)).sandboxID}`);
  });

  it('a wrong or missing key is a generic error for the agent, the reason on stderr, and makes nothing', async () => {
    const s = await e2b([], { E2B_API_KEY: 'e2b_wrong' });
    try {
      const text = assertToolError(await s.call({ command: 'true' }), CREATE_FAILED);
      assert.equal(text, CREATE_FAILED);
      await waitFor(() => /E2B validation failed.*401/.test(s.stderr()), { timeoutMs: 5000, intervalMs: 100 });
      assert.ok(!s.stderr().includes('e2b_wrong'));
    } finally { await s.close(); }
    const s2 = await e2b([], { E2B_API_KEY: '' });
    try {
      assert.equal(assertToolError(await s2.call({ command: 'true' })), CREATE_FAILED);
      await waitFor(() => s2.stderr().includes('E2B_API_KEY'), { timeoutMs: 5000, intervalMs: 100 });
    } finally { await s2.close(); }
  });

  it('attack: a provider error message carrying a secret never reaches the agent (create, exec, lifecycle)', async () => {
    const SECRET = `tok-${Math.random().toString(16).slice(2)}`;
    const detail = `upstream said: Authorization: Bearer ${SECRET} host=internal.e2b.example`;
    const s = await e2b([], { ENABLE_LIFECYCLE_TOOLS: 'true' });
    try {
      await fakeApi('POST', '/_fake/inject', { match: '^POST /sandboxes$', status: 500, count: 20, message: detail });
      const cr = await s.call({ command: 'true' }, { timeoutMs: 120000 });
      assert.equal(assertToolError(cr), CREATE_FAILED);
      assert.doesNotMatch(JSON.stringify(cr), new RegExp(`${SECRET}|internal\\.e2b|upstream`));
      await fakeApi('POST', '/_fake/clear');
      const ok = await s.exec({ command: 'echo up' }, { timeoutMs: 120000 });
      assert.equal(ok.stdout, 'up\n');
      await fakeApi('POST', '/_fake/inject', { match: 'process\\.Process/Start', status: 500, count: 20, message: detail });
      const ex = await s.call({ command: 'echo again' }, { timeoutMs: 120000 });
      assert.equal(ex.isError, true, JSON.stringify(ex));
      assert.doesNotMatch(JSON.stringify(ex), new RegExp(`${SECRET}|internal\\.e2b|upstream`));
      await fakeApi('POST', '/_fake/clear');
      await fakeApi('POST', '/_fake/inject', { match: '^GET /v2/sandboxes', status: 500, count: 20, message: detail });
      const list = await s.call({}, { name: 'computer_list', timeoutMs: 120000 });
      assert.doesNotMatch(JSON.stringify(list), new RegExp(`${SECRET}|internal\\.e2b|upstream`));
      assert.ok(await waitFor(() => s.stderr().includes(SECRET), { timeoutMs: 5000, intervalMs: 100 }),
        'the details are on stderr');
      // A provider echoing the server's own key: the details are logged, the key is not.
      await fakeApi('POST', '/_fake/clear');
      await fakeApi('POST', '/_fake/inject', { match: '^POST /sandboxes$', status: 500, count: 20,
        message: `bad request: X-API-Key: ${KEY} upstream-echo` });
      const echoed = await s.call({ computer_id: 'echoed-key' }, { name: 'computer_create', timeoutMs: 120000 });
      assert.equal(echoed.isError, true, JSON.stringify(echoed));
      assert.doesNotMatch(JSON.stringify(echoed), new RegExp(`${KEY}|upstream-echo`));
      assert.ok(await waitFor(() => s.stderr().includes('X-API-Key: [redacted] upstream-echo'),
        { timeoutMs: 5000, intervalMs: 100 }), s.stderr());
      assert.ok(!s.stderr().includes(KEY), 'the key is never logged, even when the provider echoes it');
    } finally {
      await fakeApi('POST', '/_fake/clear');
      await s.close();
    }
  });

  it('a custom template without --tool-instruction-override is a startup error, as in the reference', async () => {
    const r = await run(MSC_BIN, ['--backend', 'e2b', '--e2b-template', 'custom'], {
      env: { ...process.env, E2B_API_KEY: KEY, E2B_API_URL: api, E2B_SANDBOX_URL: api, E2B_DOMAIN: '' },
      timeoutMs: 30000,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /kilntainers: error: Backend does not provide tool instructions/);
    assert.match(r.stderr, /--tool-instruction-override/);
  });

  it('an unknown template is a clear error', async () => {
    const s = await e2b(['--e2b-template', 'nope', '--tool-instruction-override', 'x']);
    try {
      // A 400 is the agent's to read (invalid argument), but not the provider's words: on stderr.
      const text = assertToolError(await s.call({ command: 'true' }), 'Failed to create E2B sandbox');
      assert.equal(text, 'Failed to create E2B sandbox: E2B API POST /sandboxes: HTTP 400');
      await waitFor(() => /E2B API POST \/sandboxes: HTTP 400: ./.test(s.stderr()), { timeoutMs: 5000, intervalMs: 100 });
    } finally { await s.close(); }
  });

  it('a sandbox killed behind our back is reported as died, mid-command too', async () => {
    const s = await e2b();
    try {
      const id = cid('died');
      assertReplyShape(await s.call({ computer_id: id, command: 'true' }));
      let sb = await sandboxOf(id);
      assert.equal((await fakeApi('DELETE', `/sandboxes/${sb.sandboxID}`)).status, 204);
      assertToolError(await s.call({ computer_id: id, command: 'true' }), 'died');
      const r = assertReplyShape(await s.call({ computer_id: id, command: 'echo back' }));
      assert.equal(r.stdout, 'back\n');
      sb = await sandboxOf(id);
      const t0 = Date.now();
      const pending = s.call({ computer_id: id, command: 'sleep 60', timeout: 90 });
      await new Promise((res) => setTimeout(res, 1500));
      await fakeApi('DELETE', `/sandboxes/${sb.sandboxID}`);
      assertToolError(await pending, 'died');
      assert.ok(Date.now() - t0 < 20000, 'no hang');
    } finally { await s.close(); }
  });

  it('a cancelled call (notifications/cancelled) kills every process of it within a second, no response; the sandbox and its other commands go on', async (t) => {
    const s = await e2b(['--timeout', '60']);
    try {
      const id = cid('cancel');
      assertReplyShape(await s.call({ computer_id: id, command: 'echo ready > /tmp/before' }));
      const sb = await sandboxOf(id);
      const ctr = (await fakeApi('GET', '/_fake/state')).body.sandboxes
        .find((x) => x.sandboxID === sb.sandboxID).container;
      const procs = async () => (await containerProcesses(ctr)).filter((l) => /sleep 4[12][0-9]/.test(l));
      const seen = [];
      const orig = s.transport.onmessage;
      s.transport.onmessage = (m, extra) => { seen.push(m); orig?.(m, extra); };
      // Another command of the same computer, which must go on.
      const other = s.call({ computer_id: id, command: 'sleep 3; echo other done' });
      // A shell, a child in its group and a grandchild in a session of its own (envd's
      // SendSignal reaches only the top process).
      const ac = new AbortController();
      const p = s.client.callTool({ name: TOOL, arguments: { computer_id: id,
        command: '(setsid sleep 427 &) ; sleep 428 & sleep 429; echo done' } }, undefined,
      { signal: ac.signal, timeout: 120000 }).then((r) => ({ r }), (e) => ({ e }));
      let ps = [];
      assert.ok(await waitFor(async () => (ps = await procs()) && ['427', '428', '429'].every((n) => ps.some((l) => l === `sleep ${n}`)), { timeoutMs: 10000 }), 'the command started');
      // Timed inside the sandbox: the last of them gone, wall clock in ms.
      const watch = 'while grep -qs "sleep.4[12][0-9]" /proc/[0-9]*/cmdline; do sleep 0.01; done; date +%s%3N > /tmp/gone';
      assert.equal((await docker(['exec', '-d', ctr, 'sh', '-c', watch])).code, 0);
      await sleep(300);
      const t0 = Date.now();
      ac.abort('test cancels');
      const out = await p;
      assert.ok(out.e, 'the SDK call rejects with the abort');
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
      // The other command ends normally; nothing answers the cancelled one.
      const r = assertReplyShape(await other);
      assert.equal(r.stdout, 'other done\n');
      await sleep(1500);
      const ids = seen.filter((m) => m.id !== undefined).map((m) => m.id);
      assert.equal(ids.length, 1, `one response only (the other command's): ${JSON.stringify(seen)}`);
      // The sandbox is untouched: same sandbox, its files kept, next command runs.
      assert.equal((await sandboxOf(id)).sandboxID, sb.sandboxID);
      const next = assertReplyShape(await s.call({ computer_id: id, command: 'cat /tmp/before' }));
      assert.equal(next.stdout, 'ready\n');
      assert.ok(!s.stderr().includes('cannot sweep'), 'the sweep ran');
    } finally { await s.close(); }
  });

  it('leases: a temporary sandbox outlives idle time and long commands while held, and ends after kill -9 of its server', async () => {
    const s = await e2b(['--lease-timeout', '3']);
    const busy = cid('lease-busy');
    const idle = cid('lease-idle');
    const perm = cid('lease-perm');
    try {
      assertReplyShape(await s.call({ computer_id: idle, command: 'echo x > /tmp/f' }));
      assertReplyShape(await s.call({ computer_id: busy, command: 'true' }));
      assertReplyShape(await s.call({ computer_id: perm, temporary: false, command: 'echo kept > /root/kept' }));
      assert.equal((await sandboxOf(idle)).createTimeout, 3, 'a temporary starts with the lease as its timeout');
      assert.equal((await sandboxOf(perm)).createTimeout, 3600, 'a permanent one with --e2b-sandbox-timeout');
      await new Promise((res) => setTimeout(res, 5000)); // idle past the lease
      let r = assertReplyShape(await s.call({ computer_id: idle, command: 'sleep 4; cat /tmp/f' }));
      assert.equal(r.stdout, 'x\n');
      const running = s.call({ computer_id: busy, command: 'sleep 60', timeout: 90 }).catch(() => null);
      await new Promise((res) => setTimeout(res, 500));
      const since = Date.now();
      s.proc.kill('SIGKILL');
      for (;;) {
        const [a, b] = [await sandboxOf(busy), await sandboxOf(idle)];
        if (!a && !b) break;
        assert.ok(Date.now() - since < 13000, 'temporary sandboxes gone within the lease plus 10 s');
        await new Promise((res) => setTimeout(res, 250));
      }
      await running;
      assert.ok(await sandboxOf(perm), 'the permanent sandbox is kept');
    } finally { await s.close(); }
    const s2 = await e2b();
    try {
      const r = assertReplyShape(await s2.call({ computer_id: perm, temporary: false, command: 'cat /root/kept' }));
      assert.equal(r.stdout, 'kept\n');
      await s2.call({ computer_id: perm, temporary: false, command: 'true' });
    } finally { await s2.close(); }
    await fakeApi('DELETE', `/sandboxes/${(await sandboxOf(perm)).sandboxID}`);
  });
});

// Issue 27: a permanent sandbox records its principal (a hash of the name) in its metadata, so a
// restarted server with --tokens-file does not hand alice's to bob. (It recorded none: bob named
// it and read alice's file.)
describe('e2b: a permanent computer is its principal\'s, also after a restart', () => {
  it('bob naming alice\'s permanent sandbox is refused and does not see it', async () => {
    const id = cid('alice-box');
    await assertPermanentIsPrincipals(() => startPrincipalServer(['--backend', 'e2b'],
      { E2B_API_KEY: KEY, E2B_API_URL: api, E2B_SANDBOX_URL: api, E2B_DOMAIN: '' }),
    id, async (x) => (await sandboxOf(x))?.metadata?.['kilntainers-principal']);
  });
});
