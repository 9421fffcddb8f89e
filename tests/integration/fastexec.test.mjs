// The fast exec path (issue 6): the exec helper as each computer's PID 1, answering on a unix
// socket in the computer's own small /.msc tmpfs. Results must match the Engine API exec (MSC_FAST_EXEC=0) exactly;
// computers made before (tail -f /dev/null) fall back; restart, adoption by a new server, a killed
// helper session and timeouts are covered.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import {
  startServer, cid, containerOf, containerName, cleanupContainers, containerProcesses, docker,
  textOf, waitFor, TIMEOUT_MARKER, DEFAULT_IMAGE,
} from './lib.mjs';

const LIFECYCLE = { ENABLE_LIFECYCLE_TOOLS: 'true' };
const ROOT = process.env.MSC_FAST_EXEC_DIR
  || (process.getuid?.() === 0 ? '/run/mcp-sandbox-computer' : null);
// The exec's parent: the helper's session process (a fork of PID 1) on the fast path; outside the
// PID namespace (no /proc/$PPID) on the Engine path.
const WHO = 'cat /proc/$PPID/cmdline 2>/dev/null | tr "\\0" " "; echo';
const isFast = (sc) => sc.stdout.startsWith('/.msc-helper');

let fast;
let engine;

before(async () => {
  // Whole outputs, to compare them byte for byte (a cut one names a random file).
  fast = await startServer(['--timeout', '20', '--reply-output-limit', '0'], { env: LIFECYCLE });
  engine = await startServer(['--timeout', '20', '--reply-output-limit', '0'], { env: { ...LIFECYCLE, MSC_FAST_EXEC: '0' } });
});

after(async () => {
  await fast?.close();
  await engine?.close();
  await cleanupContainers([containerName(cid('old'))]);
});

const tool = (s, name, args) => s.call(args, { name });

