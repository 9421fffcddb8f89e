// A command that only waits holds no worker (issue 27), through the official SDK client over
// HTTP against Docker: the driver sends each command to its computer's exec helper, or for a
// computer it cannot reach so (MSC_FAST_EXEC=0; gVisor's runsc, where the helper's socket is
// in gVisor's own kernel) starts an Engine API exec and hands its stream over, and one loop
// waits for all of them, so with 4 --driver-workers, 16 sessions each sleeping in their own
// computer leave the workers free and a new client's echo answers at once. Before, the sleeps
// took the 3 command workers and the rest queued behind them: the echo waited some 20 s per
// round (on the Engine API path until the exec loop took its streams too). The sleeps still
// end with their output, a timeout still ends with 124 and the marker, and a cancelled one is
// killed within a second (a few under runsc).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startHttpServer, connect, cleanupContainers, containerName, docker, textOf, sleep, waitFor,
} from './lib.mjs';

const SLEEPERS = 16;

after(() => cleanupContainers());

// The processes of a container, one command line a row ([] when it is gone). Under runsc,
// `docker top` sees none of gVisor's processes: a shell in the computer reads its /proc.
async function processes(id, inside = false) {
  if (inside) {
    const r = await docker(['exec', containerName(id), 'sh', '-c',
      'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null; echo; done']);
    if (r.code !== 0) return [];
    return r.stdout.split('\n').map((l) => l.trim()).filter(Boolean);
  }
  const r = await docker(['top', containerName(id), '-eo', 'pid,args']);
  if (r.code !== 0) return [];
  return r.stdout.split('\n').slice(1).map((l) => l.trim().replace(/^\d+\s+/, '')).filter(Boolean);
}

// Whether the engine has gVisor's runtime registered (scripts/register-runsc.sh).
async function hasRunsc() {
  const r = await docker(['info', '--format', '{{json .Runtimes}}']);
  return r.code === 0 && /"runsc"/.test(r.stdout);
}

const PATHS = [
  { name: 'the fast path', flags: [], env: {}, killMs: 1500 },
  { name: 'the Engine API exec (MSC_FAST_EXEC=0)', flags: [], env: { MSC_FAST_EXEC: '0' }, killMs: 1500 },
  { name: 'the Engine API exec under runsc', flags: ['--runtime', 'runsc'], env: {}, killMs: 5000, runsc: true },
];

for (const path of PATHS) {
  describe(`commands that only wait hold no worker: ${path.name}`, () => {
    let srv;
    const clients = [];
    let skip = false;
    before(async () => {
      if (path.runsc && !(await hasRunsc())) {
        skip = true;
        return;
      }
      srv = await startHttpServer(['--driver-workers', '4', '--timeout', '60', ...path.flags],
        { env: path.env });
    });
    after(async () => {
      await Promise.all(clients.map((c) => c.terminate().catch(() => {})));
      await srv?.stop();
    });

    it(`${SLEEPERS} sessions sleep in their computers: a new client's echo answers within a second`, async (t) => {
      if (skip) return t.skip('the engine has no runsc runtime');
      // Each session (its own owner at the driver) makes its computer first, so only the waits
      // are timed; the late client's computer exists too.
      for (let i = 0; i <= SLEEPERS; i++) clients.push(await connect(srv));
      const late = clients.pop();
      await Promise.all([...clients, late].map((c) => c.exec({ command: 'true' }, { timeoutMs: 300000 })));

      // The echo's time on this machine now, for a loaded CI host.
      let t1 = Date.now();
      await late.exec({ command: 'echo hi' }, { timeoutMs: 60000 });
      const idle = Date.now() - t1;

      const t0 = Date.now();
      const sleeps = clients.map((c) => c.call({ command: 'sleep 20; echo slept' }, { timeoutMs: 120000 }));
      await sleep(3000);          // every sleep reached its computer
      t1 = Date.now();
      const hi = await late.exec({ command: 'echo hi' }, { timeoutMs: 60000 });
      const ms = Date.now() - t1;
      assert.equal(hi.stdout, 'hi\n');
      console.log(`# echo alone ${idle} ms, behind ${SLEEPERS} sleeping commands ${ms} ms`);
      assert.ok(ms < Math.max(1500, 3 * idle),
        `the echo waited ${ms} ms behind ${SLEEPERS} sleeping commands (${idle} ms alone)`);

      // A timeout is enforced while the sleeps wait, with the reference's end.
      const to = await late.exec({ command: 'echo partial; sleep 30', timeout: 1 }, { timeoutMs: 60000 });
      assert.equal(to.exit_code, 124);
      assert.equal(to.stdout, '');
      assert.ok(to.stderr.includes('[kilntainers: command timed out after 1s]'), to.stderr);

      const done = await Promise.all(sleeps);
      const took = Date.now() - t0;
      for (const r of done) {
        assert.ok(!r.isError, textOf(r));
        assert.equal(r.structuredContent.stdout, 'slept\n');
        assert.equal(r.structuredContent.exit_code, 0);
      }
      // Together, not in rounds of 3 workers (6 rounds of 20 s).
      assert.ok(took < 45000, `the ${SLEEPERS} sleeps took ${took} ms`);
    });

    it('a cancelled waiting command is killed within a second', async (t) => {
      if (skip) return t.skip('the engine has no runsc runtime');
      const c = clients[0];
      const sc = await c.exec({ command: 'hostname' });
      const id = sc.computer_id;
      const ac = new AbortController();
      const call = c.client.callTool({ name: 'terminal_execute', arguments: { command: 'sleep 317' } },
        undefined, { signal: ac.signal, timeout: 60000 }).catch((e) => e);
      assert.ok(await waitFor(async () => (await processes(id, path.runsc)).some((p) => p === 'sleep 317'),
        { timeoutMs: 10000, intervalMs: 100 }), 'the sleep started');
      const t0 = Date.now();
      ac.abort();
      await call;
      assert.ok(await waitFor(async () => !(await processes(id, path.runsc)).some((p) => p === 'sleep 317'),
        { timeoutMs: path.killMs + 1500, intervalMs: 100 }), 'the sleep was killed');
      const ms = Date.now() - t0;
      assert.ok(ms < path.killMs, `killed after ${ms} ms`);
      // The computer's lane is free again: its next command runs at once.
      const t1 = Date.now();
      assert.equal((await c.exec({ command: 'echo again' })).stdout, 'again\n');
      assert.ok(Date.now() - t1 < 2000);
    });
  });
}
