// Computer lifecycle across sessions and server processes (§4, §6.4, §10 test_lifecycle_integration):
// lazy creation, temporary computers removed at session end (stdin EOF, SIGTERM, SIGINT),
// permanent computers surviving a restart with their files and being adopted, a stopped
// permanent computer being started again on attach.

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer, cid, containerOf, cleanupContainers, assertReplyShape, track, waitFor, listKilntainers, docker,
  RANDOM_SLUG_RE,
} from './lib.mjs';

after(() => cleanupContainers());

const gone = (id, timeoutMs = 8000) => waitFor(async () => (await containerOf(id)) === null, { timeoutMs });

describe('lazy creation', () => {
  // The server talks to a recording fake engine (a unix-socket HTTP server), so the check does not
  // depend on what other processes do with the real engine at the same time.
  it('initialize, tools/list and ping create no container (no create request reaches the engine)', async () => {
    const http = await import('node:http');
    const os = await import('node:os');
    const fs = await import('node:fs');
    const dir = fs.mkdtempSync(`${os.tmpdir()}/msc-fake-engine-`);
    const sock = `${dir}/docker.sock`;
    const seen = [];
    const srv = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end('{"message":"fake engine"}');
    });
    await new Promise((r) => srv.listen(sock, r));
    try {
      const s = await startServer(['--docker-host', `unix://${sock}`]);
      try {
        await s.client.listTools();
        await s.client.ping();
        await new Promise((r) => setTimeout(r, 500));
        assert.deepEqual(seen.filter((x) => /containers\/create|\/start\b|\/exec\b/.test(x)), [],
          `engine requests before the first exec: ${JSON.stringify(seen)}`);
        // and the fake engine is really used: the first exec reaches it
        const res = await s.call({ computer_id: cid('lazy'), command: 'true' });
        assert.equal(res.isError, true);
        assert.ok(seen.length > 0, 'the server used the fake engine for the first exec');
      } finally {
        await s.close();
      }
    } finally {
      srv.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('temporary computers end with the session', () => {
  it('stdin EOF: explicit and default temporaries removed, process exits 0', async () => {
    const s = await startServer([]);
    const x = cid('eof-x');
    const y = cid('eof-y');
    const d = assertReplyShape(await s.call({ command: 'true' })).computer_id;
    track(d);
    assertReplyShape(await s.call({ computer_id: x, command: 'true' }));
    assertReplyShape(await s.call({ computer_id: y, command: 'true', temporary: true }));
    for (const id of [d, x, y]) assert.equal((await containerOf(id))?.State?.Running, true, `${id} running`);
    const t0 = Date.now();
    const ex = await s.eof(15000);
    assert.ok(ex, 'server exited after stdin EOF');
    assert.equal(ex.code, 0, `exit code after EOF (signal ${ex.signal}); stderr tail: ${s.stderr().slice(-4000)}`);
    for (const id of [d, x, y]) assert.ok(await gone(id), `${id} removed after EOF`);
    assert.ok(Date.now() - t0 < 12000, `cleanup took ${Date.now() - t0} ms`);
  });

  it('SIGTERM: temporaries removed, process exits 0', async () => {
    const s = await startServer([]);
    const x = cid('term-x');
    const d = assertReplyShape(await s.call({ command: 'true' })).computer_id;
    track(d);
    assertReplyShape(await s.call({ computer_id: x, command: 'true' }));
    const ex = await s.signal('SIGTERM', 10000);
    assert.ok(ex, 'server exited after SIGTERM');
    assert.equal(ex.code, 0, `exit code after SIGTERM (signal ${ex.signal})`);
    for (const id of [d, x]) assert.ok(await gone(id), `${id} removed after SIGTERM`);
  });

  it('SIGINT: temporaries removed, process exits 0', async () => {
    const s = await startServer([]);
    const x = cid('int-x');
    assertReplyShape(await s.call({ computer_id: x, command: 'true' }));
    const ex = await s.signal('SIGINT', 10000);
    assert.ok(ex, 'server exited after SIGINT');
    assert.equal(ex.code, 0, `exit code after SIGINT (signal ${ex.signal})`);
    assert.ok(await gone(x), `${x} removed after SIGINT`);
  });

  it('SIGTERM while a command is running: the call is abandoned and the computer removed', async () => {
    const s = await startServer([]);
    const x = cid('busy-x');
    assertReplyShape(await s.call({ computer_id: x, command: 'true' }));
    const pending = s.call({ computer_id: x, command: 'sleep 60', timeout: 100 }, { timeoutMs: 30000 }).catch((e) => e);
    await new Promise((r) => setTimeout(r, 500));
    const ex = await s.signal('SIGTERM', 12000);
    assert.ok(ex, 'server exited within 12 s of SIGTERM despite a running command');
    assert.ok(await gone(x, 10000), `${x} removed`);
    await pending;
  });

  it('a permanent computer is not removed at session end while temporaries are', async () => {
    const s = await startServer([]);
    const t = cid('mix-t');
    const p = cid('mix-p');
    assertReplyShape(await s.call({ computer_id: t, command: 'true' }));
    assertReplyShape(await s.call({ computer_id: p, command: 'true', temporary: false }));
    await s.eof(15000);
    assert.ok(await gone(t), 'temporary removed');
    const c = await containerOf(p);
    assert.ok(c, 'permanent container survives');
    assert.equal(c.State.Running, true);
    assert.equal(c.Config.Labels['kilntainers.temporary'], 'false');
  });
});

describe('permanent computers survive the server', () => {
  const P = cid('perm');

  it('files written by one server are read by the next (container adopted)', async () => {
    const s1 = await startServer([]);
    let cont1;
    try {
      const sc = assertReplyShape(await s1.call({
        computer_id: P, temporary: false, command: 'mkdir -p /data && cat > /data/note.txt', stdin: 'keep me\n',
      }));
      assert.equal(sc.temporary, false);
      assert.equal(sc.exit_code, 0);
      cont1 = (await containerOf(P)).Id;
    } finally {
      const ex = await s1.eof(15000);
      assert.equal(ex?.code, 0);
    }
    await new Promise((r) => setTimeout(r, 1000));
    const c = await containerOf(P);
    assert.ok(c, 'permanent container still exists after the server exited');
    assert.equal(c.State.Running, true);
    assert.equal(c.Config.Labels['kilntainers.temporary'], 'false');
    assert.equal(c.Config.Labels['kilntainers.computer-id'], P);

    const s2 = await startServer([]);
    try {
      const sc = assertReplyShape(await s2.call({ computer_id: P, temporary: false, command: 'cat /data/note.txt' }));
      assert.equal(sc.stdout, 'keep me\n');
      assert.equal(sc.computer_id, P);
      assert.equal(sc.temporary, false);
      assert.equal((await containerOf(P)).Id, cont1, 'same container adopted, not recreated');
    } finally {
      await s2.signal('SIGTERM');
    }
    assert.ok(await containerOf(P), 'still there after SIGTERM of the second server');
  });

  it('a stopped permanent computer is started again on attach, files kept', async () => {
    const r = await docker(['stop', '-t', '1', `kilntainer-${P}`]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await containerOf(P)).State.Running, false);
    const s = await startServer([]);
    try {
      const sc = assertReplyShape(await s.call({ computer_id: P, temporary: false, command: 'cat /data/note.txt' }, { timeoutMs: 60000 }));
      assert.equal(sc.stdout, 'keep me\n');
      assert.equal((await containerOf(P)).State.Running, true);
    } finally {
      await s.close();
    }
  });

  it('an orphaned temporary container (server killed with SIGKILL) can be re-attached as temporary', async () => {
    const t = cid('orphan');
    const s1 = await startServer([]);
    assertReplyShape(await s1.call({ computer_id: t, command: 'echo there > /tmp/o' }));
    s1.proc.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 500));
    await s1.client.close().catch(() => {});
    if (!(await containerOf(t))) return; // the implementation cleaned up even after SIGKILL (e.g. a supervisor): fine
    const s2 = await startServer([]);
    try {
      const sc = assertReplyShape(await s2.call({ computer_id: t, command: 'cat /tmp/o' }));
      assert.equal(sc.stdout, 'there\n');
    } finally {
      await s2.eof(15000);
    }
    assert.ok(await gone(t), 'removed at the end of the adopting session');
  });
});

