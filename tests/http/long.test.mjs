// Long commands over Streamable HTTP (2025 era, issue 16): a call the SDK client aborts
// (notifications/cancelled in its own POST) kills its command inside the computer within a
// second and gets no response; the session and its computer go on. A call with a progressToken
// gets its reply as an SSE stream of progress notifications and the result.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import {
  startHttpServer, connect, cleanupContainers, cid, docker, waitFor, sleep, request, rawSession, rpc, TOOL,
} from './lib.mjs';

const C = cid('long');
const ctr = `kilntainer-${C}`;
let srv;

before(async () => { srv = await startHttpServer(['--timeout', '60', '--no-network']); });
after(async () => {
  await srv?.stop();
  await cleanupContainers();
});

async function procs() {
  const r = await docker(['exec', ctr, 'sh', '-c', 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null; echo; done']);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.split('\n').filter(Boolean);
}

// Inside the computer (not through our server): waits for the process whose argv is `argv`
// to be gone and writes the wall-clock time (ms) to `file`, so a kill is timed without the
// latency of polling through `docker exec`.
const WATCH = 'for p in /proc/[0-9]*; do c=$(tr "\\0" " " < $p/cmdline 2>/dev/null); '
  + '[ "$c" = "$1 " ] && pid=${p#/proc/}; done; [ -n "$pid" ] || exit 1; '
  + 'while [ -d /proc/$pid ] && ! grep -q "^State:.*Z" /proc/$pid/status 2>/dev/null; do sleep 0.01; done; '
  + 'date +%s%3N > "$2"';
async function watchGone(ctr, argv) {
  const file = `/tmp/gone-${Math.random().toString(16).slice(2)}`;
  const r = await docker(['exec', '-d', ctr, 'sh', '-c', WATCH, 'watch', argv, file]);
  assert.equal(r.code, 0, r.stderr);
  await sleep(300);     // the watcher found its process
  return async () => {
    let at = null;
    await waitFor(async () => {
      const c = await docker(['exec', ctr, 'cat', file]);
      at = c.code === 0 && c.stdout.trim() ? Number(c.stdout.trim()) : null;
      return at;
    }, { timeoutMs: 10000, intervalMs: 100 });
    return at;
  };
}

describe('cancellation over HTTP', () => {
  it('an aborted call kills its command within a second; no response; the session goes on', async (t) => {
    const s = await connect(srv);
    try {
      await s.exec({ computer_id: C, command: 'true' });
      const seen = [];
      const orig = s.transport.onmessage;
      s.transport.onmessage = (m, e) => { seen.push(m); orig?.(m, e); };
      const ac = new AbortController();
      const p = s.client.callTool({ name: TOOL, arguments: { computer_id: C, command: 'sleep 431 & sleep 432; echo done' } },
        undefined, { signal: ac.signal, timeout: 120000 }).then((r) => ({ r }), (e) => ({ e }));
      assert.ok(await waitFor(async () => (await procs()).some((l) => l.includes('sleep 432')), { timeoutMs: 10000 }));
      const killedAt = await watchGone(ctr, 'sleep 432');
      const t0 = Date.now();
      ac.abort();
      assert.ok((await p).e, 'the SDK call rejects');
      assert.ok(await waitFor(async () => !(await procs()).some((l) => /sleep 43[12]/.test(l)),
        { timeoutMs: 5000, intervalMs: 50 }), `left: ${(await procs()).join(' | ')}`);
      const took = (await killedAt()) - t0;
      t.diagnostic(`killed ${took} ms after the cancel`);
      assert.ok(took < 1000, `killed ${took} ms after the cancel`);
      await sleep(1000);
      assert.deepEqual(seen, [], 'no message after the cancel');
      const r = await s.exec({ computer_id: C, command: 'echo next' });
      assert.equal(r.stdout, 'next\n');
      assert.deepEqual(s.transportErrors, []);
    } finally {
      await s.terminate();
    }
  });
});

describe('live output over HTTP', () => {
  it('a 5-second loop gives >= 3 progress notifications to the SDK client (onprogress)', async () => {
    const s = await connect(srv);
    try {
      const got = [];
      const res = await s.client.callTool({ name: TOOL, arguments: { computer_id: C,
        command: 'for i in 1 2 3 4 5; do echo "tick $i"; sleep 1; done' } }, undefined,
      { timeout: 60000, onprogress: (p) => got.push(p) });
      assert.equal(res.structuredContent.stdout, 'tick 1\ntick 2\ntick 3\ntick 4\ntick 5\n');
      assert.ok(got.length >= 3, JSON.stringify(got));
      assert.ok(got.some((p) => /tick [2-4]/.test(p.message)), JSON.stringify(got));
      assert.deepEqual(s.transportErrors, []);
    } finally {
      await s.terminate();
    }
  });

  it('the reply is an SSE stream with a progressToken, plain JSON without; a client that never reads is bounded', async () => {
    const { session } = await rawSession(srv);
    const call = (id, meta) => rpc('tools/call', { name: TOOL, arguments: { computer_id: C, command: 'echo a; sleep 1.5; echo b' },
      ...(meta ? { _meta: meta } : {}) }, id);
    const plain = await request(srv, { body: call(1), session });
    assert.match(plain.headers['content-type'], /^application\/json/);
    assert.equal(plain.json.result.structuredContent.stdout, 'a\nb\n');
    const sse = await request(srv, { body: call(2, { progressToken: 'tok-7' }), session });
    assert.match(sse.headers['content-type'], /^text\/event-stream/);
    const events = sse.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    assert.ok(events.length >= 2, sse.text);
    assert.equal(events[0].method, 'notifications/progress');
    assert.equal(events[0].params.progressToken, 'tok-7');
    assert.equal(events.at(-1).id, 2);
    assert.equal(events.at(-1).result.structuredContent.stdout, 'a\nb\n');
    // A progress client that stops reading: the server's memory stays bounded, the command ends.
    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${srv.pid}/status`, 'utf8'))[1]);
    const before = rss();
    const sock = net.connect(srv.port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    const body = JSON.stringify(rpc('tools/call', { name: TOOL, arguments: { computer_id: C, timeout: 4,
      command: 'for i in $(seq 40); do head -c 500 /dev/zero | tr "\\0" x; echo; sleep 0.1; done' }, _meta: { progressToken: 1 } }, 3));
    sock.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${session}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    sock.pause();
    await sleep(5000);
    assert.ok(rss() - before < 32 * 1024, `RSS grew ${rss() - before} kB`);
    sock.destroy();
    const after = await request(srv, { body: call(4), session });
    assert.equal(after.json.result.structuredContent.stdout, 'a\nb\n');
  });
});
