// Leases (issue 17): a temporary computer ends by itself once no server renews its lease; a
// permanent one never does. All with --lease-timeout 3 (seconds), so "gone within the lease plus
// 10 s" is 13 s. kill -9 of the all-in-one server (a command running on one computer, another
// idle), kill -9 and SIGSTOP of the driver in the split layout, a session idle (and a command
// running) longer than the lease, and the sandboxed code trying to keep its own orphan alive.

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer, cid, containerOf, cleanupContainers, assertReplyShape, textOf, waitFor, waitExit,
  run, sleep, docker, containerName, PREFIX,
} from './lib.mjs';

after(() => cleanupContainers());

// No network: leases need none, and these tests then do not depend on the sandbox network's state.
const LEASE = ['--lease-timeout', '3', '--no-network'];
const GONE_MS = 13000;

/** Waits until the computer's container is gone; returns the seconds it took (or fails). */
async function goneWithin(id, ms, since) {
  const ok = await waitFor(async () => (await containerOf(id)) === null, { timeoutMs: ms, intervalMs: 250 });
  assert.ok(ok, `container of ${id} still there ${ms} ms after its server died`);
  return (Date.now() - since) / 1000;
}

/** Pids of every descendant of `pid` whose command name starts with `comm`. */
async function descendants(pid, comm) {
  const ps = await run('ps', ['-eo', 'pid=,ppid=,comm=']);
  const kids = new Map();
  const names = new Map();
  for (const line of ps.stdout.split('\n')) {
    const [p, pp, c] = line.trim().split(/\s+/);
    if (!p) continue;
    names.set(Number(p), c);
    if (!kids.has(Number(pp))) kids.set(Number(pp), []);
    kids.get(Number(pp)).push(Number(p));
  }
  const out = [];
  const stack = [pid];
  while (stack.length) {
    for (const k of kids.get(stack.pop()) ?? []) {
      if (names.get(k)?.startsWith(comm)) out.push(k);
      stack.push(k);
    }
  }
  return out;
}

const LIFECYCLE = { env: { ENABLE_LIFECYCLE_TOOLS: 'true' } };

/** computer_id -> lease text, from computer_list. */
async function leases(s) {
  const res = await s.call({}, { name: 'computer_list' });
  assert.ok(!res.isError, textOf(res));
  return Object.fromEntries(res.structuredContent.computers.map((c) => [c.computer_id, c.lease ?? null]));
}

const entrypoint = async (id) => (await containerOf(id))?.Config?.Entrypoint ?? [];

/** A permanent computer with a file in it, made by server s. */
async function makePermanent(s, id) {
  const sc = assertReplyShape(await s.call({ computer_id: id, temporary: false, command: 'echo kept > /root/kept' }));
  assert.equal(sc.exit_code, 0);
  assert.ok(!(await entrypoint(id)).includes('--lease-ms'), 'a permanent computer has no lease');
}

/** Checks with a fresh server that the permanent computer kept its file. */
async function permanentKept(id) {
  const s = await startServer(LEASE);
  try {
    const sc = assertReplyShape(await s.call({ computer_id: id, temporary: false, command: 'cat /root/kept' }));
    assert.equal(sc.stdout, 'kept\n');
    await s.call({ computer_id: id, temporary: false, command: 'true' });
  } finally {
    await s.close();
  }
}

