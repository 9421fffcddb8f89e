// Long commands over stdio (issue 16): a cancelled call (the SDK's AbortSignal, which sends
// The servers run with --no-network: nothing here needs one, and the shared sandbox network
// may be in flux under other tests.
// notifications/cancelled) kills every process of its command inside the computer within a
// second and gets no response, on the fast exec path and the Engine API exec; a cancelled
// call still waiting for its turn never runs; the computer and its next commands are untouched.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import {
  startServer, cid, containerOf, containerName, cleanupContainers, containerProcesses, docker,
  sleep, waitFor, textOf, run, MSC_BIN, TOOL,
} from './lib.mjs';

const F = cid('long-fast');
const E = cid('long-engine');
const S = cid('long-split');

let fast;
let engine;
let split;

before(async () => {
  fast = await startServer(['--timeout', '60', '--no-network']);
  engine = await startServer(['--timeout', '60', '--no-network'], { env: { MSC_FAST_EXEC: '0' } });
  // Each service its own process: the cancel crosses edge -> session -> driver over ipc://.
  split = await startServer(['--timeout', '60', '--no-network'], { mode: 'split' });
});

after(async () => {
  await Promise.all([fast?.close(), engine?.close(), split?.close()]);
  await cleanupContainers();
});

/** Records every message the client receives (to prove no response came). */
function recordIncoming(s) {
  const seen = [];
  const orig = s.transport.onmessage;
  s.transport.onmessage = (m, extra) => { seen.push(m); orig?.(m, extra); };
  return seen;
}

/** Starts a call that the returned controller can abort; the promise never rejects. */
function abortable(s, args) {
  const ac = new AbortController();
  const p = s.client.callTool({ name: TOOL, arguments: args }, undefined,
    { signal: ac.signal, timeout: 120000 }).then((r) => ({ r }), (e) => ({ e }));
  return { ac, p };
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

const hasProc = async (ctr, needle) => (await containerProcesses(ctr)).some((l) => l.includes(needle));

for (const [label, get, id] of [['fast exec path', () => fast, F], ['Engine API exec', () => engine, E],
  ['split services', () => split, S]]) {
  describe(`cancellation (${label})`, () => {
    it('kills every process of the command within a second and sends no response', async (t) => {
      const s = get();
      await s.exec({ computer_id: id, command: 'echo ready > /tmp/before' });
      const ctr = containerName(id);
      const { Id: ctrId, State: { StartedAt: started } } = await containerOf(id);
      const seen = recordIncoming(s);
      // A shell, a child in the same group and a grandchild in a group of its own.
      const { ac, p } = abortable(s, { computer_id: id,
        command: '(setsid sleep 417 &) ; sleep 418 & sleep 419; echo done' });
      assert.ok(await waitFor(() => hasProc(ctr, 'sleep 419'), { timeoutMs: 10000 }), 'the command started');
      const killedAt = await watchGone(ctr, 'sleep 419');
      const t0 = Date.now();
      ac.abort('test cancels');
      const out = await p;
      assert.ok(out.e, 'the SDK call rejects with the abort');
      const gone = await waitFor(async () => {
        const ps = await containerProcesses(ctr);
        return !ps.some((l) => /sleep 41[789]/.test(l));
      }, { timeoutMs: 5000, intervalMs: 50 });
      assert.ok(gone, `processes left: ${(await containerProcesses(ctr)).join(' | ')}`);
      const took = (await killedAt()) - t0;
      t.diagnostic(`killed ${took} ms after the cancel`);
      assert.ok(took < 1000, `killed ${took} ms after the cancel`);
      const id0 = seen.length;
      await sleep(1500);
      const ids = seen.filter((m) => m.id !== undefined).map((m) => m.id);
      assert.equal(seen.length, id0, `a message came after the cancel: ${JSON.stringify(seen.slice(id0))}`);
      assert.equal(new Set(ids).size, ids.length);
      // The computer is untouched: same container, same start, its files kept; next command runs.
      const now = await containerOf(id);
      assert.equal(now.Id, ctrId);
      assert.equal(now.State.StartedAt, started);
      const next = await s.exec({ computer_id: id, command: 'cat /tmp/before' });
      assert.equal(next.stdout, 'ready\n');
    });

    it('a cancelled call waiting for its turn never runs; the one ahead goes on', async () => {
      const s = get();
      const ctr = containerName(id);
      const first = s.call({ computer_id: id, command: 'sleep 2; echo first' });
      await waitFor(() => hasProc(ctr, 'sleep 2'), { timeoutMs: 10000, intervalMs: 50 });
      const { ac, p } = abortable(s, { computer_id: id, command: 'touch /tmp/ran; sleep 421' });
      await sleep(200);
      ac.abort();
      assert.ok((await p).e);
      const r = await first;
      assert.equal(r.structuredContent.stdout, 'first\n');
      await sleep(300);
      assert.equal(await hasProc(ctr, 'sleep 421'), false);
      const chk = await s.exec({ computer_id: id, command: 'test -e /tmp/ran && echo ran || echo never' });
      assert.equal(chk.stdout, 'never\n');
    });
  });
}

describe('cancellation: bad input', () => {
  it('a cancel of an unknown or finished request, or with a junk id, changes nothing', async () => {
    const s = fast;
    for (const requestId of [999999, 'nope', null, { a: 1 }, 'x'.repeat(100000)]) {
      await s.transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } });
    }
    await s.transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled' });
    const r = await s.exec({ computer_id: F, command: 'echo still' });
    assert.equal(r.stdout, 'still\n');
  });
});

