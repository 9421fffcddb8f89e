// Quotas and limits, through the official SDK client over HTTP: one session cannot starve the
// others (computers per session, commands in flight per session, and each session's share of
// the driver's workers), and the reference's later argument limits (timeout 1..3600, command
// and args at most 64 KiB, at most 256 args, a huge timeout is an error); and session ids, which
// are bearer credentials, stay out of the logs.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHttpServer, connect, cleanupContainers, runContainers, cid, textOf, sleep, waitFor } from './lib.mjs';

after(() => cleanupContainers());

const COMPUTERS_CAP = 6;
const COMMANDS_CAP = 8;
const COMPUTERS_TEXT = `This session already holds ${COMPUTERS_CAP} computers, the limit (--max-session-computers).`;
const COMMANDS_TEXT = `This session already has ${COMMANDS_CAP} commands in flight, the limit (--max-session-commands).`;

describe('one session cannot starve the others', () => {
  let srv;
  // 4 workers: a quarter of them (1) per session. Without the caps and the share, session A's
  // sleeps on 8 computers would hold all 4 workers and B's echo would wait for an hour.
  before(async () => {
    srv = await startHttpServer(['--driver-workers', '4', '--max-session-computers', String(COMPUTERS_CAP),
      '--max-session-commands', String(COMMANDS_CAP)]);
  });
  after(async () => { await srv?.stop(); });

  it('A runs 64 `sleep infinity` calls (most refused), B\'s echo answers at once', async () => {
    const a = await connect(srv);
    const b = await connect(srv);
    const answers = [];
    const hang = (args) => a.call({ ...args, command: 'sleep infinity', timeout: 3600 }, { timeoutMs: 600000 })
      .then((res) => answers.push(res), (e) => answers.push({ rejected: String(e?.message ?? e) }));
    const refusedWith = (text) => answers.filter((r) => r.isError && textOf(r)?.startsWith(text)).length;
    const aContainers = async () => (await runContainers()).filter((c) => c.computerId?.startsWith(cid('a')));
    try {
      // B's computer exists before A starts, so only B's command is timed.
      assert.equal((await b.exec({ command: 'true' }, { timeoutMs: 180000 })).exit_code, 0);

      // 8 calls on 8 computers: 6 computers are made, the other 2 calls are refused.
      for (let i = 0; i < 8; i++) hang({ computer_id: cid(`a${i}`) });
      await waitFor(() => refusedWith(COMPUTERS_TEXT) >= 2, { timeoutMs: 180000, intervalMs: 100 });
      assert.equal(refusedWith(COMPUTERS_TEXT), 2, JSON.stringify(answers).slice(0, 1000));
      await waitFor(async () => (await aContainers()).filter((c) => c.running).length >= COMPUTERS_CAP,
        { timeoutMs: 180000, intervalMs: 250 });
      assert.equal((await aContainers()).length, COMPUTERS_CAP, 'A holds only its share of computers');
      await sleep(1500);        // A's commands reach the driver

      // 56 more on A's first computer: 2 fit in A's 8 commands in flight, 54 are refused at once.
      for (let i = 0; i < 56; i++) hang({ computer_id: cid('a0') });
      await waitFor(() => refusedWith(COMMANDS_TEXT) >= 54, { timeoutMs: 60000, intervalMs: 100 });
      await sleep(300);
      assert.equal(refusedWith(COMMANDS_TEXT), 54);
      assert.equal(answers.length, 56, 'only refusals have answered; A\'s sleeps still run');

      // B's command starts at once on a free worker.
      const t0 = Date.now();
      const hi = await b.exec({ command: 'echo hi' }, { timeoutMs: 10000 });
      const ms = Date.now() - t0;
      assert.equal(hi.stdout, 'hi\n');
      assert.ok(ms < 1000, `B's echo took ${ms} ms while A's sleeps ran`);
    } finally {
      await a.terminate().catch(() => {});
      await b.terminate().catch(() => {});
      await waitFor(async () => (await aContainers()).length === 0, { timeoutMs: 60000, intervalMs: 250 });
    }
    assert.deepEqual((await aContainers()).map((c) => c.name), [], 'A\'s computers are removed with its session');
  });
});

describe('argument limits', () => {
  let srv;
  // The whole output in replies: the 64 KiB argument comes back.
  before(async () => { srv = await startHttpServer(['--reply-output-limit', '0']); });
  after(async () => { await srv?.stop(); });

  const refused = async (s, args, text) => {
    const res = await s.call(args);
    assert.equal(res.isError, true, `expected an error for ${JSON.stringify(args).slice(0, 200)}`);
    assert.equal(textOf(res), text);
    assert.equal(res.structuredContent, undefined);
  };

  it('refuses what is out of bounds before making a computer, accepts the bounds', async () => {
    const s = await connect(srv);
    try {
      const upTo = 'timeout must be at most 3600 seconds.';
      await refused(s, { command: 'true', timeout: 3601 }, upTo);
      await refused(s, { command: 'true', timeout: 1e300 }, upTo);
      await refused(s, { command: 'true', timeout: -1e300 }, 'timeout must be at least 1 second.');
      await refused(s, { command: 'true'.padEnd(65537, ' ') },
        'command exceeds the 64 KiB limit (65537 bytes). Write long scripts to a file with stdin and run the file.');
      await refused(s, { args: Array(257).fill('true') }, 'args exceeds the limit of 256 arguments (257 given).');
      await refused(s, { args: ['echo', 'a'.repeat(65533)] },
        'args exceed the 64 KiB limit (65537 bytes together). Pass large input with stdin.');
      assert.deepEqual((await runContainers()).map((c) => c.name), [], 'no computer for refused calls');

      assert.equal((await s.exec({ command: 'true'.padEnd(65536, ' '), timeout: 3600 }, { timeoutMs: 180000 })).exit_code, 0);
      assert.equal((await s.exec({ args: ['true', ...Array(255).fill('x')] })).exit_code, 0);
      const r = await s.exec({ args: ['printf', '%s', 'a'.repeat(65528)] });     // 64 KiB together
      assert.equal(r.stdout.length, 65528);
    } finally {
      await s.terminate();
    }
  });
});

describe('session ids stay out of the logs', () => {
  let srv;
  before(async () => {
    srv = await startHttpServer(['--session-timeout', '1'], { env: { MSC_LOG_LEVEL: 'debug' } });
  });
  after(async () => { await srv?.stop(); });

  it('an expired and a deleted session are logged by a tag, not by their id', async () => {
    const expired = await connect(srv);
    const deleted = await connect(srv);
    await deleted.terminate();
    await waitFor(() => /session [0-9a-f]+ expired after 1s idle/.test(srv.stderr()), { timeoutMs: 10000 });
    await expired.close();
    await waitFor(() => (srv.stderr().match(/session [0-9a-f]+ ended/g) ?? []).length >= 2, { timeoutMs: 10000 });
    for (const id of [expired.sessionId, deleted.sessionId]) {
      assert.ok(id && id.length >= 16, `a session id (${id})`);
      assert.ok(!srv.stderr().includes(id), `session id ${id} in the log:\n${srv.stderr().slice(-2000)}`);
      assert.ok(!srv.stderr().includes(id.slice(8)), 'nor its random part');
    }
  });
});
