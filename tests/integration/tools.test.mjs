// Lifecycle tools (ENABLE_LIFECYCLE_TOOLS) through the official MCP SDK client, and the
// operator command line, against a real Docker engine (reference §2.2, §4, §5, §10
// test_dashboard / test_computers).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  startServer, cleanupContainers, containerOf, cid, track, textOf, runCli, SLUG_ERROR,
  RANDOM_SLUG_RE, MSC_BIN, waitFor, waitExit, RUNTIME,
} from './lib.mjs';

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

const LIFECYCLE = { ENABLE_LIFECYCLE_TOOLS: 'true' };
const TOOLS = ['terminal_execute', 'computer_release', 'computer_dashboard', 'computer_list', 'computer_create',
  'computer_restart', 'computer_factory_reset', 'computer_delete'];

function payload(res) {
  assert.equal(res.content.length, 1);
  assert.deepEqual(JSON.parse(textOf(res)), res.structuredContent, 'text = structuredContent');
  return res.structuredContent;
}

async function tool(s, name, args = {}) {
  return s.client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
}

after(() => cleanupContainers());

describe('tool listing', () => {
  it('only terminal_execute and computer_release without ENABLE_LIFECYCLE_TOOLS', async () => {
    const s = await startServer([], { env: { ENABLE_LIFECYCLE_TOOLS: 'false' } });
    try {
      const { tools } = await s.client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['terminal_execute', 'computer_release']);
      const r = await tool(s, 'computer_list');
      assert.equal(r.isError, true);
      assert.match(textOf(r), /Unknown tool: computer_list/);
    } finally { await s.close(); }
  });

  for (const v of ['true', '1', 'yes', 'on', 'TRUE']) {
    it(`seven tools, dashboard resource and ui capability with ENABLE_LIFECYCLE_TOOLS=${v}`, async () => {
      const s = await startServer([], { env: { ENABLE_LIFECYCLE_TOOLS: v } });
      try {
        const { tools } = await s.client.listTools();
        assert.deepEqual(tools.map((t) => t.name), TOOLS);
        const dash = tools.find((t) => t.name === 'computer_dashboard');
        assert.equal(dash.title, 'Sandbox Computer Dashboard');
        assert.equal(dash._meta.ui.resourceUri, 'ui://kilntainers/computers');
        assert.equal(dash._meta['ui/resourceUri'], 'ui://kilntainers/computers');
        for (const t of tools) assert.ok(t.description.length > 10, `${t.name} described`);
        // annotations: hosts ask before what destroys, not for what only reads
        const ann = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
        for (const t of tools) assert.ok(t.title && t.annotations.title, `${t.name} has a title`);
        assert.equal(ann.computer_list.readOnlyHint, true);
        assert.equal(ann.computer_dashboard.readOnlyHint, true);
        for (const n of ['computer_delete', 'computer_factory_reset', 'computer_release']) {
          assert.equal(ann[n].destructiveHint, true, n);
          assert.equal(ann[n].readOnlyHint, false, n);
        }
        for (const n of ['computer_create', 'computer_restart']) assert.equal(ann[n].destructiveHint, false, n);
        assert.equal(ann.terminal_execute.readOnlyHint, false);
        assert.equal(ann.terminal_execute.openWorldHint, true, 'the default network reaches the world');
        const caps = s.client.getServerCapabilities();
        assert.deepEqual(caps.extensions, { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } });
        const { resources } = await s.client.listResources();
        assert.equal(resources.length, 1);
        assert.equal(resources[0].uri, 'ui://kilntainers/computers');
        assert.equal(resources[0].mimeType, 'text/html;profile=mcp-app');
        const read = await s.client.readResource({ uri: 'ui://kilntainers/computers' });
        const html = read.contents[0].text;
        assert.equal(read.contents[0].mimeType, 'text/html;profile=mcp-app');
        assert.ok(html.includes('2026-01-26'));
        assert.ok(html.includes('callTool("computer_list"'));
        assert.ok(html.includes('callTool("terminal_execute"'));
        assert.ok(!/<script[^>]+src=/i.test(html), 'no external script');
        assert.ok(!/<link[^>]+rel=/i.test(html), 'no external stylesheet');
      } finally { await s.close(); }
    });
  }
});

