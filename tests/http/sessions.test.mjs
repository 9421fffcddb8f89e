// HTTP sessions and their computers, through the official SDK client: isolation between sessions
// (§10 test_http_lifecycle), DELETE releasing temporary computers, idle expiry with
// --session-timeout (and a long command keeping its session alive), SIGTERM removing every
// temporary computer.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startHttpServer, connect, request, rpc, rawSession, cleanupContainers, containerOf, gone, cid, sleep, idle as idleFor,
  runContainers,
} from './lib.mjs';

after(() => cleanupContainers());

describe('two sessions, two computers', () => {
  let srv;
  before(async () => { srv = await startHttpServer([]); });
  after(async () => { await srv?.stop(); });

  it('each session touches a file and lists only its own (default computers)', async () => {
    const a = await connect(srv);
    const b = await connect(srv);
    try {
      assert.notEqual(a.sessionId, b.sessionId);
      const [ta, tb] = await Promise.all([a.exec({ command: 'touch a.txt' }), b.exec({ command: 'touch b.txt' })]);
      assert.equal(ta.exit_code, 0);
      assert.equal(tb.exit_code, 0);
      assert.equal(ta.temporary, true);
      assert.notEqual(ta.computer_id, tb.computer_id, 'each session has its own default computer');
      const [la, lb] = await Promise.all([a.exec({ command: 'ls' }), b.exec({ command: 'ls' })]);
      const fa = la.stdout.split('\n');
      const fb = lb.stdout.split('\n');
      assert.ok(fa.includes('a.txt') && !fa.includes('b.txt'), `session A sees ${JSON.stringify(fa)}`);
      assert.ok(fb.includes('b.txt') && !fb.includes('a.txt'), `session B sees ${JSON.stringify(fb)}`);
      assert.equal(la.computer_id, ta.computer_id, 'same default computer on the second call');
      assert.equal(lb.computer_id, tb.computer_id);
    } finally {
      await a.terminate();
      await b.terminate();
    }
  });

  it('no computer is created before the first command', async () => {
    const before0 = (await runContainers()).map((c) => c.id);
    const s = await connect(srv);
    try {
      await s.client.listTools();
      await s.client.ping();
      await sleep(300);
      const now = (await runContainers()).filter((c) => !before0.includes(c.id));
      assert.deepEqual(now.map((c) => c.name), []);
    } finally {
      await s.terminate();
    }
  });
});

