// Long commands over stdio (issue 16): a cancelled call (the SDK's AbortSignal, which sends
// notifications/cancelled) kills every process of its command inside the computer within a
// second and gets no response, on the fast exec path and the Engine API exec; a cancelled
// call still waiting for its turn never runs; the computer and its next commands are untouched.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer, cid, containerOf, containerName, cleanupContainers, containerProcesses,
  sleep, waitFor, TOOL,
} from './lib.mjs';

const F = cid('long-fast');
const E = cid('long-engine');

let fast;
let engine;

before(async () => {
  fast = await startServer(['--timeout', '60']);
  engine = await startServer(['--timeout', '60'], { env: { MSC_FAST_EXEC: '0' } });
});

after(async () => {
  await Promise.all([fast?.close(), engine?.close()]);
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

const hasProc = async (ctr, needle) => (await containerProcesses(ctr)).some((l) => l.includes(needle));

for (const [label, get, id] of [['fast exec path', () => fast, F], ['Engine API exec', () => engine, E]]) {
  describe(`cancellation (${label})`, () => {
    it('kills every process of the command within a second and sends no response', async () => {
      const s = get();
      await s.exec({ computer_id: id, command: 'echo ready > /tmp/before' });
      const ctr = containerName(id);
      const { Id: ctrId, State: { StartedAt: started } } = await containerOf(id);
      const seen = recordIncoming(s);
      // A shell, a child in the same group and a grandchild in a group of its own.
      const { ac, p } = abortable(s, { computer_id: id,
        command: '(setsid sleep 417 &) ; sleep 418 & sleep 419; echo done' });
      assert.ok(await waitFor(() => hasProc(ctr, 'sleep 419'), { timeoutMs: 10000 }), 'the command started');
      const t0 = Date.now();
      ac.abort('test cancels');
      const out = await p;
      assert.ok(out.e, 'the SDK call rejects with the abort');
      const gone = await waitFor(async () => {
        const ps = await containerProcesses(ctr);
        return !ps.some((l) => /sleep 41[789]/.test(l));
      }, { timeoutMs: 5000, intervalMs: 50 });
      const took = Date.now() - t0;
      assert.ok(gone, `processes left: ${(await containerProcesses(ctr)).join(' | ')}`);
      assert.ok(took < 1500, `killed ${took} ms after the cancel (docker exec ps adds its own time)`);
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