describe('lifecycle tools on Docker', () => {
  let s;
  before(async () => { s = await startServer([], { env: LIFECYCLE }); });
  after(async () => { await s?.close(); });

  it('create a permanent computer, use it, list it, restart keeps files, reset erases them, delete removes it', async () => {
    const id = cid('life');
    const created = payload(await tool(s, 'computer_create', { computer_id: id, temporary: false }));
    assert.deepEqual(Object.keys(created), ['ok', 'computer_id', 'sandbox_id', 'temporary']);
    assert.equal(created.ok, true);
    assert.equal(created.computer_id, id);
    assert.equal(created.temporary, false);
    assert.equal(created.sandbox_id.length, 12);
    const ctr = await containerOf(id);
    assert.equal(ctr.Config.Labels['kilntainers.temporary'], 'false');

    await s.exec({ computer_id: id, temporary: false, command: 'echo kept > /root/f' });
    const list = payload(await tool(s, 'computer_list'));
    const row = list.computers.find((c) => c.computer_id === id);
    assert.ok(row, 'listed');
    assert.equal(list.count, list.computers.length);
    // The reference's keys, plus the computer's network policy (issue 20), disk bound (issue 27)
    // and OCI runtime (issue 32: made without --runtime, the engine's default).
    assert.deepEqual(Object.keys(row).sort(), ['backend', 'computer_id', 'created_at', 'disk', 'image', 'network', 'runtime', 'sandbox_id', 'state', 'temporary']);
    assert.equal(row.network, 'open');
    assert.equal(row.runtime, RUNTIME || 'runc');
    assert.match(row.disk, /^(1 GiB|not bounded: .+)$/);
    assert.equal(row.backend, 'docker');
    assert.equal(row.state, 'running');
    assert.equal(row.temporary, false);
    const ids = list.computers.map((c) => c.computer_id);
    assert.deepEqual(ids, [...ids].sort(), 'sorted by id');

    const dash = payload(await tool(s, 'computer_dashboard'));
    assert.ok(dash.computers.some((c) => c.computer_id === id));

    const restarted = payload(await tool(s, 'computer_restart', { computer_id: id }));
    assert.equal(restarted.computer_id, id);
    assert.equal((await s.exec({ computer_id: id, temporary: false, command: 'cat /root/f' })).stdout, 'kept\n');

    const reset = payload(await tool(s, 'computer_factory_reset', { computer_id: id }));
    assert.equal(reset.temporary, false, 'mode kept');
    assert.notEqual(reset.sandbox_id, created.sandbox_id, 'a new container');
    const after = await s.exec({ computer_id: id, temporary: false, command: 'cat /root/f' });
    assert.notEqual(after.exit_code, 0, 'files gone after a factory reset');

    const del = payload(await tool(s, 'computer_delete', { computer_id: id }));
    assert.deepEqual(del, { ok: true, computer_id: id, deleted: true });
    assert.equal(await containerOf(id), null);
    const again = await tool(s, 'computer_delete', { computer_id: id });
    assert.equal(again.isError, true);
    assert.deepEqual(again.structuredContent, { error: `Computer '${id}' was not found.` });
  });

  it('create without an id makes a new random computer that is not the default', async () => {
    const a = payload(await tool(s, 'computer_create', {}));
    track(a.computer_id);
    assert.match(a.computer_id, RANDOM_SLUG_RE);
    assert.equal(a.temporary, true);
    const def = await s.exec({ command: 'true' });
    track(def.computer_id);
    assert.notEqual(def.computer_id, a.computer_id);
  });

  it('errors: bad slug, unknown id, mode mismatch', async () => {
    for (const name of ['computer_restart', 'computer_factory_reset', 'computer_delete']) {
      const bad = await tool(s, name, { computer_id: 'Not_A_Slug' });
      assert.equal(bad.isError, true);
      assert.deepEqual(bad.structuredContent, { error: SLUG_ERROR });
      const unknown = await tool(s, name, { computer_id: cid('nope') });
      assert.equal(unknown.isError, true);
      assert.equal(unknown.structuredContent.error, `Computer '${cid('nope')}' was not found.`);
      const missing = await tool(s, name, {});
      assert.equal(missing.isError, true);
    }
    const id = cid('perm');
    payload(await tool(s, 'computer_create', { computer_id: id, temporary: false }));
    const mismatch = await tool(s, 'computer_create', { computer_id: id, temporary: true });
    assert.equal(mismatch.isError, true);
    assert.match(mismatch.structuredContent.error, /already attached with temporary=false/);
    const other = await startServer([], { env: LIFECYCLE });
    try {
      const r = await tool(other, 'computer_create', { computer_id: id, temporary: true });
      assert.equal(r.isError, true);
      assert.match(r.structuredContent.error, new RegExp(`Computer '${id}' already exists with temporary=false`));
    } finally { await other.close(); }
  });

  it('a temporary computer is its HTTP session\'s alone: another session naming it is refused; its end removes it', async () => {
    const port = await freePort();
    const srv = spawn(MSC_BIN, ['--transport', 'http', '--port', String(port)],
      { env: { ...process.env, ...LIFECYCLE }, stdio: ['ignore', 'ignore', 'pipe'] });
    srv.stderr.resume();
    const url = new URL(`http://127.0.0.1:${port}/mcp`);
    const clients = [];
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok);
      for (let i = 0; i < 2; i++) {
        const c = new Client({ name: 'shared', version: '1' });
        await c.connect(new StreamableHTTPClientTransport(url));
        clients.push(c);
      }
      const id = cid('shared');
      const call = (c, name, args) => c.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
      payload(await call(clients[0], 'computer_create', { computer_id: id }));
      const r = await call(clients[1], 'terminal_execute', { computer_id: id, command: 'echo hi' });
      assert.equal(r.isError, true);
      assert.match(textOf(r), /Temporary computer already has an active sandbox_handle/);
      await clients[1].transport.terminateSession();
      assert.ok(await containerOf(id), 'still there while the first session owns it');
      await clients[0].transport.terminateSession();
      await waitFor(async () => (await containerOf(id)) === null, { timeoutMs: 15000 });
    } finally {
      for (const c of clients) await c.close().catch(() => {});
      srv.kill('SIGTERM');
      await waitExit(srv, 15000);
    }
  });
});

