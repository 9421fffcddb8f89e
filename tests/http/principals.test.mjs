// Principals (issue 27): --tokens-file names each token's principal, and two principals never
// see each other's sessions (2025-11-25), handles, computers or tasks (2026-07-28); each holds
// at most its share of handles and sessions, and another's echo answers within 2 s while one is
// at its share; a full share first ends an unused session; the 503 of a refused initialize
// carries the request's id; a task id alone reveals nothing; SIGHUP re-reads the file. The
// go_busybox backend: no engine is needed here.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startHttpServer, request, rpc, initializeBody, waitFor } from './lib.mjs';

const MODERN = '2026-07-28';
const EXT = 'io.modelcontextprotocol/tasks';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } } };
const META_PLAIN = { 'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {} };
const TOK = {
  alice: 'alice-0123456789abcdef', bob: 'bob-0123456789abcdef01', erin: 'erin-0123456789abcdef',
  dave: 'dave-0123456789abcdef', carol: 'carol-0123456789abcdef',
};
const SHARE_SANDBOXES = 3;
const SHARE_SESSIONS = 3;

let dir;
let tokens;
let srv;

const writeTokens = (t) => {
  fs.writeFileSync(tokens, `# name token\n${Object.entries(t).map(([n, v]) => `${n} ${v}`).join('\n')}\n`,
    { mode: 0o600 });
};

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msc-principals-'));
  tokens = path.join(dir, 'tokens');
  writeTokens(TOK);
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A 2026-07-28 request of `who`: {status, reply}. */
async function modern(who, method, params, meta = META_PLAIN, id = 1) {
  const name = params.name ?? params.taskId;
  const r = await request(srv, {
    token: TOK[who] ?? who,
    headers: { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method, ...(name ? { 'Mcp-Name': name } : {}) },
    body: { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } },
  });
  return { status: r.status, reply: r.json };
}
const exec = (who, args, meta) => modern(who, 'tools/call', { name: 'terminal_execute', arguments: args }, meta);
const handleOf = (r) => r.reply?.result?.structuredContent?.sandbox_handle;

/** A 2025 initialize of `who`: {status, session, json}. */
async function initialize(who, id) {
  const r = await request(srv, { body: initializeBody(undefined, id), token: TOK[who] });
  return { status: r.status, session: r.headers['mcp-session-id'], json: r.json };
}
const call2025 = (who, session, args) => request(srv, { token: TOK[who], session,
  body: rpc('tools/call', { name: 'terminal_execute', arguments: args }) });

