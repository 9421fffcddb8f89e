// Docker backend specifics (§8.1, §10 test_docker_integration / test_docker_management /
// test_lifecycle_integration) plus the promised fixes: a computer that dies behind our back is
// reported (text contains "died" or "stopped") and recreated by a later call; a failed readiness
// check or a bad image leaves no container; a dead engine gives "Cannot connect to".

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer, cid, containerOf, containerName, cleanupContainers, assertReplyShape, assertToolError, textOf,
  docker, waitFor, listKilntainers, assertProviderError, CREATE_FAILED,
} from './lib.mjs';

after(() => cleanupContainers());

describe('engine connection', () => {
  for (const host of ['unix:///nonexistent.sock', 'tcp://127.0.0.1:1']) {
    it(`--docker-host ${host} → a generic isError, "Cannot connect to" on stderr, server keeps serving`, async () => {
      // A remote engine cannot get the sandbox network's host rules: networking must be off
      // (or the operator's own --network), else the server refuses to start (sandbox.test.mjs).
      const s = await startServer(['--docker-host', host, ...(host.startsWith('tcp') ? ['--no-network'] : [])]);
      try {
        const id = cid('dead-engine');
        const res = await s.call({ computer_id: id, command: 'echo hi' }, { timeoutMs: 40000 });
        // The agent reads the generic text; where the engine was sought goes to stderr.
        await assertProviderError(s, res, CREATE_FAILED, 'Cannot connect to');
        assert.equal(res.structuredContent, undefined);
        await s.client.ping();
        const res2 = await s.call({ command: 'echo again' }, { timeoutMs: 40000 });
        assert.equal(assertToolError(res2), CREATE_FAILED);
        assert.deepEqual(s.transportErrors, []);
      } finally {
        await s.close();
      }
    });
  }
});

describe('container configuration', () => {
  it('temporary: labels, name, network enabled by default', async () => {
    const s = await startServer([]);
    const id = cid('cfg-default');
    try {
      const sc = assertReplyShape(await s.call({ computer_id: id, command: 'ls /sys/class/net' }));
      assert.match(sc.stdout, /\beth0\b/, 'network interface present by default');
      const c = await containerOf(id);
      assert.equal(c.Name, `/${containerName(id)}`);
      assert.equal(c.Config.Labels['kilntainers'], 'true');
      assert.equal(c.Config.Labels['kilntainers.computer-id'], id);
      assert.equal(c.Config.Labels['kilntainers.temporary'], 'true');
      assert.equal(c.Config.Labels['kilntainers.image'], 'debian:bookworm-slim');
      assert.notEqual(c.HostConfig.NetworkMode, 'none');
      assert.equal(c.Config.Image, 'debian:bookworm-slim');
    } finally {
      await s.close();
    }
  });

  it('--no-network: only loopback inside, NetworkMode none', async () => {
    const s = await startServer(['--no-network']);
    const id = cid('cfg-nonet');
    try {
      const sc = assertReplyShape(await s.call({ computer_id: id, command: 'ls /sys/class/net' }));
      assert.equal(sc.stdout.trim(), 'lo');
      assert.equal((await containerOf(id)).HostConfig.NetworkMode, 'none');
      // no route out: a TCP connect to a public address fails (bash /dev/tcp, no curl in the image)
      const r = assertReplyShape(await s.call({ computer_id: id, command: 'timeout 3 bash -c "echo > /dev/tcp/1.1.1.1/80"' }));
      assert.notEqual(r.exit_code, 0);
    } finally {
      await s.close();
    }
  });

  it('--cpu 1.5 --memory 512m are applied', async () => {
    const s = await startServer(['--cpu', '1.5', '--memory', '512m']);
    const id = cid('cfg-limits');
    try {
      assertReplyShape(await s.call({ computer_id: id, command: 'true' }));
      const c = await containerOf(id);
      assert.equal(c.HostConfig.NanoCpus, 1500000000);
      assert.equal(c.HostConfig.Memory, 512 * 1024 * 1024);
    } finally {
      await s.close();
    }
  });

  it('--docker-run-flag values are applied, repeatable and in order', async () => {
    const s = await startServer([
      '--docker-run-flag=--pids-limit=256',
      '--docker-run-flag=--env=KT_A=first',
      '--docker-run-flag=--env=KT_B=second',
      '--docker-run-flag=--hostname=kt-host',
    ]);
    const id = cid('cfg-flags');
    try {
      const sc = assertReplyShape(await s.call({ computer_id: id, command: 'echo "$KT_A $KT_B $(hostname)"' }));
      assert.equal(sc.stdout, 'first second kt-host\n');
      assert.equal((await containerOf(id)).HostConfig.PidsLimit, 256);
    } finally {
      await s.close();
    }
  });

  it('--shell /bin/sh runs commands in sh', async () => {
    const s = await startServer(['--shell', '/bin/sh']);
    const id = cid('cfg-sh');
    try {
      const sc = assertReplyShape(await s.call({ computer_id: id, command: 'echo "[$BASH_VERSION]"; readlink /proc/$$/exe' }));
      assert.ok(sc.stdout.startsWith('[]\n'), sc.stdout);
      assert.match(sc.stdout, /dash|\/sh/);
    } finally {
      await s.close();
    }
  });

  it('permanent: temporary=false label, survives, not auto-removed', async () => {
    const s = await startServer([]);
    const id = cid('cfg-perm');
    try {
      assertReplyShape(await s.call({ computer_id: id, command: 'true', temporary: false }));
      const c = await containerOf(id);
      assert.equal(c.Config.Labels['kilntainers.temporary'], 'false');
      assert.equal(c.HostConfig.AutoRemove, false, 'a permanent container must not be --rm');
    } finally {
      await s.close();
    }
    assert.ok(await containerOf(id), 'still there');
  });
});