describe('leases: the all-in-one server', () => {
  it('kill -9 (a command running on one temporary, another idle): both gone within lease+10 s, the permanent keeps its files', async () => {
    const s = await startServer(LEASE, LIFECYCLE);
    const busy = cid('busy');
    const idle = cid('idle');
    const perm = cid('perm');
    let other;
    try {
      assertReplyShape(await s.call({ computer_id: idle, command: 'true' }));
      assertReplyShape(await s.call({ computer_id: busy, command: 'true' }));
      assert.deepEqual((await entrypoint(busy)).slice(-2), ['--lease-ms', '3000']);
      await makePermanent(s, perm);
      const mine = await leases(s);
      assert.equal(mine[busy], 'renewed while in use');
      assert.equal(mine[perm], null);
      // Another server, which does not hold them, sees their leases run out unless renewed.
      other = await startServer(LEASE, LIFECYCLE);
      const seen = await leases(other);
      assert.match(seen[idle] ?? '', /^expires in [0-3] s unless renewed$/, JSON.stringify(seen));
      assert.equal(seen[perm], null);
      const running = s.call({ computer_id: busy, command: 'sleep 120' }, { timeoutMs: 150000 }).catch(() => null);
      await sleep(500);
      const since = Date.now();
      s.proc.kill('SIGKILL');
      await waitExit(s.proc, 5000);
      await running;
      const [tb, ti] = await Promise.all([goneWithin(busy, GONE_MS, since), goneWithin(idle, GONE_MS, since)]);
      process.stderr.write(`# temporaries gone ${tb.toFixed(1)} s (busy) and ${ti.toFixed(1)} s (idle) after kill -9\n`);
      assert.ok((await containerOf(perm))?.State?.Running, 'the permanent computer is still running');
    } finally {
      await s.close();
      await other?.close();
    }
    await permanentKept(perm);
  });

  it('a host that sends SIGTERM and SIGKILL 100 ms later leaves nothing behind once the lease runs out', async () => {
    const s = await startServer(LEASE);
    const id = cid('sigterm');
    try {
      assertReplyShape(await s.call({ computer_id: id, command: 'true' }));
      const since = Date.now();
      s.proc.kill('SIGTERM');
      await sleep(100);
      s.proc.kill('SIGKILL');
      await waitExit(s.proc, 5000);
      await goneWithin(id, GONE_MS, since);
    } finally {
      await s.close();
    }
  });

  it('a session idle longer than the lease, and a command longer than it, keep their computer', async () => {
    const s = await startServer(LEASE);
    const id = cid('held');
    try {
      assertReplyShape(await s.call({ computer_id: id, command: 'echo x > /root/f' }));
      await sleep(5000);
      let sc = assertReplyShape(await s.call({ computer_id: id, command: 'sleep 4; cat /root/f' }, { timeoutMs: 30000 }));
      assert.equal(sc.stdout, 'x\n');
      sc = assertReplyShape(await s.call({ computer_id: id, command: 'cat /root/f' }));
      assert.equal(sc.stdout, 'x\n');
    } finally {
      await s.close();
    }
  });

  it('docker pause past the lease, then unpause: a held temporary lives on', async () => {
    const s = await startServer(LEASE);
    const id = cid('paused');
    try {
      assertReplyShape(await s.call({ computer_id: id, command: 'echo p > /root/f' }));
      assert.equal((await docker(['pause', containerName(id)])).code, 0);
      await sleep(5000);
      assert.equal((await docker(['unpause', containerName(id)])).code, 0);
      await sleep(3500); // past the helper's grace: only the driver's renewals keep it now
      const sc = assertReplyShape(await s.call({ computer_id: id, command: 'cat /root/f' }));
      assert.equal(sc.stdout, 'p\n');
    } finally {
      await s.close();
    }
  });

  it('the sandboxed code cannot renew its own lease: its orphan still ends', async () => {
    const s = await startServer(LEASE);
    const id = cid('selfrenew');
    // Renews /.msc/lease for a day every 300 ms from inside the computer, as the driver would.
    const renew = 'use IO::Socket::UNIX; $SIG{PIPE} = "IGNORE"; for (1..400) { ' +
      'my $c = IO::Socket::UNIX->new(Peer => "/.msc/lease") or next; ' +
      'print $c "MSCL\\x01\\x01\\0\\0" . pack("N", 86400000) . "\\0\\0\\0\\0"; ' +
      'my $r = ""; $c->read($r, 16); ' +
      'if (!-e "/root/n") { open(my $f, ">", "/root/n.t"); print $f length($r); close $f; rename "/root/n.t", "/root/n" } ' +
      'select(undef, undef, undef, 0.3) }';
    try {
      assertReplyShape(await s.call({ computer_id: id, command: 'true' }));
      const sc = assertReplyShape(await s.call({ computer_id: id, command: `setsid nohup perl -e '${renew}' >/dev/null 2>&1 & ` +
        'for i in $(seq 300); do [ -e /root/n ] && break; sleep 0.1; done; cat /root/n' }, { timeoutMs: 60000 }));
      assert.equal(sc.stdout, '0', 'the helper answers no renewal from inside the computer');
      const since = Date.now();
      s.proc.kill('SIGKILL');
      await waitExit(s.proc, 5000);
      await goneWithin(id, GONE_MS, since);
    } finally {
      await s.close();
    }
  });
});