describe('disk quota (issue 27)', () => {
  // The engine bounds a container's writable layer only where its storage driver has a size
  // option (overlay2 on xfs with pquota, btrfs, zfs): there new computers get StorageOpt size and
  // computer_list says "1 GiB"; elsewhere (overlay2 on ext4, as on most hosts and in CI) they are
  // created as before and computer_list says that the disk is not bounded, and why.
  it('--disk-quota: StorageOpt where the engine has a size option, else computer_list says it is not bounded', async () => {
    const info = await docker(['info', '--format', '{{.Driver}} {{json .DriverStatus}}']);
    assert.equal(info.code, 0, info.stderr);
    const [driver] = info.stdout.trim().split(' ');
    const fs = /"Backing Filesystem","([^"]+)"/.exec(info.stdout)?.[1];
    const sized = ['btrfs', 'zfs'].includes(driver) || (/^overlay/.test(driver) && fs === 'xfs');
    const id = cid('disk');
    const s = await startServer(['--disk-quota', '1GiB'], { env: { ENABLE_LIFECYCLE_TOOLS: 'true' } });
    try {
      const r = assertReplyShape(await s.call({ computer_id: id, command: 'echo made' }, { timeoutMs: 60000 }));
      assert.equal(r.stdout, 'made\n');
      const list = await s.client.callTool({ name: 'computer_list', arguments: {} });
      const row = list.structuredContent.computers.find((c) => c.computer_id === id);
      const size = (await containerOf(id))?.HostConfig?.StorageOpt?.size;
      if (sized && size !== undefined) {
        assert.equal(row?.disk, '1 GiB', JSON.stringify(row));
        assert.equal(size, String(1024 ** 3));
      } else {
        // Not bounded here: said, with the engine's storage (or the engine's refusal) as the reason.
        assert.match(row?.disk ?? '', /^not bounded: /, JSON.stringify(row));
        if (!sized) assert.ok(row.disk.includes(driver), row.disk);
        assert.equal(size, undefined, 'no size option the engine would refuse');
      }
    } finally {
      await s.close();
    }
  });
});