describe('computer death (fixed: reported, server keeps serving, recreated later)', () => {
  it('docker rm -f behind our back → next call isError ("died"/"stopped"), later call recreates', async () => {
    const s = await startServer(['--timeout', '20']);
    const id = cid('death-rm');
    try {
      assertReplyShape(await s.call({ computer_id: id, command: 'echo x > /tmp/marker' }));
      const old = (await containerOf(id)).Id;
      assert.equal((await docker(['rm', '-f', containerName(id)])).code, 0);
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(s.proc.exitCode, null, 'server process still running after the computer died');
      const res = await s.call({ computer_id: id, command: 'cat /tmp/marker' });
      const text = assertToolError(res);
      assert.match(text, /died|stopped/, text);
      await s.client.ping();
      const again = await waitFor(async () => {
        const r = await s.call({ computer_id: id, command: 'cat /tmp/marker 2>/dev/null || echo fresh' });
        return r.isError ? null : r;
      }, { timeoutMs: 20000, intervalMs: 500 });
      assert.ok(again, 'a later call succeeds again');
      const sc = assertReplyShape(again);
      assert.equal(sc.stdout, 'fresh\n', 'recreated from the base image');
      const c = await containerOf(id);
      assert.ok(c && c.Id !== old, 'a new container');
    } finally {
      await s.close();
    }
  });

  it('docker kill behind our back (default computer) → reported, then recreated', async () => {
    const s = await startServer(['--timeout', '20']);
    try {
      const d = assertReplyShape(await s.call({ command: 'true' })).computer_id;
      const { track } = await import('./lib.mjs');
      track(d);
      assert.equal((await docker(['kill', containerName(d)])).code, 0);
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(s.proc.exitCode, null, 'server still running');
      const res = await s.call({ command: 'echo hi' });
      assert.equal(res.isError, true, `expected died/stopped error, got ${JSON.stringify(res).slice(0, 300)}`);
      assert.match(textOf(res), /died|stopped/);
      const again = await waitFor(async () => {
        const r = await s.call({ command: 'echo back' });
        return r.isError ? null : r;
      }, { timeoutMs: 20000, intervalMs: 500 });
      assert.ok(again, 'a later call works again');
      assert.equal(assertReplyShape(again).stdout, 'back\n');
    } finally {
      await s.close();
    }
  });

  it('a computer killed while a command runs → that call reports died/stopped', async () => {
    const s = await startServer(['--timeout', '30']);
    const id = cid('death-mid');
    try {
      assertReplyShape(await s.call({ computer_id: id, command: 'true' }));
      const p = s.call({ computer_id: id, command: 'sleep 20; echo late' });
      await new Promise((r) => setTimeout(r, 1000));
      await docker(['rm', '-f', containerName(id)]);
      const t0 = Date.now();
      const res = await p;
      assert.ok(Date.now() - t0 < 10000, 'the running call returned soon after the death');
      assert.equal(res.isError, true, `got ${JSON.stringify(res).slice(0, 300)}`);
      assert.match(textOf(res), /died|stopped/);
      await s.client.ping();
    } finally {
      await s.close();
    }
  });
});

describe('creation failures leave no container', () => {
  it('bad image → isError mentioning the image / pull, no container', async () => {
    const s = await startServer(['--image', 'nonexistent/nonexistent:latest', '--tool-instruction-override', 'test box']);
    const id = cid('badimage');
    try {
      const res = await s.call({ computer_id: id, command: 'echo hi' }, { timeoutMs: 120000 });
      // The engine's words (the image, the registry) go to stderr, not to the agent.
      await assertProviderError(s, res, CREATE_FAILED, 'nonexistent/nonexistent');
      assert.equal(await containerOf(id), null, 'no container left');
      const leftovers = (await listKilntainers()).filter((c) => c.image === 'nonexistent/nonexistent:latest');
      assert.deepEqual(leftovers.map((c) => c.name), []);
      await s.client.ping();
    } finally {
      await s.close();
    }
  });

  for (const temporary of [true, false]) {
    it(`failed readiness check (--shell /nonexistent/shell, temporary=${temporary}) → isError, no container`, async () => {
      const s = await startServer(['--shell', '/nonexistent/shell']);
      const id = cid(`noready-${temporary ? 't' : 'p'}`);
      try {
        const res = await s.call({ computer_id: id, command: 'echo hi', temporary }, { timeoutMs: 60000 });
        await assertProviderError(s, res, CREATE_FAILED, 'readiness');
        const left = await waitFor(async () => (await containerOf(id)) === null, { timeoutMs: 10000 });
        assert.ok(left, `container ${containerName(id)} left behind: ${JSON.stringify((await containerOf(id))?.State)}`);
        await s.client.ping();
        // the failure leaves no state: a retry fails the same way (no half-registered computer)
        const res2 = await s.call({ computer_id: id, command: 'echo hi', temporary }, { timeoutMs: 60000 });
        assert.equal(assertToolError(res2), CREATE_FAILED);
      } finally {
        await s.close();
      }
    });
  }
});