describe('DELETE ends the session', () => {
  let srv;
  before(async () => { srv = await startHttpServer([]); });
  after(async () => { await srv?.stop(); });

  it('removes the session\'s temporary computers, keeps its permanent one and other sessions\' computers', async () => {
    const a = await connect(srv);
    const b = await connect(srv);
    const x = cid('del-x');
    const p = cid('del-p');
    const y = cid('del-y');
    let d;
    try {
      d = (await a.exec({ command: 'true' })).computer_id;
      await a.exec({ command: 'true', computer_id: x });
      const sp = await a.exec({ command: 'true', computer_id: p, temporary: false });
      assert.equal(sp.temporary, false);
      await b.exec({ command: 'true', computer_id: y });
      for (const id of [d, x, p, y]) assert.equal((await containerOf(id))?.State?.Running, true, `${id} running`);
      const sid = a.sessionId;
      await a.terminate();
      assert.ok(await gone(d), `default temporary computer ${d} removed after DELETE`);
      assert.ok(await gone(x), `explicit temporary computer ${x} removed after DELETE`);
      assert.ok(await containerOf(p), 'permanent computer survives DELETE');
      assert.equal((await containerOf(y))?.State?.Running, true, 'the other session\'s computer is untouched');
      const r = await request(srv, { body: rpc('ping'), session: sid });
      assert.equal(r.status, 404, 'the deleted session is gone');
      assert.equal(r.json?.error?.code, -32001);
      const sc = await b.exec({ command: 'echo still', computer_id: y });
      assert.equal(sc.stdout, 'still\n');
    } finally {
      await b.terminate();
    }
    assert.ok(await gone(y), `${y} removed after B's DELETE`);
  });

  it('a temporary computer is its session\'s alone: another session naming its id is refused', async () => {
    const a = await connect(srv);
    const b = await connect(srv);
    const mine = cid('mine');
    await a.exec({ command: 'echo one > /tmp/f', computer_id: mine });
    const sb = await b.call({ command: 'cat /tmp/f', computer_id: mine });
    assert.equal(sb.isError, true, JSON.stringify(sb));
    assert.match(sb.content[0].text, /Temporary computer already has an active sandbox_handle/);
    assert.doesNotMatch(JSON.stringify(sb), /one/);
    await b.terminate();
    assert.equal((await containerOf(mine))?.State?.Running, true, 'A\'s computer untouched');
    const sa = await a.exec({ command: 'cat /tmp/f', computer_id: mine });
    assert.equal(sa.stdout, 'one\n');
    await a.terminate();
    assert.ok(await gone(mine), 'removed when its session ended');
  });

  it('DELETE while a command runs: the session ends and its computer goes', async () => {
    const a = await connect(srv);
    const x = cid('del-busy');
    await a.exec({ command: 'true', computer_id: x });
    const pending = a.call({ command: 'sleep 30', computer_id: x, timeout: 60 }, { timeoutMs: 40000 }).catch((e) => e);
    await sleep(500);
    const r = await request(srv, { method: 'DELETE', session: a.sessionId, json: false });
    assert.equal(r.status, 200, r.text);
    assert.ok(await gone(x, 15000), `${x} removed after DELETE with a command in flight`);
    await Promise.race([pending, idleFor(20000)]);
    await a.close();
  });
});

describe('--session-timeout 2', () => {
  let srv;
  before(async () => { srv = await startHttpServer(['--session-timeout', '2']); });
  after(async () => { await srv?.stop(); });

  it('an idle session expires (404 afterwards) and its temporary computers go; a busy one does not', async () => {
    // Each session is opened just before it is used: a computer made for
    // one session (seconds on a loaded machine) must not age the others.
    const xi = cid('idle');
    const xb = cid('busy');
    const idle = await connect(srv);
    await idle.exec({ command: 'true', computer_id: xi });
    const di = (await idle.exec({ command: 'true' })).computer_id;
    const tIdle = Date.now();
    const busy = await connect(srv);
    await busy.exec({ command: 'true', computer_id: xb });
    const chatty = await connect(srv);

    // busy: a 4 s command under a 2 s idle timeout (its own timeout 10 s)
    const tBusy = Date.now();
    const busyCall = busy.exec({ command: 'sleep 4; echo done', computer_id: xb, timeout: 10 }, { timeoutMs: 30000 });
    // chatty: a request every 0.7 s for 5 s keeps its session alive
    const chattyLoop = (async () => {
      for (let i = 0; i < 7; i++) {
        await chatty.client.ping();
        await sleep(700);
      }
    })();

    await sleep(1000);
    // Not expired early: on a loaded machine the busy session's first computer may take more
    // than the idle timeout to make, and then the idle one has rightly gone already.
    const idleAge = Date.now() - tIdle;
    assert.ok(await containerOf(xi) || idleAge >= 1500,
      `the idle session's computer went after ${idleAge} ms, before its 2 s timeout`);

    const goneAfter = await gone(xi, 12000);
    const tGone = Date.now() - tIdle;
    assert.ok(goneAfter, `idle session's computer ${xi} removed after expiry (waited ${tGone} ms)`);
    assert.ok(await gone(di, 5000), `idle session's default computer ${di} removed`);
    assert.ok(tGone >= 1500, `expired after ${tGone} ms, not before the 2 s timeout`);

    const r = await request(srv, { body: rpc('ping'), session: idle.sessionId });
    assert.equal(r.status, 404, `expired session → 404 (${r.text})`);
    assert.equal(r.json?.error?.code, -32001);

    const sc = await busyCall;
    assert.equal(sc.exit_code, 0, `the long command finished normally: ${JSON.stringify(sc)}`);
    assert.equal(sc.stdout, 'done\n');
    assert.ok(Date.now() - tBusy >= 3900, 'the command really ran 4 s');
    const pb = await request(srv, { body: rpc('ping'), session: busy.sessionId });
    assert.equal(pb.status, 200, `the session with a command in flight was not expired (${pb.text})`);
    assert.equal((await containerOf(xb))?.State?.Running, true, 'its computer is still running');

    await chattyLoop;
    const pc = await request(srv, { body: rpc('ping'), session: chatty.sessionId });
    assert.equal(pc.status, 200, 'a session active every 0.7 s is not expired');

    // and once idle, the busy session expires too
    assert.ok(await gone(xb, 12000), 'the busy session\'s computer goes once the session is idle');
    const pb2 = await request(srv, { body: rpc('ping'), session: busy.sessionId });
    assert.equal(pb2.status, 404);
    for (const s of [idle, busy, chatty]) await s.close();
  });

  it('a session that never ran a command expires too', async () => {
    const { session } = await rawSession(srv);
    await sleep(500);
    const p = await request(srv, { body: rpc('ping'), session });
    assert.equal(p.status, 200);
    await sleep(4500);
    const r = await request(srv, { body: rpc('ping'), session });
    assert.equal(r.status, 404, `a session idle for 4.5 s (timeout 2 s) is gone; got ${r.status} ${r.text}`);
    assert.equal(r.json?.error?.code, -32001);
  });
});

