// Two principals of --tokens-file over HTTP (2025-11-25 sessions), for the backends whose
// tests run against local fakes (tests/fly, tests/e2b, tests/modal): a permanent computer
// records who made it where the backend keeps its own records, so that a restarted server does
// not hand it to another principal (issue 27).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MSC_BIN, waitFor } from './lib.mjs';

export const TOKENS = { alice: 'alice-0123456789abcdef', bob: 'bob-0123456789abcdef01' };

const freePort = () => new Promise((resolve, reject) => {
  const srv = net.createServer();
  srv.once('error', reject);
  srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
});

/**
 * Starts the server over HTTP with `flags` and a tokens file naming alice and bob:
 * { tool(who, name, args) -> CallToolResult, stop() }.
 */
export async function startPrincipalServer(flags, env) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msc-principals-'));
  const tokens = path.join(dir, 'tokens');
  fs.writeFileSync(tokens, Object.entries(TOKENS).map(([n, t]) => `${n} ${t}\n`).join(''), { mode: 0o600 });
  const port = await freePort();
  const base = { ...process.env };
  delete base.KILNTAINERS_AUTH_TOKEN;
  const proc = spawn(MSC_BIN, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port),
    '--tokens-file', tokens, ...flags], { stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...base, ENABLE_LIFECYCLE_TOOLS: 'true', ...env } });
  let err = '';
  proc.stderr.on('data', (c) => { err = (err + c).slice(-20000); });
  const exited = new Promise((r) => proc.once('exit', r));
  const url = `http://127.0.0.1:${port}/mcp`;
  const post = async (who, body, session) => {
    const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream', Authorization: `Bearer ${TOKENS[who]}`,
      ...(session ? { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' } : {}) },
    body: JSON.stringify(body) });
    const text = await res.text();
    const json = res.headers.get('content-type')?.startsWith('text/event-stream')
      ? JSON.parse(text.split('\n').filter((l) => l.startsWith('data: ')).pop().slice(6))
      : text ? JSON.parse(text) : null;
    return { session: res.headers.get('mcp-session-id'), json };
  };
  const sessions = {};
  const sessionOf = async (who) => {
    if (!sessions[who]) {
      const r = await post(who, { jsonrpc: '2.0', id: 0, method: 'initialize', params: {
        protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'principals', version: '1' } } });
      assert.ok(r.session, `initialize of ${who}: ${JSON.stringify(r.json)}`);
      await post(who, { jsonrpc: '2.0', method: 'notifications/initialized' }, r.session);
      sessions[who] = r.session;
    }
    return sessions[who];
  };
  assert.ok(await waitFor(async () => proc.exitCode === null &&
    (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok,
  { timeoutMs: 30000, intervalMs: 100 }), `server not ready: ${err}`);
  let seq = 1;
  return {
    stderr: () => err,
    async tool(who, name, args) {
      const r = await post(who, { jsonrpc: '2.0', id: seq++, method: 'tools/call',
        params: { name, arguments: args } }, await sessionOf(who));
      assert.ok(r.json?.result, `${name} of ${who}: ${JSON.stringify(r.json)}`);
      return r.json.result;
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      let timer;
      await Promise.race([exited, new Promise((r) => { timer = setTimeout(r, 15000); })]);
      clearTimeout(timer);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
      assert.doesNotMatch(err, /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /);
    },
  };
}

/**
 * alice makes permanent computer `id`; the server restarts (start()); bob naming it gets
 * "belongs to another principal" from terminal_execute and the lifecycle tools and does not see
 * it in computer_list; recorded(id), the tag the backend keeps for it, is there; alice still
 * reaches it, factory-resets it (still hers) and deletes it. Fails the test otherwise.
 */
export async function assertPermanentIsPrincipals(start, id, recorded) {
  let s = await start();
  try {
    const made = await s.tool('alice', 'terminal_execute', { computer_id: id, temporary: false,
      command: 'echo secret > /tmp/s; echo ok' });
    assert.equal(made.structuredContent?.stdout, 'ok\n', JSON.stringify(made));
    await s.stop();
    s = await start();
    const r = await s.tool('bob', 'terminal_execute', { computer_id: id, temporary: false, command: 'cat /tmp/s' });
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.doesNotMatch(JSON.stringify(r), /secret/);
    assert.match(r.content[0].text, /belongs to another principal/);
    for (const name of ['computer_restart', 'computer_factory_reset', 'computer_delete']) {
      const x = await s.tool('bob', name, { computer_id: id });
      assert.equal(x.isError, true, `${name}: ${JSON.stringify(x)}`);
      assert.match(x.content[0].text, /belongs to another principal/, name);
    }
    const list = await s.tool('bob', 'computer_list', {});
    assert.doesNotMatch(JSON.stringify(list), new RegExp(id), 'bob does not see it');
    const tag = await recorded(id);
    assert.match(String(tag ?? ''), /\S/, 'the backend records the principal');
    assert.doesNotMatch(String(tag), /alice/, 'a hash of the name, not the name');
    const mine = await s.tool('alice', 'terminal_execute', { computer_id: id, temporary: false, command: 'cat /tmp/s' });
    assert.equal(mine.structuredContent?.stdout, 'secret\n', JSON.stringify(mine));
    // A factory reset makes a new Machine or sandbox: it is still alice's.
    const reset = await s.tool('alice', 'computer_factory_reset', { computer_id: id });
    assert.notEqual(reset.isError, true, JSON.stringify(reset));
    assert.equal(await recorded(id), tag, 'the reset computer records the same principal');
    const again = await s.tool('bob', 'terminal_execute', { computer_id: id, temporary: false, command: 'true' });
    assert.match(again.content[0].text, /belongs to another principal/);
    const del = await s.tool('alice', 'computer_delete', { computer_id: id });
    assert.notEqual(del.isError, true, JSON.stringify(del));
  } finally { await s.stop(); }
}