describe('leases: containers without a lease-keeping helper (reference-made, fast exec off)', () => {
  const NOFX = { env: { MSC_FAST_EXEC: '0' } };
  const refRun = (id) => docker(['run', '-d', '--rm', '--name', containerName(id), '--label', 'kilntainers=true',
    '--label', `kilntainers.computer-id=${id}`, '--label', 'kilntainers.temporary=true',
    '--label', 'kilntainers.image=debian:bookworm-slim', 'debian:bookworm-slim', 'tail', '-f', '/dev/null']);

  it('the next server removes at once those whose holder died; one nobody of ours held stays', async () => {
    const mine = cid('nofx');
    const adopted = cid('ref-held');
    const untouched = cid('ref-free');
    assert.equal((await refRun(adopted)).code, 0);
    assert.equal((await refRun(untouched)).code, 0);
    const a = await startServer(LEASE, NOFX);
    try {
      assertReplyShape(await a.call({ computer_id: mine, command: 'true' }));
      assert.ok(!(await entrypoint(mine)).includes('--lease-ms'));
      assertReplyShape(await a.call({ computer_id: adopted, command: 'true' }));
      a.proc.kill('SIGKILL');
      await waitExit(a.proc, 5000);
    } finally {
      await a.close();
    }
    // Past the lease, and no server of this driver identity runs: nothing ends them. One of another
    // identity (on the same engine) reaps meanwhile: the lock files are not its to judge (it took
    // them for "not ours", dropped them, and the orphans stayed for good; so did a server of another
    // engine, to which they were "gone").
    const stranger = await startServer([...LEASE, '--driver-id', `${PREFIX}other`]);
    try {
      await sleep(4000);
    } finally {
      await stranger.close();
    }
    assert.ok(await containerOf(mine));
    assert.ok(await containerOf(adopted));
    const since = Date.now();
    const b = await startServer(LEASE);
    try {
      // At once: the first reaping round runs as the driver starts (the engine may be slow to remove).
      await goneWithin(mine, 10000, since);
      await goneWithin(adopted, 10000, since);
      process.stderr.write(`# the next server removed them ${((Date.now() - since) / 1000).toFixed(1)} s after its start\n`);
      assert.ok((await containerOf(untouched))?.State?.Running, 'a container we never held is not ours to reap');
    } finally {
      await b.close();
    }
  });

  it('a computer a live server holds is never reaped by another; once its holder dies it is', async () => {
    const id = cid('nofx-live');
    const a = await startServer(LEASE, NOFX);
    const b = await startServer(LEASE);
    try {
      assertReplyShape(await a.call({ computer_id: id, command: 'echo a > /root/a' }));
      await sleep(4000); // several reaping rounds of b
      const sc = assertReplyShape(await a.call({ computer_id: id, command: 'cat /root/a' }));
      assert.equal(sc.stdout, 'a\n');
      const since = Date.now();
      a.proc.kill('SIGKILL');
      await waitExit(a.proc, 5000);
      await goneWithin(id, GONE_MS, since);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('leases: the split layout', () => {
  it('kill -9 of the driver: the temporary is gone within lease+10 s, the permanent keeps its files', async () => {
    const s = await startServer(LEASE, { mode: 'split' });
    const tmp = cid('split-tmp');
    const perm = cid('split-perm');
    try {
      assertReplyShape(await s.call({ computer_id: tmp, command: 'true' }));
      assert.deepEqual((await entrypoint(tmp)).slice(-2), ['--lease-ms', '3000'], 'made with the lease-keeping helper');
      await makePermanent(s, perm);
      const [driver] = await descendants(s.pid, 'msc-docker-driv');
      assert.ok(driver, 'found the driver process');
      const since = Date.now();
      process.kill(driver, 'SIGKILL');
      const t = await goneWithin(tmp, GONE_MS, since);
      process.stderr.write(`# temporary gone ${t.toFixed(1)} s after kill -9 of the driver\n`);
      assert.ok((await containerOf(perm))?.State?.Running);
    } finally {
      await s.close();
    }
    await permanentKept(perm);
  });

  it('SIGSTOP of the driver past the lease, then SIGCONT: the temporary ends, the permanent is kept and the server goes on', async () => {
    const s = await startServer(LEASE, { mode: 'split' });
    const tmp = cid('stop-tmp');
    const perm = cid('stop-perm');
    try {
      assertReplyShape(await s.call({ computer_id: tmp, command: 'true' }));
      assert.deepEqual((await entrypoint(tmp)).slice(-2), ['--lease-ms', '3000'], 'made with the lease-keeping helper');
      await makePermanent(s, perm);
      const [driver] = await descendants(s.pid, 'msc-docker-driv');
      assert.ok(driver, 'found the driver process');
      const since = Date.now();
      process.kill(driver, 'SIGSTOP');
      try {
        await goneWithin(tmp, GONE_MS, since);
      } finally {
        process.kill(driver, 'SIGCONT');
      }
      let sc = assertReplyShape(await s.call({ computer_id: perm, temporary: false, command: 'cat /root/kept' }));
      assert.equal(sc.stdout, 'kept\n');
      // The temporary's session learns that its computer ended; the next call starts a new one.
      const res = await s.call({ computer_id: tmp, command: 'echo again' });
      if (res.isError) {
        assert.match(textOf(res), /died|not running|gone|ended|unavailable/i);
        sc = assertReplyShape(await s.call({ computer_id: tmp, command: 'echo again' }));
      } else {
        sc = assertReplyShape(res);
      }
      assert.equal(sc.stdout, 'again\n');
    } finally {
      await s.close();
    }
  });
});
