// Long commands over Streamable HTTP (2025 era, issue 16): a call the SDK client aborts
// (notifications/cancelled in its own POST) kills its command inside the computer within a
// second and gets no response; the session and its computer go on.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startHttpServer, connect, cleanupContainers, cid, docker, waitFor, sleep, TOOL,
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

describe('cancellation over HTTP', () => {
  it('an aborted call kills its command within a second; no response; the session goes on', async () => {
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
      const t0 = Date.now();
      ac.abort();
      assert.ok((await p).e, 'the SDK call rejects');
      assert.ok(await waitFor(async () => !(await procs()).some((l) => /sleep 43[12]/.test(l)),
        { timeoutMs: 5000, intervalMs: 50 }), `left: ${(await procs()).join(' | ')}`);
      assert.ok(Date.now() - t0 < 1500, `killed after ${Date.now() - t0} ms`);
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
