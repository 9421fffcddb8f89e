// The warm pool (--warm-pool N, issue 18) against the real engine: a new temporary computer
// takes a started, ready container and becomes that computer in every way that shows (its
// name, computer_list, a restarted server; removed at its end), waiting containers are never
// listed, are removed at shutdown and end with their lease when their server is killed (no start removes them: a live server of the same --driver-id may be taking one); and the bad input: a waiting
// container killed (never handed out), the image changed under the pool, a burst larger than
// the pool, a server stopped while the pool refills.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  startServer, cid, docker, inspect, containerName, cleanupContainers, waitFor, sleep, DEFAULT_IMAGE,
  withPoolFlag,
} from './lib.mjs';
import { startPrincipalServer } from './principals_lib.mjs';

const RUN = randomBytes(3).toString('hex');
const LIFECYCLE = { ENABLE_LIFECYCLE_TOOLS: 'true' };
const made = new Set();       // pool drivers of this file, for the cleanup

/** Waiting pool containers of driver `d` (names kilntainers-pool-*): [{id, name}]. */
async function waiting(d) {
  const r = await docker(['ps', '-a', '--filter', `label=kilntainers.pool=${d}`, '--format', '{{.ID}} {{.Names}}']);
  return r.stdout.split('\n').filter(Boolean).map((l) => l.split(' '))
    .filter(([, n]) => n.startsWith('kilntainers-pool-')).map(([id, name]) => ({ id, name }));
}
async function allOf(d) {
  const r = await docker(['ps', '-aq', '--filter', `label=kilntainers.pool=${d}`]);
  return r.stdout.split('\n').filter(Boolean);
}
/** Times server s said its pool of n was full. */
const fulls = (s, n) => s.stderr().split(`warm pool: ${n} of ${n} ready`).length - 1;
/** Waits until s says its pool of n is full for the (k+1)-th time (k: fulls before). */
async function full(s, n, k = 0) {
  assert.ok(await waitFor(async () => fulls(s, n) > k, { timeoutMs: 30000, intervalMs: 50 }),
    `pool of ${n} full`);
}
function driver(name) {
  const d = `pool${RUN}-${name}`;
  made.add(d);
  return d;
}
const poolServer = (d, n, more = [], env = {}) =>
  startServer(['--driver-id', d, '--warm-pool', String(n), ...more], { env: { ...LIFECYCLE, ...env } });

after(async () => {
  for (const d of made) {
    const ids = await allOf(d);
    if (ids.length) await docker(['rm', '-f', ...ids]);
  }
  await cleanupContainers();
});

