// The same core behaviour through scripts/run-split (each service its own process on ipc://
// sockets, stdio edge in front): initialize/list, echo, stdin, timeout (with in-container kill),
// output limit, validation, temporary cleanup after EOF and after SIGTERM, permanent survival.

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  startServer, cid, containerOf, containerName, containerProcesses, cleanupContainers, assertReplyShape,
  textOf, track, waitFor, TOOL, TIMEOUT_MARKER, LIMIT_MARKER, RANDOM_SLUG_RE, RawServer,
} from './lib.mjs';

const mode = 'split';
after(() => cleanupContainers());

const gone = (id, timeoutMs = 10000) => waitFor(async () => (await containerOf(id)) === null, { timeoutMs });

describe('run-split: protocol', () => {
  it('initialize, ping, tools/list through the split edge', async () => {
    const s = new RawServer([], { mode });
    try {
      const r = await s.initialize('2025-06-18');
      assert.equal(r.result?.serverInfo?.name, 'Kilntainers', JSON.stringify(r));
      assert.equal(r.result.protocolVersion, '2025-06-18');
      assert.deepEqual((await s.ping()).result, {});
      const l = await s.request('tools/list', {});
      assert.deepEqual(l.result.tools.map((t) => t.name), [TOOL, 'computer_release']);
      const u = await s.request('no/such', {});
      assert.equal(u.error?.code, -32601);
      const from = s.messages.length;
      await s.write('{oops\n');
      const e = await s.waitMessage((m) => 'error' in m, 15000, { fromIndex: from });
      assert.equal(e.error.code, -32700);
      await s.ping();
    } finally {
      await s.close();
    }
    assert.deepEqual(s.badLines, []);
  });

  it('startup validation errors pass through (exit 1, kilntainers: error:)', async () => {
    const { runCli } = await import('./lib.mjs');
    const r = await runCli(['--timeout', '0'], { mode });
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes('kilntainers: error: --timeout must be at least 1 second.'), r.stderr);
  });
});

describe('run-split: exec', () => {
  let s;
  const X = cid('split-x');

  it('echo: reply shape, exact output', async () => {
    s = await startServer(['--timeout', '20', '--output-limit', '4096'], { mode });
    const sc = assertReplyShape(await s.call({ computer_id: X, command: 'echo hello world' }));
    assert.equal(sc.computer_id, X);
    assert.equal(sc.stdout, 'hello world\n');
    assert.equal(sc.stderr, '');
    assert.equal(sc.exit_code, 0);
    const c = await containerOf(X);
    assert.equal(c?.Config?.Labels?.['kilntainers.computer-id'], X);
  });

  it('stdin round trip and file persistence', async () => {
    const content = 'Hello\nWorld\t! héllo\n';
    assert.equal(assertReplyShape(await s.call({ computer_id: X, command: 'cat > /tmp/f', stdin: content })).exit_code, 0);
    assert.equal(assertReplyShape(await s.call({ computer_id: X, command: 'cat /tmp/f' })).stdout, content);
    assert.equal(assertReplyShape(await s.call({ computer_id: X, args: ['wc', '-c'], stdin: 'x'.repeat(2 * 1024 * 1024) }, { timeoutMs: 60000 })).stdout.trim(), String(2 * 1024 * 1024));
  });

  it('validation messages', async () => {
    const r1 = await s.call({ computer_id: X, command: 'a', args: ['b'] });
    assert.equal(r1.isError, true);
    assert.equal(textOf(r1), "Cannot provide both 'command' and 'args'. Use 'command' for shell commands or 'args' for direct execution.");
    const r2 = await s.call({ computer_id: X, command: 'cat', stdin: 'a'.repeat(2 * 1024 * 1024 + 1) });
    assert.equal(textOf(r2), 'stdin content exceeds the 2 MiB limit (2097153 bytes). Split into smaller chunks or use a different approach.');
  });

  it('timeout → 124 marker and the command is killed in the container', async () => {
    const t0 = Date.now();
    const sc = assertReplyShape(await s.call({ computer_id: X, command: 'sleep 300; echo never', timeout: 1 }));
    assert.equal(sc.exit_code, 124);
    assert.equal(sc.stdout, '');
    assert.equal(sc.stderr, TIMEOUT_MARKER(1));
    assert.ok(Date.now() - t0 < 6000);
    const ok = await waitFor(async () => !(await containerProcesses(containerName(X))).some((p) => /sleep 300/.test(p)), { timeoutMs: 3000 });
    assert.ok(ok, `sleep 300 still running: ${JSON.stringify(await containerProcesses(containerName(X)))}`);
  });

  it('output limit → exit 1 marker', async () => {
    const sc = assertReplyShape(await s.call({ computer_id: X, command: 'yes' }));
    assert.equal(sc.exit_code, 1);
    assert.equal(sc.stdout, '');
    assert.equal(sc.stderr, LIMIT_MARKER(4096));
  });

  it('serialization on one computer, parallelism across two', async () => {
    const Y = cid('split-y');
    assertReplyShape(await s.call({ computer_id: Y, command: 'true' }));
    const stamp = 'sleep 1; date +%s.%N';
    const [a1, a2] = await Promise.all([s.call({ computer_id: X, command: stamp }), s.call({ computer_id: X, command: stamp })]);
    assert.ok(Math.abs(parseFloat(a1.structuredContent.stdout) - parseFloat(a2.structuredContent.stdout)) >= 0.95, 'same computer serialized');
    const [b1, b2] = await Promise.all([s.call({ computer_id: X, command: stamp }), s.call({ computer_id: Y, command: stamp })]);
    assert.ok(Math.abs(parseFloat(b1.structuredContent.stdout) - parseFloat(b2.structuredContent.stdout)) < 0.9, 'different computers in parallel');
  });

  it('EOF removes the temporaries and exits 0', async () => {
    const ex = await s.eof(15000);
    assert.equal(ex?.code, 0, `exit after EOF: ${JSON.stringify(ex)}; stderr tail ${s.stderr().slice(-400)}`);
    assert.ok(await gone(X), 'temporary removed after EOF');
    assert.ok(await gone(cid('split-y')), 'second temporary removed after EOF');
    assert.deepEqual(s.transportErrors, []);
  });
});