describe('principals', () => {
  before(async () => {
    srv = await startHttpServer(['--backend', 'go_busybox', '--tokens-file', tokens,
      '--max-principal-sandboxes', String(SHARE_SANDBOXES), '--max-principal-sessions', String(SHARE_SESSIONS),
      '--max-principal-tasks', '4'], { env: { KILNTAINERS_WASM_DIR: dir, HOME: dir }, label: false });
  });
  after(async () => {
    await srv?.stop();
    assert.doesNotMatch(srv?.stderr() ?? '', /0123456789abcdef/, 'no token in the log');
  });

  it('a token not in the file → 401; each token is its principal', async () => {
    assert.equal((await initialize('nobody')).status, 401);
    assert.equal((await request(srv, { body: initializeBody(), token: `${TOK.alice}x` })).status, 401);
    assert.equal((await initialize('alice')).status, 200);
    assert.equal((await initialize('bob')).status, 200);
  });

  it('2025: another principal\'s session id is unknown (404), ping, call and DELETE alike', async () => {
    const { session } = await initialize('alice');
    assert.equal((await call2025('alice', session, { command: 'echo mine' })).json.result.structuredContent.stdout,
      'mine\n');
    for (const body of [rpc('ping'), rpc('tools/call', { name: 'terminal_execute', arguments: { command: 'id' } })]) {
      const r = await request(srv, { token: TOK.bob, session, body });
      assert.equal(r.status, 404, r.text);
    }
    assert.equal((await request(srv, { method: 'DELETE', token: TOK.bob, session, json: false })).status, 404);
    assert.equal((await request(srv, { token: TOK.alice, session, body: rpc('ping') })).status, 200, 'still alice\'s');
  });

  it('2026: another principal\'s handle addresses nothing: no command, no release, no computer', async () => {
    const first = await exec('alice', { command: 'echo secret > /tmp/s; echo ok' });
    const h = handleOf(first);
    assert.ok(h, JSON.stringify(first.reply));
    const bob = await exec('bob', { command: 'cat /tmp/s', sandbox_handle: h });
    assert.equal(bob.reply.result.isError, true, JSON.stringify(bob.reply));
    assert.match(JSON.stringify(bob.reply), /Unknown or expired sandbox_handle/);
    assert.doesNotMatch(JSON.stringify(bob.reply), /secret/);
    const rel = await modern('bob', 'tools/call', { name: 'computer_release', arguments: { sandbox_handle: h } });
    assert.match(JSON.stringify(rel.reply), /Unknown or expired sandbox_handle/);
    const again = await exec('alice', { command: 'cat /tmp/s', sandbox_handle: h });
    assert.equal(again.reply.result.structuredContent.stdout, 'secret\n', 'alice\'s computer kept');
  });

  it('a task id alone reveals nothing: another principal gets "not found", its own no handle it did not hold', async () => {
    const h = handleOf(await exec('carol', { command: 'true' }));
    const created = await exec('carol', { command: 'sleep 3; echo t', sandbox_handle: h }, META);
    const { taskId } = created.reply.result;
    assert.match(taskId ?? '', /^[0-9a-f]{32}$/, JSON.stringify(created.reply));
    for (const m of ['tasks/get', 'tasks/cancel']) {
      const r = await modern('bob', m, { taskId }, META);
      assert.equal(r.reply.error?.code, -32602, `${m}: ${JSON.stringify(r.reply)}`);
      assert.doesNotMatch(JSON.stringify(r.reply), new RegExp(h));
    }
    let last;
    assert.ok(await waitFor(async () => {
      last = await modern('carol', 'tasks/get', { taskId }, META);
      return last.reply.result?.status === 'completed';
    }, { timeoutMs: 20000, intervalMs: 300 }), JSON.stringify(last?.reply));
    assert.equal(last.reply.result.result.structuredContent.stdout, 't\n');
    assert.doesNotMatch(JSON.stringify(last.reply), new RegExp(h), 'the id alone: no handle');
    // A handle the call minted is the caller's to learn.
    const minted = await exec('carol', { command: 'sleep 3; echo m' }, META);
    const mid = minted.reply.result?.taskId;
    assert.ok(mid, JSON.stringify(minted.reply));
    assert.ok(await waitFor(async () => {
      last = await modern('carol', 'tasks/get', { taskId: mid }, META);
      return last.reply.result?.status === 'completed';
    }, { timeoutMs: 20000, intervalMs: 300 }), JSON.stringify(last?.reply));
    assert.match(handleOf({ reply: { result: last.reply.result.result } }) ?? '', /^[0-9a-f]{40}$/);
  });

  it('at its share of handles a principal is refused naming the flag; another\'s echo answers within 2 s', async () => {
    for (let i = 0; i < SHARE_SANDBOXES; i++) assert.ok(handleOf(await exec('erin', { command: 'true' })));
    const refused = await exec('erin', { command: 'true' });
    assert.match(JSON.stringify(refused.reply), /Sandbox limit reached.*--max-principal-sandboxes/);
    const t0 = Date.now();
    const bob = await exec('bob', { command: 'echo fine' });
    assert.equal(bob.reply.result.structuredContent.stdout, 'fine\n', JSON.stringify(bob.reply));
    assert.ok(Date.now() - t0 < 2000, `bob waited ${Date.now() - t0} ms`);
  });

  it('a full share of sessions ends an unused one first; past it the 503 carries the request id', async () => {
    const s1 = (await initialize('dave')).session;
    const s2 = (await initialize('dave')).session;
    for (const s of [s1, s2]) assert.equal((await call2025('dave', s, { command: 'true' })).status, 200);
    const unused = (await initialize('dave')).session;
    const s4 = await initialize('dave');
    assert.equal(s4.status, 200, 'room made');
    assert.equal((await request(srv, { token: TOK.dave, session: unused, body: rpc('ping') })).status, 404,
      'the unused session made room');
    for (const s of [s1, s2]) {
      assert.equal((await request(srv, { token: TOK.dave, session: s, body: rpc('ping') })).status, 200,
        'sessions with a computer stay');
    }
    assert.equal((await call2025('dave', s4.session, { command: 'true' })).status, 200);
    const full = await initialize('dave', 4242);
    assert.equal(full.status, 503, JSON.stringify(full.json));
    assert.equal(full.json.id, 4242, 'the request\'s id, not null');
    assert.match(full.json.error.message, /--max-principal-sessions/);
    const t0 = Date.now();
    const bob = await initialize('bob');
    assert.equal(bob.status, 200);
    assert.ok(Date.now() - t0 < 2000);
  });

  it('SIGHUP re-reads the file: a removed token is refused, a new one served; a broken file changes nothing', async () => {
    const list = async (token) => (await modern(token, 'tools/list', {})).status;
    writeTokens({ alice: TOK.alice, bob: 'bob-new-0123456789abcdef' });
    process.kill(srv.pid, 'SIGHUP');
    assert.ok(await waitFor(async () => (await list(TOK.bob)) === 401, { timeoutMs: 5000, intervalMs: 100 }));
    assert.equal(await list('bob-new-0123456789abcdef'), 200);
    assert.equal(await list(TOK.alice), 200);
    assert.equal(await list(TOK.erin), 401);
    fs.writeFileSync(tokens, 'alice\n', { mode: 0o600 });
    process.kill(srv.pid, 'SIGHUP');
    assert.ok(await waitFor(() => /tokens-file not read again/.test(srv.stderr()), { timeoutMs: 5000, intervalMs: 100 }));
    assert.equal(await list(TOK.alice), 200, 'the table in use stays');
    assert.ok(srv.alive);
  });
});