describe('SIGTERM', () => {
  async function scenario({ inFlight }) {
    const srv = await startHttpServer([]);
    const sessions = [];
    const temps = [];
    const tag = inFlight ? 'tb' : 'ti';
    const perm = cid(`${tag}-p`);
    let pending;
    try {
      for (let i = 0; i < 3; i++) sessions.push(await connect(srv));
      temps.push((await sessions[0].exec({ command: 'true' })).computer_id);
      temps.push((await sessions[1].exec({ command: 'true' })).computer_id);
      const x = cid(`${tag}-x`);
      await sessions[2].exec({ command: 'true', computer_id: x });
      temps.push(x);
      await sessions[0].exec({ command: 'true', computer_id: perm, temporary: false });
      if (inFlight) {
        pending = sessions[2].call({ command: 'sleep 30', computer_id: x, timeout: 60 }, { timeoutMs: 40000 }).catch((e) => e);
        await sleep(500);
      }
      for (const id of temps) assert.equal((await containerOf(id))?.State?.Running, true, `${id} running before SIGTERM`);

      const t0 = Date.now();
      const ex = await srv.signal('SIGTERM', 20000);
      assert.ok(ex, `server exited within 20 s of SIGTERM; stderr tail: ${srv.stderr().slice(-800)}`);
      assert.equal(ex.code, 0, `exit code after SIGTERM (signal ${ex.signal})`);
      assert.ok(Date.now() - t0 < 15000, `exit took ${Date.now() - t0} ms`);
      for (const id of temps) assert.ok(await gone(id, 10000), `temporary ${id} removed by SIGTERM`);
      assert.ok(await containerOf(perm), 'the permanent computer survives');
      assert.equal(srv.stdout(), '', 'nothing on stdout');
    } finally {
      if (pending) await Promise.race([pending, idleFor(5000)]);
      for (const s of sessions) await s.close();
      await srv.stop('SIGKILL');
    }
  }

  it('with idle sessions: ends every session, removes every temporary computer, keeps permanent ones, exits 0',
    () => scenario({ inFlight: false }));
  it('with a command in flight: the same, within 15 s', () => scenario({ inFlight: true }));
});