describe('warm pool', () => {
  it('a new temporary computer is a taken pool container, named and listed as that computer', async () => {
    const d = driver('take');
    const s = await poolServer(d, 2);
    const id = cid('pooled');
    try {
      await full(s, 2);
      // The default step down (the shrink test below runs with a shorter one), as users meet it.
      assert.match(s.stderr(), /warm pool: keeping 2 container\(s\) ready \(up to 32 after bursts, one off per 30 s without a miss\)/);
      const before = await waiting(d);
      const r = await s.exec({ computer_id: id, command: 'echo hi; cat /proc/1/cmdline | tr "\\0" " "' });
      assert.match(r.stdout, /^hi\n/);
      assert.equal(r.temporary, true);
      // Renamed right after the answer.
      assert.ok(await waitFor(async () => (await inspect(containerName(id))) !== null, { timeoutMs: 10000, intervalMs: 50 }));
      const c = await inspect(containerName(id));
      assert.ok(c, 'the computer has its name');
      assert.equal(c.Config.Labels['kilntainers.pool'], d);
      assert.equal(c.Config.Labels['kilntainers.temporary'], 'true');
      assert.ok(before.some((w) => c.Id.startsWith(w.id)), 'it was one of the waiting containers');
      // Listed as the computer; the waiting ones never.
      const list = (await s.call({}, { name: 'computer_list' })).structuredContent.computers;
      assert.deepEqual(list.map((x) => x.computer_id), [id]);
      assert.equal(list[0].temporary, true);
      assert.equal(list[0].sandbox_id, c.Id.slice(0, 12));
      // The pool refills.
      await full(s, 2, 1);
      // A factory reset takes another warm container under the same name.
      const reset = await s.call({ computer_id: id }, { name: 'computer_factory_reset' });
      assert.equal(reset.isError, false, JSON.stringify(reset));
      assert.equal((await s.exec({ computer_id: id, command: 'echo again' })).stdout, 'again\n');
      assert.ok(await waitFor(async () => (await inspect(containerName(id)))?.Id !== c.Id, { timeoutMs: 10000, intervalMs: 50 }));
      // Deleted like any computer: gone.
      const del = await s.call({ computer_id: id }, { name: 'computer_delete' });
      assert.equal(del.isError, false, JSON.stringify(del));
      assert.equal(await inspect(containerName(id)), null);
    } finally {
      await s.close();
    }
    // Shutdown removes the waiting ones.
    assert.ok(await waitFor(async () => (await allOf(d)).length === 0, { timeoutMs: 15000 }), 'nothing left');
  });

  it('a restarted server finds a taken computer; no start removes waiting containers (a killed run\'s end with their lease)', async () => {
    const d = driver('restart');
    const id = cid('survives');
    const a = await poolServer(d, 1);
    await full(a, 1);
    await a.exec({ computer_id: id, command: 'echo kept > /tmp/mark' });
    await full(a, 1, 1);
    await a.signal('SIGKILL');
    const left = await waiting(d);
    assert.equal(left.length, 1, 'the killed run left one waiting');
    // Attack (it failed before): a server starting with the same engine and --driver-id removed
    // every waiting container of that id at once, also a live server's, and one being taken.
    // Now only a lease ends them: a killed run's within --lease-timeout, a live server's never.
    const b = await poolServer(d, 1);
    try {
      await full(b, 1);
      await sleep(1000);
      const now = (await waiting(d)).map((w) => w.id);
      assert.ok(now.includes(left[0].id), 'a start removes no waiting container');
      assert.equal(now.length, 2, 'the killed run\'s and the new server\'s own');
      const list = (await b.call({}, { name: 'computer_list' })).structuredContent.computers;
      assert.deepEqual(list.map((x) => x.computer_id), [id]);
      const r = await b.exec({ computer_id: id, command: 'cat /tmp/mark' });
      assert.equal(r.stdout, 'kept\n');
      const fresh = await b.exec({ computer_id: cid('from-pool'), command: 'echo fresh' });
      assert.equal(fresh.stdout, 'fresh\n');
    } finally {
      await b.close();
    }
  });

  it('a waiting container killed is never handed out', async () => {
    const d = driver('killed');
    const s = await poolServer(d, 1);
    try {
      await full(s, 1);
      const [w] = await waiting(d);
      await docker(['kill', w.id]);
      const id = cid('after-kill');
      const r = await s.exec({ computer_id: id, command: 'echo alive' });
      assert.equal(r.stdout, 'alive\n');
      assert.ok(await waitFor(async () => (await inspect(containerName(id))) !== null, { timeoutMs: 10000, intervalMs: 50 }));
      const c = await inspect(containerName(id));
      assert.ok(!c.Id.startsWith(w.id), 'not the killed container');
    } finally {
      await s.close();
    }
  });

  it('a waiting container gone bad (paused) is never handed out', async () => {
    const d = driver('paused');
    const s = await poolServer(d, 1);
    try {
      await full(s, 1);
      const [w] = await waiting(d);
      assert.equal((await docker(['pause', w.id])).code, 0);
      const id = cid('after-pause');
      const r = await s.exec({ computer_id: id, command: 'echo fine' });
      assert.equal(r.stdout, 'fine\n');
      assert.ok(await waitFor(async () => (await inspect(containerName(id))) !== null, { timeoutMs: 10000, intervalMs: 50 }));
      assert.ok(!(await inspect(containerName(id))).Id.startsWith(w.id), 'not the paused container');
      assert.match(s.stderr(), /removing kilntainers-pool-\S+: its exec helper does not answer/);
    } finally {
      await s.close();
    }
  });

  it('a waiting container paused is removed and replaced by the pool before any take', async () => {
    // A take asks a waiting helper nothing when it answered under 5 s ago: the pool asks each
    // one again every 3 s, so one gone bad meanwhile is found without a take.
    const d = driver('recheck');
    const s = await poolServer(d, 1);
    try {
      await full(s, 1);
      const [w] = await waiting(d);
      assert.equal((await docker(['pause', w.id])).code, 0);
      assert.ok(await waitFor(async () => /removing kilntainers-pool-\S+: its exec helper does not answer/.test(s.stderr()),
        { timeoutMs: 15000, intervalMs: 100 }), 'the paused container is found by the pool itself');
      await full(s, 1, 1);
      const now = (await waiting(d)).map((x) => x.id);
      assert.ok(!now.includes(w.id), 'the paused container is gone');
      assert.equal(now.length, 1, 'and replaced');
    } finally {
      await s.close();
    }
  });

  it('a take that finds the pool empty gets the refill under way, not a cold creation', async () => {
    const d = driver('refillwait');
    const s = await poolServer(d, 1);
    try {
      await full(s, 1);
      const a = cid('took-last'), b = cid('waits');
      assert.equal((await s.exec({ computer_id: a, command: 'echo a' })).stdout, 'a\n');
      // With the pool of 1 empty, the refill starts at a's take and takes a container's start:
      // b comes while it runs (before, b was made cold).
      await sleep(100);
      assert.equal((await s.exec({ computer_id: b, command: 'echo b' })).stdout, 'b\n');
      assert.ok(await waitFor(async () => (await inspect(containerName(b))) !== null, { timeoutMs: 10000, intervalMs: 50 }));
      const c = await inspect(containerName(b));
      assert.equal(c.Config.Labels['kilntainers.pool'], d, 'a pool container');
      assert.equal(c.Config.Labels['kilntainers.computer-id'], undefined, 'not a cold one');
    } finally {
      await s.close();
    }
  });

  it('a burst larger than the pool: every computer ready', async () => {
    const d = driver('burst');
    const s = await poolServer(d, 1);
    try {
      await full(s, 1);
      const ids = Array.from({ length: 5 }, (_, i) => cid(`burst-${i}`));
      const rs = await Promise.all(ids.map((id) => s.exec({ computer_id: id, command: `echo ${id}` })));
      assert.deepEqual(rs.map((r) => r.stdout), ids.map((id) => `${id}\n`));
      const list = (await s.call({}, { name: 'computer_list' })).structuredContent.computers;
      assert.deepEqual(list.map((x) => x.computer_id).sort(), [...ids].sort());
    } finally {
      await s.close();
    }
  });

  it('a burst larger than the pool grows it for the next one, up to --warm-pool-max', async () => {
    const d = driver('grow');
    const s = await poolServer(d, 1, ['--warm-pool-max', '3']);
    try {
      await full(s, 1);
      const ids = Array.from({ length: 5 }, (_, i) => cid(`grow-${i}`));
      const rs = await Promise.all(ids.map((id) => s.exec({ computer_id: id, command: 'echo up' })));
      assert.deepEqual(rs.map((r) => r.stdout), ids.map(() => 'up\n'));
      assert.match(s.stderr(), /warm pool: a new computer found none ready; growing \(up to 3\)/);
      // Three wait now (its misses grew it; --warm-pool-max holds it there). The pool may have
      // been full of three during the burst already: count the waiting containers.
      assert.ok(await waitFor(async () => (await waiting(d)).length === 3, { timeoutMs: 30000, intervalMs: 100 }),
        'three waiting');
      await sleep(1500);
      assert.equal((await waiting(d)).length, 3, 'no more than --warm-pool-max');
      // The next burst of three finds them ready.
      const before = new Set((await waiting(d)).map((w) => w.id));
      const next = Array.from({ length: 3 }, (_, i) => cid(`grown-${i}`));
      await Promise.all(next.map((id) => s.exec({ computer_id: id, command: 'true' })));
      for (const id of next) {
        assert.ok(await waitFor(async () => (await inspect(containerName(id))) !== null, { timeoutMs: 10000, intervalMs: 50 }));
        const c = await inspect(containerName(id));
        assert.ok([...before].some((w) => c.Id.startsWith(w)), `${id} was a waiting container`);
      }
    } finally {
      await s.close();
    }
    assert.ok(await waitFor(async () => (await allOf(d)).length === 0, { timeoutMs: 15000 }), 'nothing left');
  });

  // With --warm-pool-shrink-after 6 (the default, 30 s, is checked in the first case: its
  // startup line; the same field makes the step down and its log line).
  it('a grown pool shrinks back to --warm-pool --warm-pool-shrink-after seconds after its last miss, once full', async () => {
    const d = driver('shrink');
    const s = await poolServer(d, 1, ['--warm-pool-max', '2', '--warm-pool-shrink-after', '6']);
    try {
      await full(s, 1);
      assert.match(s.stderr(), /one off per 6 s without a miss/);
      const burst = Date.now();   // the miss comes after this
      // One takes the waiting container, the other finds none: the pool grows to two.
      await Promise.all([cid('shrink-a'), cid('shrink-b')].map((id) => s.exec({ computer_id: id, command: 'true' })));
      await full(s, 2);
      assert.ok(await waitFor(async () => /warm pool: back to 1 \(no burst for 6 s\)/.test(s.stderr()),
        { timeoutMs: 30000, intervalMs: 200 }), 'back to 1');
      assert.ok(Date.now() - burst >= 6000, 'not before its time');
      assert.ok(await waitFor(async () => (await waiting(d)).length === 1, { timeoutMs: 15000 }), 'one waits');
    } finally {
      await s.close();
    }
  });

  it('the image changed under the pool: the new computer runs the new image', async () => {
    const d = driver('image');
    const tag = `msc-pool-test-${RUN}:latest`;
    assert.equal((await docker(['tag', DEFAULT_IMAGE, tag])).code, 0);
    const s = await poolServer(d, 1, ['--image', tag]);
    try {
      await full(s, 1);
      const build = await docker(['build', '-q', '-t', tag, '-'], {
        input: `FROM ${DEFAULT_IMAGE}\nRUN echo rebuilt > /rebuilt\n`,
      });
      assert.equal(build.code, 0, build.stderr);
      const newId = (await docker(['image', 'inspect', '-f', '{{.Id}}', tag])).stdout.trim();
      const id = cid('new-image');
      const r = await s.exec({ computer_id: id, command: 'cat /rebuilt' });
      assert.equal(r.stdout, 'rebuilt\n');
      assert.ok(await waitFor(async () => (await inspect(containerName(id))) !== null, { timeoutMs: 10000, intervalMs: 50 }));
      assert.equal((await inspect(containerName(id))).Image, newId);
    } finally {
      await s.close();
      await docker(['rmi', '-f', tag]);
    }
  });

  it('stopped while the pool refills: nothing left', async () => {
    const d = driver('stop');
    const s = await poolServer(d, 3);
    await waitFor(async () => (await allOf(d)).length >= 1, { timeoutMs: 15000, intervalMs: 50 });
    await s.signal('SIGTERM');
    assert.ok(await waitFor(async () => (await allOf(d)).length === 0, { timeoutMs: 15000 }),
      `left: ${(await allOf(d)).join(' ')}`);
  });
});