describe('run-split: a cluster file shared with other backends\' drivers', () => {
  it('the docker driver skips the cluster\'s backend = modal and its modal options', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'msc-split-cluster-'));
    const file = path.join(dir, 'cluster.conf');
    writeFileSync(file, 'backend = modal\nmodal-app-name = another-drivers-app\nfly-app = another\ntimeout = 20\n');
    let s;
    try {
      s = await startServer(['--cluster', file], { mode });
      const X = cid('split-cluster');
      const sc = assertReplyShape(await s.call({ computer_id: X, command: 'echo shared' }));
      assert.equal(sc.stdout, 'shared\n');
      const c = await containerOf(X);
      assert.equal(c?.Config?.Labels?.['kilntainers.computer-id'], X, 'a docker container');
      const ex = await s.eof(15000);
      assert.equal(ex?.code, 0, `exit after EOF: ${JSON.stringify(ex)}; stderr tail ${s.stderr().slice(-400)}`);
      assert.ok(await gone(X), 'temporary removed after EOF');
    } finally {
      await s?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('run-split: session end', () => {
  it('SIGTERM removes the default temporary and keeps a permanent', async () => {
    const s = await startServer([], { mode });
    const P = cid('split-perm');
    const d = assertReplyShape(await s.call({ command: 'true' })).computer_id;
    track(d);
    assert.match(d, RANDOM_SLUG_RE);
    assertReplyShape(await s.call({ computer_id: P, command: 'echo kept > /root/k', temporary: false }));
    const ex = await s.signal('SIGTERM', 12000);
    assert.ok(ex, 'run-split exited after SIGTERM');
    assert.equal(ex.code, 0, `exit after SIGTERM: ${JSON.stringify(ex)}`);
    assert.ok(await gone(d), 'default temporary removed after SIGTERM');
    assert.ok(await containerOf(P), 'permanent survives');

    const s2 = await startServer([], { mode });
    try {
      const sc = assertReplyShape(await s2.call({ computer_id: P, command: 'cat /root/k', temporary: false }));
      assert.equal(sc.stdout, 'kept\n');
    } finally {
      await s2.close();
    }
  });

  it('no service process outlives run-split', async () => {
    const { run } = await import('./lib.mjs');
    const s = await startServer([], { mode });
    const pid = s.pid;
    assertReplyShape(await s.call({ computer_id: cid('split-kids'), command: 'true' }));
    // every descendant of the launcher (services, edge), from one ps snapshot
    const ps = await run('ps', ['-eo', 'pid=,ppid=']);
    const children = new Map();
    for (const line of ps.stdout.split('\n')) {
      const [p, pp] = line.trim().split(/\s+/).map(Number);
      if (!p) continue;
      if (!children.has(pp)) children.set(pp, []);
      children.get(pp).push(p);
    }
    const kids = [];
    const stack = [pid];
    while (stack.length) {
      for (const c of children.get(stack.pop()) ?? []) { kids.push(c); stack.push(c); }
    }
    await s.eof(15000);
    await new Promise((r) => setTimeout(r, 1000));
    const alive = [];
    for (const k of kids) {
      try { process.kill(k, 0); alive.push(k); } catch { /* gone */ }
    }
    assert.deepEqual(alive, [], `children of run-split still alive: ${alive.join(' ')}`);
  });
});