describe('one principal (no tokens): a task id alone', () => {
  let one;
  before(async () => {
    one = await startHttpServer(['--backend', 'go_busybox'], { env: { KILNTAINERS_WASM_DIR: dir, HOME: dir }, label: false });
  });
  after(async () => { await one?.stop(); });

  it('names no sandbox_handle the caller did not already hold', async () => {
    const post = async (method, params, meta) => (await request(one, {
      headers: { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method, 'Mcp-Name': params.name ?? params.taskId },
      body: { jsonrpc: '2.0', id: 9, method, params: { ...params, _meta: meta } },
    })).json;
    const first = await post('tools/call', { name: 'terminal_execute', arguments: { command: 'true' } }, META_PLAIN);
    const h = first.result.structuredContent.sandbox_handle;
    const created = await post('tools/call', { name: 'terminal_execute',
      arguments: { command: 'sleep 3; echo x', sandbox_handle: h } }, META);
    const { taskId } = created.result;
    assert.ok(taskId, JSON.stringify(created));
    let last;
    assert.ok(await waitFor(async () => {
      last = await post('tasks/get', { taskId }, META);
      assert.doesNotMatch(JSON.stringify(last), new RegExp(h), 'the task id alone gave the handle away');
      return last.result?.status === 'completed';
    }, { timeoutMs: 20000, intervalMs: 300 }), JSON.stringify(last));
    assert.equal(last.result.result.structuredContent.stdout, 'x\n');
  });
});

describe('connections count per principal once authenticated', () => {
  // Behind one proxy or load balancer every client has one address: a principal's requests in
  // flight fill its own share of --max-address-connections, not the address's.
  let two;
  before(async () => {
    writeTokens(TOK);   // the SIGHUP case above left a broken file
    two = await startHttpServer(['--backend', 'go_busybox', '--tokens-file', tokens,
      '--max-address-connections', '4'], { env: { KILNTAINERS_WASM_DIR: dir, HOME: dir }, label: false });
  });
  after(async () => { await two?.stop(); });

  it('alice holds 4 commands in flight from one address: bob\'s echo answers within 2 s, alice\'s fifth gets 429', async () => {
    const call = (who, command, id) => request(two, {
      token: TOK[who], timeoutMs: 60000,
      headers: { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'terminal_execute' },
      body: { jsonrpc: '2.0', id, method: 'tools/call',
        params: { name: 'terminal_execute', arguments: { command }, _meta: META_PLAIN } },
    });
    const sleeps = [1, 2, 3, 4].map((i) => call('alice', 'sleep 4; echo done', i));
    await new Promise((r) => setTimeout(r, 1500));
    const t0 = Date.now();
    const bob = await call('bob', 'echo bob', 5);
    const ms = Date.now() - t0;
    const fifth = await call('alice', 'echo five', 6);
    assert.equal(bob.status, 200, bob.text);
    assert.equal(bob.json.result.structuredContent.stdout, 'bob\n');
    assert.ok(ms < 2000, `bob waited ${ms} ms`);
    assert.equal(fifth.status, 429, fifth.text);
    assert.match(fifth.text, /--max-address-connections/);
    for (const r of await Promise.all(sleeps)) {
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.result.structuredContent.stdout, 'done\n');
    }
  });
});

