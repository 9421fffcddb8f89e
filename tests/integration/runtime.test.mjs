// The OCI runtime of computers (--runtime NAME, env KILNTAINERS_RUNTIME; issue 32), under gVisor's
// runsc (MSC_TEST_RUNTIME, default runsc; scripts/setup.sh installs it and registers it with the
// engine): computers run on gVisor's own kernel; commands, exit codes, stdin, the timeout's kill,
// the output limit, the warm pool and background processes work there; the network modes none
// and open hold; computer_list says each computer's runtime; a permanent computer made under
// one runtime keeps working for a server started with another; and the bad input: a runtime the
// engine does not know stops the start saying what to do, a second name that disagrees is
// refused. The main exec cases and the container-escape suite also run whole under runsc
// (tests/integration/meson.build: runsc/exec, runsc/sandbox).
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer, runCli, cid, containerOf, cleanupContainers, waitFor, TIMEOUT_MARKER, LIMIT_MARKER, ENGINE,
} from './lib.mjs';

const RT = process.env.MSC_TEST_RUNTIME || 'runsc';
const LIFECYCLE = { ENABLE_LIFECYCLE_TOOLS: 'true' };
const ERR = 'kilntainers: error: ';
const ENGINE_FLAGS = ENGINE === 'podman' ? ['--engine', 'podman'] : [];

after(() => cleanupContainers());

const rowOf = async (s, id) => {
  const list = await s.client.callTool({ name: 'computer_list', arguments: {} });
  return list.structuredContent.computers.find((c) => c.computer_id === id);
};