describe('output a model can use (--reply-output-limit, default 8192)', () => {
  const md5 = (buf) => createHash('md5').update(buf).digest('hex');
  const seqText = (n) => Array.from({ length: n }, (_, i) => `${i + 1}\n`).join('');

  it('1 MB of lines: head and tail within the bound, a marker naming the saved file, which holds every byte', async () => {
    const res = await fast.call({ computer_id: F, command: 'seq 1 150000; echo oops >&2' });
    assert.equal(res.isError, false);
    const sc = res.structuredContent;
    const whole = seqText(150000);
    assert.equal(sc.stdout_bytes, whole.length);
    assert.match(sc.stdout_file, /^\/tmp\/kilntainers-output\/\d{8}-\d{6}-[0-9a-f]{8}\.stdout$/);
    assert.equal(sc.stderr, 'oops\n');
    assert.equal(sc.stderr_bytes, undefined, 'a stream within its share is whole');
    assert.ok(sc.stdout.startsWith('1\n2\n3\n'), sc.stdout.slice(0, 20));
    assert.ok(sc.stdout.endsWith('149999\n150000\n'));
    const marker = sc.stdout.match(/\n\[kilntainers: stdout was (\d+) bytes; (\d+) bytes are left out here\. All of it is saved inside the computer at (\S+): read it with grep, tail, head or sed -n\.\]\n/);
    assert.ok(marker, sc.stdout.slice(4000, 4400));
    assert.equal(Number(marker[1]), whole.length);
    assert.equal(marker[3], sc.stdout_file);
    const shown = sc.stdout.replace(marker[0], '');
    assert.ok(shown.length <= 8192 - 'oops\n'.length, `shown ${shown.length}`);
    assert.equal(shown.length + Number(marker[2]), whole.length, 'head + left out + tail = all');
    // Cut at line ends: the head ends and the tail starts with a whole line.
    const [head, tail] = sc.stdout.split(marker[0]);
    assert.ok(whole.startsWith(head) && head.endsWith('\n'));
    assert.ok(whole.endsWith(tail) && /^\d+\n/.test(tail));
    // The text block is what a host shows its model: under Codex's ~12 KB.
    assert.ok(textOf(res).length < 12000, `text block ${textOf(res).length} bytes`);
    const saved = await fast.exec({ computer_id: F, command: `wc -c < ${sc.stdout_file}; md5sum < ${sc.stdout_file}` });
    assert.equal(saved.stdout, `${whole.length}\n${md5(whole)}  -\n`);
  });

  it('1 MB without a newline, and both streams long: each cut within its share', async () => {
    const sc = await fast.exec({ computer_id: F,
      command: "head -c 1000000 /dev/zero | tr '\\0' a; head -c 300000 /dev/zero | tr '\\0' e >&2" });
    assert.equal(sc.stdout_bytes, 1000000);
    assert.equal(sc.stderr_bytes, 300000);
    const strip = (s) => s.replace(/\n\[kilntainers: [^\]]*\]\n/, '');
    assert.equal(strip(sc.stdout), 'a'.repeat(4096));
    assert.equal(strip(sc.stderr), 'e'.repeat(4096));
    const saved = await fast.exec({ computer_id: F, command: `wc -c < ${sc.stdout_file}; wc -c < ${sc.stderr_file}` });
    assert.equal(saved.stdout, '1000000\n300000\n');
  });

  it('multibyte text is never cut inside a character', async () => {
    const sc = await fast.exec({ computer_id: F, command: "for i in $(seq 3000); do printf 'é€'; done" });
    assert.equal(sc.stdout_bytes, 3000 * 5);
    assert.ok(!sc.stdout.includes('\ufffd'), 'no replacement character');
  });

  it('100 MB of binary output: the --output-limit answer, the server\'s memory stays bounded', async () => {
    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${fast.pid}/status`, 'utf8'))[1]);
    const before = rss();
    const sc = await fast.exec({ computer_id: F, command: 'head -c 100000000 /dev/urandom' });
    assert.equal(sc.exit_code, 1);
    assert.match(sc.stderr, /output limit exceeded \(2097152 bytes\)/);
    assert.ok(rss() - before < 64 * 1024, `RSS grew ${rss() - before} kB`);
  });

  it('a too small or too large --reply-output-limit is refused at start', async () => {
    for (const v of ['100', '99999999', '-1']) {
      const r = await run(MSC_BIN, ['--reply-output-limit', v], { timeoutMs: 10000 });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /--reply-output-limit/);
    }
  });
});

describe('live output (notifications/progress)', () => {
  it('a 5-second loop printing each second gives >= 3 progress notifications with its output', async () => {
    const got = [];
    const t0 = Date.now();
    const res = await fast.client.callTool({ name: TOOL, arguments: { computer_id: F,
      command: 'for i in 1 2 3 4 5; do echo "step $i"; sleep 1; done' } }, undefined,
    { timeout: 60000, onprogress: (p) => got.push({ ...p, at: Date.now() - t0 }) });
    assert.equal(res.structuredContent.stdout, 'step 1\nstep 2\nstep 3\nstep 4\nstep 5\n');
    assert.ok(got.length >= 3, `progress: ${JSON.stringify(got)}`);
    for (let i = 1; i < got.length; i++) {
      assert.ok(got[i].progress > got[i - 1].progress, 'progress increases');
      assert.ok(got[i].at - got[i - 1].at >= 900, `at most one a second: ${JSON.stringify(got)}`);
    }
    assert.ok(got.some((p) => /^step [2-4]$/m.test(p.message ?? '')), JSON.stringify(got));
    assert.ok(got.every((p) => p.progress <= 35));
  });

  it('a call without a progressToken gets none; a quiet command says it runs', async () => {
    const seen = recordIncoming(fast);
    await fast.exec({ computer_id: F, command: 'sleep 1.5; echo x' });
    assert.deepEqual(seen.filter((m) => m.method === 'notifications/progress'), []);
    const got = [];
    await fast.client.callTool({ name: TOOL, arguments: { computer_id: F, command: 'sleep 1.5' } }, undefined,
      { timeout: 60000, onprogress: (p) => got.push(p) });
    assert.equal(got.length, 1, JSON.stringify(got));
    assert.equal(got[0].progress, 0);
    assert.equal(got[0].message, 'running, no output yet');
  });
});
