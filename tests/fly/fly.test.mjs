// The fly backend against the local fake of the Fly Machines API (fake_fly.py), whose Machines
// are real Docker containers: exec semantics, temporary and permanent computers, app
// auto-creation and the state file, credentials, rate limits, a Machine destroyed behind the
// server's back, and the lifecycle tools.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  startServer, cid, assertReplyShape, assertToolError, textOf, TIMEOUT_MARKER, LIMIT_MARKER,
  assertProviderError, CREATE_FAILED,
} from '../integration/lib.mjs';
import { startPrincipalServer, assertPermanentIsPrincipals } from '../integration/principals_lib.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TOKEN = 'fake-token-' + Math.random().toString(16).slice(2);
let fake;
let api;
let home;

function startFake(args = []) {
  return new Promise((resolve, reject) => {
    const p = spawn('python3', [path.join(HERE, 'fake_fly.py'), '--token', TOKEN, ...args],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (c) => {
      out += c;
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve({ proc: p, url: `http://127.0.0.1:${m[1]}` });
    });
    p.on('exit', (code) => reject(new Error(`fake_fly.py exited ${code}`)));
  });
}

async function fakeApi(method, p, body) {
  const r = await fetch(api + p, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

const fakeState = async () => (await fakeApi('GET', '/_fake/state')).body;
const machineOf = async (id) => (await fakeState()).machines
  .find((m) => m.config.metadata?.['kilntainers-computer-id'] === id && m.state !== 'destroyed');

function env(extra = {}) {
  return {
    HOME: home, FLY_API_TOKEN: TOKEN, FLY_TOKEN: '', FLY_APP_NAME: '', FLY_ORG: '',
    FLY_API_HOSTNAME: '', KILNTAINERS_FLY_STATE_FILE: '', ...extra,
  };
}

function fly(flags = [], extra = {}) {
  return startServer(['--backend', 'fly', '--fly-api-url', api, ...flags], { env: env(extra) });
}

before(async () => {
  ({ proc: fake, url: api } = await startFake());
  home = mkdtempSync(path.join(os.tmpdir(), 'msc-fly-home-'));
});

after(async () => {
  fake?.kill('SIGTERM');
  await new Promise((r) => (fake.exitCode !== null ? r() : fake.once('exit', r)));
  rmSync(home, { recursive: true, force: true });
});

describe('fly backend', () => {
  it('creates an app once, remembers it in the state file and reuses it', async () => {
    const s = await fly();
    try {
      const r = assertReplyShape(await s.call({ command: 'echo hello world' }));
      assert.equal(r.stdout, 'hello world\n');
      assert.equal(r.exit_code, 0);
      assert.ok(!s.stderr().includes(TOKEN), 'the token is never logged');
    } finally { await s.close(); }
    const file = path.join(home, '.mcp-sandbox-computer-vm-for-ai', 'fly.json');
    const state = JSON.parse(readFileSync(file, 'utf8'));
    assert.match(state.app_name, /^kilntainers-[0-9a-f]{10}$/);
    assert.equal(state.org_slug, 'personal');
    const s2 = await fly();
    try {
      assertReplyShape(await s2.call({ command: 'true' }));
    } finally { await s2.close(); }
    const apps = (await fakeState()).apps;
    assert.deepEqual(apps.map((a) => a.name), [state.app_name], 'one app, reused');
    // KILNTAINERS_FLY_STATE_FILE elsewhere and FLY_ORG: a second app in that org
    const other = path.join(home, 'elsewhere', 'state.json');
    const s3 = await fly([], { KILNTAINERS_FLY_STATE_FILE: other, FLY_ORG: 'personal' });
    try { assertReplyShape(await s3.call({ command: 'true' })); } finally { await s3.close(); }
    assert.ok(existsSync(other));
    assert.notEqual(JSON.parse(readFileSync(other, 'utf8')).app_name, state.app_name);
  });

  it('runs commands: stdin, working directory, args, exit codes, timeout 124, output limit', async () => {
    const s = await fly(['--output-limit', '1000']);
    try {
      const id = cid('exec');
      const base = { computer_id: id };
      let r = assertReplyShape(await s.call({ ...base, command: 'echo hello | tr a-z A-Z; echo err >&2; exit 3' }));
      assert.deepEqual([r.stdout, r.stderr, r.exit_code], ['HELLO\n', 'err\n', 3]);
      r = assertReplyShape(await s.call({ ...base, args: ['echo', 'hello | tr a-z A-Z'] }));
      assert.equal(r.stdout, 'hello | tr a-z A-Z\n');
      // stdin and working directory together (the reference lost stdin here)
      await s.call({ ...base, command: 'mkdir -p "/workspace dir"' });
      r = assertReplyShape(await s.call({ ...base, args: ['sh', '-c', 'pwd; cat > "file with spaces"; cat "file with spaces"'],
        stdin: 'Hello\nWorld\t!', working_directory: '/workspace dir' }));
      assert.equal(r.stdout, '/workspace dir\nHello\nWorld\t!');
      r = assertReplyShape(await s.call({ ...base, command: 'cat', stdin: "it's \"quoted\" $HOME `x`" }));
      assert.equal(r.stdout, "it's \"quoted\" $HOME `x`");
      r = assertReplyShape(await s.call({ ...base, command: 'ls /nonexistent' }));
      assert.notEqual(r.exit_code, 0);
      assert.match(r.stderr, /No such file/);
      // timeout: 124, the marker, and the command's processes are gone
      const t0 = Date.now();
      r = assertReplyShape(await s.call({ ...base, command: 'sleep 300 & echo started; sleep 100', timeout: 2 }));
      assert.equal(r.exit_code, 124);
      assert.equal(r.stderr, TIMEOUT_MARKER(2));
      assert.ok(Date.now() - t0 < 15000);
      r = assertReplyShape(await s.call({ ...base, command: 'ps -eo args 2>/dev/null || cat /proc/[0-9]*/cmdline | tr "\\0" " "' }));
      assert.ok(!/sleep (300|100)/.test(r.stdout), `leftover processes: ${r.stdout}`);
      // output limit
      r = assertReplyShape(await s.call({ ...base, command: 'head -c 2048 /dev/zero | tr "\\0" a' }));
      assert.equal(r.exit_code, 1);
      assert.equal(r.stderr, LIMIT_MARKER(1000));
      // a longer timeout takes the detached path: same results
      r = assertReplyShape(await s.call({ ...base, command: 'sleep 1; echo long; echo e >&2; exit 5', timeout: 60,
        working_directory: '/tmp', stdin: 'x' }));
      assert.deepEqual([r.stdout, r.stderr, r.exit_code], ['long\n', 'e\n', 5]);
      r = assertReplyShape(await s.call({ ...base, command: 'yes', timeout: 60 }));
      assert.equal(r.stderr, LIMIT_MARKER(1000));
      r = assertReplyShape(await s.call({ ...base, command: 'ls -A /tmp/.kt 2>/dev/null | wc -l', timeout: 10 }));
      assert.equal(r.stdout.trim(), '0', 'no leftover files of detached commands');
    } finally { await s.close(); }
  });

  it('destroys temporary Machines at session end; permanent ones survive a restart with their files', async () => {
    const tmp = cid('tmp');
    const perm = cid('perm');
    const s = await fly();
    try {
      assertReplyShape(await s.call({ computer_id: tmp, command: 'true' }));
      assertReplyShape(await s.call({ computer_id: perm, temporary: false, command: 'echo kept > /root/f' }));
      const m = await machineOf(perm);
      assert.equal(m.config.rootfs.persist, 'always');
      assert.equal(m.config.restart.policy, 'always');
      assert.equal(m.config.metadata.kilntainers, 'true');
      assert.equal(m.config.metadata['kilntainers-temporary'], 'false');
      assert.equal(m.config.guest.memory_mb, 512);
      assert.equal(m.config.guest.cpus, 1);
      assert.equal(m.config.guest.cpu_kind, 'shared');
      const t = await machineOf(tmp);
      assert.equal(t.config.auto_destroy, true);
      assert.equal(t.config.rootfs.persist, 'never');
    } finally { await s.eof(20000); }
    assert.equal(await machineOf(tmp), undefined, 'temporary destroyed');
    assert.ok(await machineOf(perm), 'permanent kept');
    const s2 = await fly();
    try {
      const r = assertReplyShape(await s2.call({ computer_id: perm, temporary: false, command: 'cat /root/f' }));
      assert.equal(r.stdout, 'kept\n');
      const mismatch = await s2.call({ computer_id: perm, temporary: true, command: 'true' });
      assert.equal(mismatch.isError, true);
    } finally { await s2.close(); }
    await fakeApi('DELETE', `/v1/apps/${(await fakeState()).apps[0].name}/machines/${(await machineOf(perm)).id}?force=true`);
  });

  it('takes the token from --fly-token-file and keeps it and the server environment out of Machines', async () => {
    const file = path.join(home, 'fly-token');
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    const s = await fly(['--fly-token-file', file], { FLY_API_TOKEN: '', SERVER_ONLY_CANARY: 'canary-fly-env-2d4e' });
    try {
      const r = assertReplyShape(await s.call({ computer_id: cid('tokfile'), command: 'env' }));
      assert.equal(r.exit_code, 0);
      assert.ok(!r.stdout.includes(TOKEN), `the token is not in the Machine's env: ${r.stdout}`);
      assert.ok(!r.stdout.includes('canary-fly-env-2d4e'), 'nor the server environment');
      assert.ok(!s.stderr().includes(TOKEN), 'the token is never logged');
      assert.ok(!s.stderr().includes('visible to other users'), 'a file is not in ps');
    } finally { await s.close(); }
  });

  it('a wrong token is a clear error and leaves nothing behind', async () => {
    const s = await fly([], { FLY_API_TOKEN: 'wrong-token' });
    try {
      const before = (await fakeState()).machines.length;
      const text = await assertProviderError(s, await s.call({ command: 'true' }), CREATE_FAILED, 'rejected the credentials');
      assert.ok(!text.includes('wrong-token'));
      assert.equal((await fakeState()).machines.length, before);
    } finally { await s.close(); }
    const empty = mkdtempSync(path.join(os.tmpdir(), 'msc-fly-empty-'));
    const s2 = await fly([], { FLY_API_TOKEN: '', HOME: empty });
    try {
      await assertProviderError(s2, await s2.call({ command: 'true' }), CREATE_FAILED, 'fly auth login');
    } finally {
      await s2.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('uses the cached fly auth login session, and FlyV1 for macaroon tokens', async () => {
    const h = mkdtempSync(path.join(os.tmpdir(), 'msc-fly-login-'));
    mkdirSync(path.join(h, '.fly'));
    writeFileSync(path.join(h, '.fly', 'config.yml'), `access_token: ${TOKEN}\n`);
    await fakeApi('POST', '/_fake/clear');
    const s = await fly([], { FLY_API_TOKEN: '', HOME: h });
    try {
      assertReplyShape(await s.call({ command: 'true' }));
    } finally { await s.close(); }
    const reqs = (await fakeApi('GET', '/_fake/requests')).body;
    assert.ok(reqs.length > 0 && reqs.every((r) => r.auth === 'Bearer'));
    rmSync(h, { recursive: true, force: true });
  });

  it('survives injected 429s and 5xx', async () => {
    const s = await fly();
    try {
      const id = cid('rl');
      assertReplyShape(await s.call({ computer_id: id, command: 'true' }));
      await fakeApi('POST', '/_fake/inject', { status: 429, count: 3, match: 'POST .*/exec', retry_after: 0 });
      await fakeApi('POST', '/_fake/inject', { status: 503, count: 2, match: 'GET .*/machines\\?' });
      const r = assertReplyShape(await s.call({ computer_id: id, command: 'echo ok' }));
      assert.equal(r.stdout, 'ok\n');
      const rl = await s.call({ computer_id: cid('rl2'), command: 'echo ok2' });
      assert.equal(assertReplyShape(rl).stdout, 'ok2\n');
    } finally { await s.close(); await fakeApi('POST', '/_fake/clear'); }
  });

  it('a Machine destroyed behind our back is reported as died, then recreated', async () => {
    const s = await fly();
    try {
      const id = cid('died');
      assertReplyShape(await s.call({ computer_id: id, command: 'true' }));
      const m = await machineOf(id);
      const app = (await fakeState()).apps[0].name;
      assert.equal((await fakeApi('DELETE', `/v1/apps/${app}/machines/${m.id}?force=true`)).status, 200);
      assertToolError(await s.call({ computer_id: id, command: 'true' }), 'died');
      const r = assertReplyShape(await s.call({ computer_id: id, command: 'echo back' }));
      assert.equal(r.stdout, 'back\n');
      assert.notEqual((await machineOf(id)).id, m.id);
    } finally { await s.close(); }
  });

  it('lifecycle tools: create, list, restart keeps files, factory reset erases them, delete', async () => {
    const s = await fly([], { ENABLE_LIFECYCLE_TOOLS: 'true' });
    const tool = async (name, args = {}) => {
      const res = await s.client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
      assert.ok(!res.isError, `${name}: ${textOf(res)}`);
      return res.structuredContent;
    };
    try {
      const id = cid('life');
      const created = await tool('computer_create', { computer_id: id, temporary: false });
      assert.equal(created.computer_id, id);
      await s.exec({ computer_id: id, temporary: false, command: 'echo kept > /root/f' });
      const list = await tool('computer_list');
      const row = list.computers.find((c) => c.computer_id === id);
      assert.equal(row.backend, 'fly');
      assert.equal(row.temporary, false);
      assert.equal(row.sandbox_id, created.sandbox_id);
      await tool('computer_restart', { computer_id: id });
      assert.equal((await s.exec({ computer_id: id, temporary: false, command: 'cat /root/f' })).stdout, 'kept\n');
      const reset = await tool('computer_factory_reset', { computer_id: id });
      assert.notEqual(reset.sandbox_id, created.sandbox_id);
      assert.equal(reset.temporary, false);
      assert.notEqual((await s.exec({ computer_id: id, temporary: false, command: 'cat /root/f' })).exit_code, 0);
      assert.deepEqual(await tool('computer_delete', { computer_id: id }), { ok: true, computer_id: id, deleted: true });
      assert.equal(await machineOf(id), undefined);
    } finally { await s.close(); }
  });

  it('leases: a temporary Machine outlives idle time and long commands while held, and destroys itself after kill -9 of its server', async () => {
    const s = await fly(['--lease-timeout', '4']);
    const busy = cid('lease-busy');
    const idle = cid('lease-idle');
    const perm = cid('lease-perm');
    try {
      assertReplyShape(await s.call({ computer_id: idle, command: 'echo x > /tmp/f' }));
      assertReplyShape(await s.call({ computer_id: busy, command: 'true' }));
      assertReplyShape(await s.call({ computer_id: perm, temporary: false, command: 'echo kept > /root/kept' }));
      assert.equal((await machineOf(idle)).config.init.exec.at(-1), '4', 'a temporary runs the watch loop');
      assert.deepEqual((await machineOf(perm)).config.init.exec, ['/bin/sleep', 'inf'], 'a permanent one does not');
      await new Promise((res) => setTimeout(res, 6000)); // idle past the lease
      let r = assertReplyShape(await s.call({ computer_id: idle, command: 'sleep 5; cat /tmp/f' }));
      assert.equal(r.stdout, 'x\n');
      const running = s.call({ computer_id: busy, command: 'sleep 60', timeout: 90 }).catch(() => null);
      await new Promise((res) => setTimeout(res, 500));
      const since = Date.now();
      s.proc.kill('SIGKILL');
      for (;;) {
        const [a, b] = [await machineOf(busy), await machineOf(idle)];
        if (!a && !b) break;
        assert.ok(Date.now() - since < 14000, 'temporary Machines gone within the lease plus 10 s');
        await new Promise((res) => setTimeout(res, 250));
      }
      await running;
      assert.ok(await machineOf(perm), 'the permanent Machine is kept');
    } finally { await s.close(); }
    const s2 = await fly();
    try {
      const r = assertReplyShape(await s2.call({ computer_id: perm, temporary: false, command: 'cat /root/kept' }));
      assert.equal(r.stdout, 'kept\n');
    } finally { await s2.close(); }
    await fakeApi('DELETE', `/v1/apps/${(await fakeState()).apps[0].name}/machines/${(await machineOf(perm)).id}?force=true`);
  });
});

// Issue 27: a permanent Machine records its principal (a hash of the name) in its metadata, so a
// restarted server with --tokens-file does not hand alice's to bob. (It recorded none: bob named
// it and read alice's file.)
describe('fly: a permanent computer is its principal\'s, also after a restart', () => {
  it('bob naming alice\'s permanent Machine is refused and does not see it', async () => {
    const id = cid('alice-box');
    await assertPermanentIsPrincipals(() => startPrincipalServer(['--backend', 'fly', '--fly-api-url', api],
      env()), id, async (x) => (await machineOf(x))?.config?.metadata?.['kilntainers-principal']);
  });
});