describe('operator command line', () => {
  it('create, exec, ls, restart, reset, rm with exit codes and --json', async () => {
    const id = cid('cli');
    let r = await runCli(['create', id, '--json'], { timeoutMs: 120000 });
    assert.equal(r.code, 0, r.stderr);
    const c = JSON.parse(r.stdout);
    assert.equal(c.computer_id, id);
    assert.equal(c.temporary, false, 'the command line makes permanent computers by default');

    r = await runCli(['exec', id, '-c', 'echo out; echo err >&2; exit 7']);
    assert.equal(r.code, 7);
    assert.equal(r.stdout, 'out\n');
    // the command's stderr, whatever the program logged around it (a warning of its own thread)
    assert.equal(r.stderr.trim().split('\n').filter((l) => !/^mcp-sandbox-computer\[\d+\] /.test(l)).pop(), 'err');

    r = await runCli(['exec', id, '-i', '--json', '--', 'tr', 'a-z', 'A-Z'], { input: 'hello' });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).stdout, 'HELLO');

    r = await runCli(['exec', id, '--timeout', '1', '-c', 'sleep 30']);
    assert.equal(r.code, 124);

    r = await runCli(['ls', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(JSON.parse(r.stdout).computers.some((x) => x.computer_id === id));
    r = await runCli(['ls']);
    assert.match(r.stdout.split('\n')[0], /^COMPUTER ID/);
    assert.ok(r.stdout.includes(id));

    await runCli(['exec', id, '-c', 'touch /root/mark']);
    r = await runCli(['restart', id], { timeoutMs: 60000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await runCli(['exec', id, '--', 'ls', '/root/mark'])).code, 0, 'restart keeps files');
    r = await runCli(['reset', id], { timeoutMs: 60000 });
    assert.equal(r.code, 0, r.stderr);
    assert.notEqual((await runCli(['exec', id, '--', 'ls', '/root/mark'])).code, 0, 'reset erases files');

    r = await runCli(['rm', id]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await containerOf(id), null);
    r = await runCli(['rm', id]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /was not found/);
  });

  it('usage errors exit 2, bad ids and a dead engine exit 1', async () => {
    assert.equal((await runCli(['exec'])).code, 2);
    assert.equal((await runCli(['exec', cid('x')])).code, 2, 'neither -c nor --');
    assert.equal((await runCli(['rm'])).code, 2);
    const bad = await runCli(['create', 'Bad_Id']);
    assert.equal(bad.code, 1);
    assert.ok(bad.stderr.includes(SLUG_ERROR));
    const dead = await runCli(['ls', '--docker-host', 'unix:///nonexistent.sock']);
    assert.equal(dead.code, 1);
    assert.match(dead.stderr, /Cannot connect to/);
  });
});