describe(`computers under --runtime ${RT}`, () => {
  it('run on gVisor\'s kernel: output, exit codes, stdin, working directory, files kept', async () => {
    const s = await startServer(['--runtime', RT, '--timeout', '20'], { env: LIFECYCLE });
    const id = cid('gv');
    try {
      const k = await s.exec({ computer_id: id, command: 'uname -r; dmesg 2>/dev/null | head -1' });
      // gVisor's kernel says 4.4.0 and boots with its own log lines, whatever the host runs.
      assert.equal(k.stdout.split('\n')[0], '4.4.0', k.stdout);
      assert.match(k.stdout, /gVisor/, k.stdout);
      assert.equal((await containerOf(id)).HostConfig.Runtime, RT);
      assert.equal((await s.exec({ computer_id: id, command: 'exit 42' })).exit_code, 42);
      assert.equal((await s.exec({ computer_id: id, command: 'cat', stdin: 'from stdin' })).stdout, 'from stdin');
      await s.exec({ computer_id: id, command: 'mkdir -p /srv/w && echo kept > /srv/w/f' });
      const w = await s.exec({ computer_id: id, command: 'pwd; cat f', working_directory: '/srv/w' });
      assert.equal(w.stdout, '/srv/w\nkept\n');
      assert.equal((await rowOf(s, id))?.runtime, RT);
    } finally {
      await s.close();
    }
  });

  it('a timeout kills the command and its children; the output limit ends a flood', async () => {
    const s = await startServer(['--runtime', RT, '--output-limit', '4096'], { env: LIFECYCLE });
    const id = cid('gvkill');
    try {
      await s.exec({ computer_id: id, command: 'true' });
      const t0 = Date.now();
      const r = await s.exec({ computer_id: id, command: '(sleep 300 &) ; echo started; sleep 300', timeout: 2 });
      assert.equal(r.exit_code, 124);
      assert.equal(r.stderr, TIMEOUT_MARKER(2));
      assert.ok(Date.now() - t0 < 15000, `timed out in ${Date.now() - t0} ms`);
      // Nothing of it is left running.
      const left = await s.exec({ computer_id: id,
        command: 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done | grep -c "^sleep 300" || true' });
      assert.equal(left.stdout.trim(), '0', left.stdout);
      const f = await s.exec({ computer_id: id, command: 'yes' });
      assert.equal(f.stderr, LIMIT_MARKER(4096));
      assert.equal(f.stdout, '');
    } finally {
      await s.close();
    }
  });

  it('the warm pool hands out gVisor computers, and background processes run in them', async () => {
    const s = await startServer(['--runtime', RT, '--warm-pool', '1', '--tools', 'terminal,lifecycle,processes'],
      { env: LIFECYCLE });
    try {
      await waitFor(() => s.stderr().includes('warm pool: 1 of 1 ready'), { timeoutMs: 60000, intervalMs: 100 });
      const t0 = Date.now();
      const first = await s.exec({ command: 'uname -r' });
      const firstMs = Date.now() - t0;
      assert.equal(first.stdout, '4.4.0\n');
      const ctr = await containerOf(first.computer_id);
      assert.equal(ctr.HostConfig.Runtime, RT);
      assert.equal(ctr.Config.Labels['kilntainers.runtime'], RT);
      assert.ok(firstMs < 10000, `first command from the pool took ${firstMs} ms`);
      const bg = await s.call({ command: 'echo up; sleep 30', background: true });
      assert.ok(!bg.isError, JSON.stringify(bg.content));
      const pid = bg.structuredContent.process_id;
      const out = await s.call({ process_id: pid, pattern: 'up', wait_ms: 10000 }, { name: 'process_output' });
      assert.ok(!out.isError, JSON.stringify(out.content));
      assert.equal(out.structuredContent.matched, true, JSON.stringify(out.structuredContent));
      const kill = await s.call({ process_id: pid }, { name: 'process_kill' });
      assert.ok(!kill.isError, JSON.stringify(kill.content));
    } finally {
      await s.close();
    }
  });

  it('the network modes hold: none reaches nothing, open reaches no host address', async () => {
    const none = await startServer(['--runtime', RT, '--no-network']);
    try {
      const r = await none.exec({ computer_id: cid('gvnone'),
        command: 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " " | sort | tr "\\n" " "' });
      assert.equal(r.stdout.trim(), 'lo', r.stdout);
    } finally {
      await none.close();
    }
    const open = await startServer(['--runtime', RT]);
    try {
      const id = cid('gvopen');
      const ip = await open.exec({ computer_id: id,
        command: 'cat /proc/net/route | awk \'$2=="00000000"{print $3}\'' });
      assert.match(ip.stdout.trim(), /^[0-9A-F]{8}$/, `a default route: ${ip.stdout}`);
      // The gateway is the host's side of the sandbox bridge: the packet filter drops it.
      const gw = ip.stdout.trim().match(/../g).reverse().map((h) => parseInt(h, 16)).join('.');
      const r = await open.exec({ computer_id: id, timeout: 10,
        command: `timeout 4 bash -c 'exec 3<>/dev/tcp/${gw}/22' 2>/dev/null && echo reached || echo refused` });
      assert.equal(r.stdout.trim(), 'refused', r.stdout);
    } finally {
      await open.close();
    }
  });
});

describe('a permanent computer keeps its runtime across servers', () => {
  it(`made under ${RT}, it works for a server with the default runtime, and the other way round`, async () => {
    const gv = cid('gvperm');
    const rc = cid('rcperm');
    let s = await startServer(['--runtime', RT], { env: LIFECYCLE });
    try {
      await s.call({ computer_id: gv, temporary: false, command: 'echo made > /root/f' });
    } finally {
      await s.close();
    }
    s = await startServer([], { env: LIFECYCLE });
    try {
      const r = await s.exec({ computer_id: gv, temporary: false, command: 'uname -r; cat /root/f' });
      assert.equal(r.stdout, '4.4.0\nmade\n');
      assert.equal((await rowOf(s, gv))?.runtime, RT);
      await s.exec({ computer_id: rc, temporary: false, command: 'true' });
      assert.notEqual((await rowOf(s, rc))?.runtime, RT);
      // Restarted by this server, it stays under its runtime.
      const re = await s.client.callTool({ name: 'computer_restart', arguments: { computer_id: gv } });
      assert.ok(!re.isError, JSON.stringify(re.content));
      assert.equal((await s.exec({ computer_id: gv, temporary: false, command: 'uname -r' })).stdout, '4.4.0\n');
    } finally {
      await s.close();
    }
    s = await startServer(['--runtime', RT], { env: LIFECYCLE });
    try {
      const r = await s.exec({ computer_id: rc, temporary: false, command: 'uname -r' });
      assert.notEqual(r.stdout, '4.4.0\n', 'the runc computer stays on the host kernel');
      assert.equal((await containerOf(rc)).HostConfig.Runtime === RT, false);
    } finally {
      await s.close();
    }
  });
});

describe('bad input', () => {
  it('a runtime the engine does not know stops the start, saying what to do', async () => {
    const r = await runCli(['--runtime', 'no-such-runtime', ...ENGINE_FLAGS], { timeoutMs: 20000 });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, '');
    const line = r.stderr.split('\n').find((l) => l.startsWith(ERR)) ?? '';
    assert.match(line, /has no (usable )?OCI runtime 'no-such-runtime' \(it knows: [^)]*runc/, line);
    assert.ok(line.includes('apt-get install runsc'), line);
    assert.ok(line.includes(ENGINE === 'podman' ? 'containers.conf' : '/etc/docker/daemon.json'), line);
    assert.ok(line.includes(ENGINE === 'podman' ? 'restart the Podman service' : 'kill -HUP'), line);
  });

  it('the env form works the same, and two names that disagree are refused', async () => {
    const r = await runCli([...ENGINE_FLAGS], { timeoutMs: 20000, env: { KILNTAINERS_RUNTIME: 'no-such-runtime' } });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /has no (usable )?OCI runtime 'no-such-runtime'/);
    const two = await runCli(['--runtime', RT, '--docker-run-flag', '--runtime=runc', ...ENGINE_FLAGS]);
    assert.equal(two.code, 1, two.stderr);
    assert.ok(two.stderr.includes(`${ERR}--runtime ${RT} and --docker-run-flag --runtime=runc disagree: give one`),
      two.stderr);
    const bad = await runCli(['--runtime', 'a b', ...ENGINE_FLAGS]);
    assert.equal(bad.code, 1, bad.stderr);
    assert.ok(bad.stderr.includes(`${ERR}argument --runtime: invalid value: 'a b'`), bad.stderr);
  });
});