describe('a permanent computer is its principal\'s, also after a restart', () => {
  // Permanent computers have global names (a Docker container's, a WASI folder's): bob naming
  // alice's must not reach it in any tool, see it in computer_list, or restart, reset or delete
  // it. The computer records alice's tag (meta.json here, a label on Docker), so a restarted
  // server still knows.
  let srv3;
  let wasmDir;
  const start = async () => {
    writeTokens(TOK);
    return startHttpServer(['--backend', 'go_busybox', '--tokens-file', tokens], {
      env: { KILNTAINERS_WASM_DIR: wasmDir, HOME: dir, ENABLE_LIFECYCLE_TOOLS: 'true' }, label: false });
  };
  before(async () => {
    wasmDir = fs.mkdtempSync(path.join(dir, 'perm-'));
    srv3 = await start();
  });
  after(async () => { await srv3?.stop(); });

  const session = async (who) => (await request(srv3, { body: initializeBody(), token: TOK[who] }))
    .headers['mcp-session-id'];
  const tool = async (who, s, name, args) => (await request(srv3, { token: TOK[who], session: s,
    body: rpc('tools/call', { name, arguments: args }) })).json;
  const ID = 'alice-box';

  it('bob naming alice\'s permanent computer is refused in every tool and does not see it', async () => {
    const a = await session('alice');
    const made = await tool('alice', a, 'terminal_execute',
      { computer_id: ID, temporary: false, command: 'echo secret > /s; echo ok' });
    assert.equal(made.result?.structuredContent?.stdout, 'ok\n', JSON.stringify(made));
    const attack = async () => {
      const b = await session('bob');
      for (const temporary of [false, undefined]) {
        const r = await tool('bob', b, 'terminal_execute', { computer_id: ID, temporary, command: 'cat /s' });
        assert.equal(r.result?.isError, true, JSON.stringify(r));
        assert.doesNotMatch(JSON.stringify(r), /secret/);
        if (temporary === false) assert.match(r.result.content[0].text, /belongs to another principal/);
      }
      const cr = await tool('bob', b, 'computer_create', { computer_id: ID, temporary: false });
      assert.equal(cr.result?.isError, true, JSON.stringify(cr));
      for (const name of ['computer_restart', 'computer_factory_reset', 'computer_delete']) {
        const r = await tool('bob', b, name, { computer_id: ID });
        assert.equal(r.result?.isError, true, `${name}: ${JSON.stringify(r)}`);
        assert.match(r.result.content[0].text, /belongs to another principal/, name);
      }
      const list = await tool('bob', b, 'computer_list', {});
      assert.ok(!JSON.stringify(list).includes(ID), `bob lists alice's: ${JSON.stringify(list)}`);
      const still = await tool('alice', await session('alice'), 'terminal_execute',
        { computer_id: ID, temporary: false, command: 'cat /s' });
      assert.equal(still.result?.structuredContent?.stdout, 'secret\n', JSON.stringify(still));
      const own = await tool('alice', await session('alice'), 'computer_list', {});
      assert.ok(JSON.stringify(own).includes(ID), 'alice lists hers');
    };
    await attack();
    // A restarted server knows whose it is from the computer itself.
    await srv3.stop();
    srv3 = await start();
    await attack();
    assert.doesNotMatch(fs.readFileSync(path.join(wasmDir, 'go_busybox', ID, 'meta.json'), 'utf8'),
      /alice|0123456789abcdef/, 'the computer records a tag, not the name or the token');
  });
});

describe('the driver\'s workers are shared between principals', () => {
  // Each handle is its own owner at the driver, so before, alice's sleeps on many handles took
  // every worker and bob's echo waited for them to end. With 4 workers: commands run on 3, a named
  // principal on at most 2 of them with 8 more waiting; past that it is told at once.
  let four;
  before(async () => {
    writeTokens(TOK);
    four = await startHttpServer(['--backend', 'go_busybox', '--tokens-file', tokens, '--driver-workers', '4'],
      { env: { KILNTAINERS_WASM_DIR: dir, HOME: dir }, label: false });
  });
  after(async () => { await four?.stop(); });

  const call = (who, command, id) => request(four, {
    token: TOK[who], timeoutMs: 60000,
    headers: { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'terminal_execute' },
    body: { jsonrpc: '2.0', id, method: 'tools/call',
      params: { name: 'terminal_execute', arguments: { command }, _meta: META_PLAIN } },
  });
  const text = (r) => JSON.stringify(r.json);

  it('alice floods with sleeps on 12 handles: bob\'s echo answers within 2 s, alice\'s extra ones are told "busy" at once', async () => {
    const t0 = Date.now();
    const sleeps = Array.from({ length: 12 }, (_, i) => call('alice', 'sleep 2; echo slept', 100 + i)
      .then((r) => ({ r, ms: Date.now() - t0 })));
    await new Promise((r) => setTimeout(r, 500));
    const t1 = Date.now();
    const bob = await call('bob', 'echo bob', 1);
    const ms = Date.now() - t1;
    assert.equal(bob.json?.result?.structuredContent?.stdout, 'bob\n', text(bob));
    assert.ok(ms < 2000, `bob waited ${ms} ms behind alice's sleeps`);
    const done = await Promise.all(sleeps);
    const busy = done.filter(({ r }) => /is busy for you/.test(text(r)));
    const slept = done.filter(({ r }) => r.json?.result?.structuredContent?.stdout === 'slept\n');
    assert.equal(busy.length, 2, `2 past her share and queue: ${done.map(({ r }) => text(r)).join('\n')}`);
    assert.equal(slept.length, 10);
    for (const { r, ms: at } of busy) {
      assert.ok(at < 1500, `told at ${at} ms, not after a wait`);
      assert.equal(r.json.result.isError, true);
      assert.match(r.json.result.content[0].text, /--driver-workers/);
    }
  });
});