// Issue 27: with --tokens-file, a temporary computer records its principal in the label
// kilntainers.principal like a permanent one, so it is made cold: a waiting container's labels
// cannot change (a taken one recorded nobody, so another principal could act on it). No call
// could take a pooled container then, so the pool is off: it made two nobody used.
describe('warm pool and principals', () => {
  it('a principal\'s temporary computer is labelled with its principal; the pool is off', async () => {
    const d = driver('principal');
    const s = await startPrincipalServer(withPoolFlag(['--driver-id', d, '--warm-pool', '2']), {});
    const id = cid('pooled-principal');
    try {
      assert.ok(await waitFor(() => /warm pool: off: with --tokens-file/.test(s.stderr()),
        { timeoutMs: 30000, intervalMs: 50 }), `the pool says it is off: ${s.stderr().slice(-2000)}`);
      const r = await s.tool('alice', 'terminal_execute', { computer_id: id, command: 'echo hi' });
      assert.equal(r.structuredContent?.stdout, 'hi\n', JSON.stringify(r));
      const c = await inspect(containerName(id));
      assert.ok(c, 'the computer has its name');
      assert.match(c.Config.Labels['kilntainers.principal'] ?? '', /\S/, 'the principal is recorded');
      const bob = await s.tool('bob', 'computer_list', {});
      assert.doesNotMatch(JSON.stringify(bob), new RegExp(id), 'bob does not see it');
      await sleep(1000);      // what a pool would have made by now
      assert.deepEqual(await allOf(d), [], 'no waiting container made');
    } finally {
      await s.stop();
    }
    assert.ok(await waitFor(async () => (await allOf(d)).length === 0, { timeoutMs: 15000 }), 'nothing left');
  });
});