describe('fast path', () => {
  const id = cid('fx');

  it('a new computer runs the helper as PID 1 and execs through it', async () => {
    const sc = await fast.exec({ computer_id: id, temporary: false, command: WHO });
    assert.ok(isFast(sc), `parent: ${sc.stdout}`);
    const c = await containerOf(id);
    assert.deepEqual(c.Config.Entrypoint, ['/.msc-helper', '/.msc/sock']);
    assert.notEqual(c.HostConfig.Init, true);
    assert.ok(c.HostConfig.Tmpfs['/.msc'].includes('size=64k'), JSON.stringify(c.HostConfig.Tmpfs));
    if (ROOT) assert.ok(!existsSync(`${ROOT}/${containerName(id)}`), 'no host folder per computer');
    const procs = await containerProcesses(containerName(id));
    assert.ok(procs.some((p) => p.startsWith('/.msc-helper')), procs.join('\n'));
  });

  it('results are identical to the Engine API exec', async () => {
    const cases = [
      { command: 'echo hi; echo err >&2; exit 3' },
      { args: ['printf', '%s|', 'a b', '', 'c'] },
      { command: 'cat; echo; wc -c', stdin: 'hello\nworld' },
      { command: 'pwd; ls -d .', working_directory: '/tmp' },
      { command: 'true', working_directory: '/nonexistent' },
      { args: ['no-such-command'] },
      { args: ['/etc'] },
      { command: "printf '\\377\\376abc\\000def'" },
      { command: 'env | grep -v KILNTAINERS_EXEC | sort; umask; id' },
      { command: 'kill -9 $$' },
      { command: 'head -c 3000000 /dev/zero' },
      { command: 'echo partial; sleep 5', timeout: 1 },
      { command: 'exec >&- 2>&-; sleep 5', timeout: 1 },
      { command: 'seq 1 20000; seq 1 5000 >&2' },
    ];
    for (const c of cases) {
      const a = await fast.call({ computer_id: id, temporary: false, ...c });
      const b = await engine.call({ computer_id: id, temporary: false, ...c });
      assert.equal(a.isError ?? false, b.isError ?? false, JSON.stringify(c));
      if (a.isError) {
        assert.equal(textOf(a), textOf(b), JSON.stringify(c));
        continue;
      }
      for (const k of ['stdout', 'stderr', 'exit_code', 'computer_id', 'temporary']) {
        assert.deepEqual(a.structuredContent[k], b.structuredContent[k], `${k} of ${JSON.stringify(c)}`);
      }
    }
  });

  it('a timeout leaves nothing running (group, setsid escapees)', async () => {
    const sc = await fast.exec({ computer_id: id, temporary: false, timeout: 1,
      command: 'sleep 101 & setsid sleep 102 & nohup sleep 103 >/dev/null 2>&1 & sleep 104' });
    assert.equal(sc.exit_code, 124);
    assert.ok(sc.stderr.includes(TIMEOUT_MARKER(1)), sc.stderr);
    const procs = await containerProcesses(containerName(id));
    assert.ok(!procs.some((p) => /sleep 10[1-4]/.test(p)), procs.join('\n'));
  });

  it('a background child holding the pipes does not hang the call', async () => {
    const t0 = Date.now();
    const sc = await fast.exec({ computer_id: id, temporary: false, command: 'sleep 105 & echo started' });
    assert.equal(sc.stdout, 'started\n');
    assert.equal(sc.exit_code, 0);
    assert.ok(Date.now() - t0 < 5000);
    // A detached daemon with its output redirected keeps running, as with docker exec.
    await fast.exec({ computer_id: id, temporary: false, command: 'setsid sleep 106 >/dev/null 2>&1 </dev/null &' });
    const procs = await containerProcesses(containerName(id));
    assert.ok(procs.some((p) => p === 'sleep 106'), procs.join('\n'));
    assert.ok(!procs.some((p) => p === 'sleep 105'), procs.join('\n'));
  });

  it('killing the helper session mid-command: a clear error, then recovery', async () => {
    const res = await fast.call({ computer_id: id, temporary: false,
      command: 'sleep 107 & echo partial; kill -9 $PPID; sleep 30' });
    assert.equal(res.isError, true, JSON.stringify(res).slice(0, 400));
    // The agent reads the generic text (reference §12); the helper's details go to stderr.
    assert.match(textOf(res), /Sandbox execution failed/);
    assert.ok(await waitFor(() => /exec helper/.test(fast.stderr()), { timeoutMs: 5000, intervalMs: 100 }),
      'the details are on stderr');
    const sc = await fast.exec({ computer_id: id, temporary: false, command: WHO });
    assert.ok(isFast(sc), sc.stdout);
    const procs = await containerProcesses(containerName(id));
    assert.ok(!procs.some((p) => p === 'sleep 107'), procs.join('\n'));
  });

  it('SIGKILL to PID 1 from inside is ignored; the helper keeps serving', async () => {
    await fast.exec({ computer_id: id, temporary: false, command: 'kill -9 1; true' });
    const sc = await fast.exec({ computer_id: id, temporary: false, command: WHO });
    assert.ok(isFast(sc), sc.stdout);
  });

  it('survives a restart (files kept, helper back)', async () => {
    await fast.exec({ computer_id: id, temporary: false, command: 'echo kept > /root/f' });
    const r = await tool(fast, 'computer_restart', { computer_id: id });
    assert.equal(r.isError ?? false, false, textOf(r));
    const sc = await fast.exec({ computer_id: id, temporary: false, command: `cat /root/f; ${WHO}` });
    assert.ok(sc.stdout.startsWith('kept\n/.msc-helper'), sc.stdout);
  });

  it('docker stop is fast (the helper forwards SIGTERM); died, then started again', async () => {
    const t0 = Date.now();
    const r = await docker(['stop', containerName(id)]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(Date.now() - t0 < 4000, `docker stop took ${Date.now() - t0} ms`);
    // As on the Engine path: the next call reports the death, the one after starts it again.
    const d = await fast.call({ computer_id: id, temporary: false, command: 'true' });
    assert.match(textOf(d), /died during command execution/);
    const sc = await fast.exec({ computer_id: id, temporary: false, command: WHO });
    assert.ok(isFast(sc), sc.stdout);
  });

  it('a new server adopts the computer and finds its socket again', async () => {
    const s2 = await startServer(['--timeout', '20']);
    try {
      const sc = await s2.exec({ computer_id: id, temporary: false, command: WHO });
      assert.ok(isFast(sc), sc.stdout);
    } finally {
      await s2.close();
    }
  });

  it('delete removes the container and leaves no host folder', async () => {
    const r = await tool(fast, 'computer_delete', { computer_id: id });
    assert.equal(r.isError ?? false, false, textOf(r));
    assert.equal(await containerOf(id), null);
    if (ROOT) assert.ok(!existsSync(`${ROOT}/${containerName(id)}`), 'no host folder');
  });
});

describe('fallback', () => {
  it('a computer made before (tail -f /dev/null) works through the Engine API exec', async () => {
    const id = cid('old');
    const r = await docker(['run', '-d', '--name', containerName(id), '--label', 'kilntainers=true',
      '--label', `kilntainers.computer-id=${id}`, '--label', 'kilntainers.temporary=false',
      '--label', `kilntainers.image=${DEFAULT_IMAGE}`, DEFAULT_IMAGE, 'tail', '-f', '/dev/null']);
    assert.equal(r.code, 0, r.stderr);
    const sc = await fast.exec({ computer_id: id, temporary: false, command: `echo old; ${WHO}` });
    assert.equal(sc.stdout, 'old\n\n');
    const t = await fast.exec({ computer_id: id, temporary: false, timeout: 1, command: 'sleep 108 & sleep 109' });
    assert.equal(t.exit_code, 124);
    const procs = await containerProcesses(containerName(id));
    assert.ok(!procs.some((p) => /sleep 10[89]/.test(p)), procs.join('\n'));
  });

  it('MSC_FAST_EXEC=0 creates computers without the helper', async () => {
    const id = cid('nofx');
    const sc = await engine.exec({ computer_id: id, temporary: true, command: WHO });
    assert.equal(sc.stdout, '\n');
    const c = await containerOf(id);
    assert.deepEqual(c.Config.Cmd, ['tail', '-f', '/dev/null']);
  });
});
