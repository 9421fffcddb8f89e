// A small MCP Apps host for the dashboard (edge/dashboard.html), used by dashboard.test.mjs and by hand.
//
// startHost() serves, on 127.0.0.1:
//   GET  /          host.html: the host side of the MCP Apps bridge, the app in a sandboxed iframe
//   GET  /app.html  the app's HTML (what the server returned for resources/read ui://kilntainers/computers)
//   POST /call      {name, arguments} -> {result: CallToolResult} | {error: {code, message}}
// Tool calls are made in Node: with the official SDK client against the real server (serverCaller),
// or against canned in-memory data (fakeCaller) to work on the page without a server.
//
// By hand:
//   node host.mjs                 start the server (MSC_BIN, HTTP, ENABLE_LIFECYCLE_TOOLS=true) and the host
//   node host.mjs --fake [N]      canned data with N computers (default 6), no server, the page from edge/
//   options: --port P (host page port, default 8440), --server-port P
// then open http://127.0.0.1:<port>/ in a browser.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, '..', '..');
export const MSC_BIN = process.env.MSC_BIN || path.join(REPO, 'build', 'mcp-sandbox-computer');
export const DASHBOARD_FILE = path.join(REPO, 'edge', 'dashboard.html');
export const DASHBOARD_URI = 'ui://kilntainers/computers';
export const APP_MIME = 'text/html;profile=mcp-app';
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
const HOST_PAGE = readFileSync(path.join(HERE, 'host.html'), 'utf8');

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function readBody(req, limit = 1 << 20) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let n = 0;
    req.on('data', (c) => {
      n += c.length;
      if (n > limit) { reject(new Error('body too large')); req.destroy(); } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Serve the host page. `html` is the app's HTML; `callTool(name, args)` resolves a CallToolResult
 * (or throws: the error goes back to the app as a JSON-RPC error). Returns {url, calls, close()}.
 */
export async function startHost({ html, callTool, port = 0 }) {
  const calls = [];
  const server = http.createServer(async (req, res) => {
    const send = (status, type, body) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    try {
      const url = new URL(req.url, 'http://localhost');
      if (req.method === 'GET' && url.pathname === '/') return send(200, 'text/html; charset=utf-8', HOST_PAGE);
      if (req.method === 'GET' && url.pathname === '/favicon.ico') return send(204, 'image/x-icon', '');
      if (req.method === 'GET' && url.pathname === '/app.html') return send(200, 'text/plain; charset=utf-8', html);
      if (req.method === 'POST' && url.pathname === '/call') {
        const { name, arguments: args } = JSON.parse(await readBody(req));
        calls.push({ name, arguments: args });
        let body;
        try {
          body = { result: await callTool(name, args ?? {}) };
        } catch (e) {
          body = { error: { code: typeof e.code === 'number' ? e.code : -32603, message: String(e.message ?? e) } };
        }
        return send(200, 'application/json', JSON.stringify(body));
      }
      return send(404, 'text/plain', 'not found');
    } catch (e) {
      return send(500, 'text/plain', String(e.stack ?? e));
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    calls,
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(() => resolve()); }),
  };
}

// ---------------------------------------------------------------------------------------------
// the real server

/**
 * Start `MSC_BIN --transport http --host 127.0.0.1 --port <free> ...flags` with
 * ENABLE_LIFECYCLE_TOOLS=true and wait for /healthz. Returns {proc, port, mcpUrl, stderr(), stop()}.
 */
export async function startServer({ flags = [], env = {}, port, readyTimeoutMs = 20000, trace = false } = {}) {
  port ??= await freePort();
  const baseEnv = { ...process.env };
  delete baseEnv.KILNTAINERS_AUTH_TOKEN;
  const args = ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port), ...flags];
  const proc = spawn(MSC_BIN, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...baseEnv, ENABLE_LIFECYCLE_TOOLS: 'true', ...env },
  });
  let err = '';
  proc.stderr.on('data', (c) => {
    err += c;
    if (err.length > 1 << 20) err = err.slice(-(1 << 19));
    if (trace) process.stderr.write(c);
  });
  const exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  let alive = true;
  exited.then(() => { alive = false; });
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (!alive) throw new Error(`server exited before it was ready: ${MSC_BIN} ${args.join(' ')}\n${err}`);
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (r.status === 200) break;
    } catch { /* not yet */ }
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`server not ready after ${readyTimeoutMs} ms\n${err}`);
    }
    await sleep(100);
  }
  return {
    proc,
    port,
    mcpUrl: `http://127.0.0.1:${port}/mcp`,
    stderr: () => err,
    async stop(timeoutMs = 15000) {
      if (!alive) return exited;
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
      const r = await exited;
      clearTimeout(t);
      return r;
    },
  };
}

/** An SDK client (Streamable HTTP) that declares the MCP Apps extension, like an Apps-capable host. */
export async function connectClient(mcpUrl) {
  const client = new Client(
    { name: 'msc-browser-test-host', version: '1.0.0' },
    { capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME] } } } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl));
  await client.connect(transport);
  return client;
}

/** resources/read of the dashboard: {html, content} (content = the first contents item). */
export async function readDashboard(client) {
  const r = await client.readResource({ uri: DASHBOARD_URI });
  const content = r.contents?.[0];
  if (!content) throw new Error(`resources/read ${DASHBOARD_URI}: no contents`);
  const html = typeof content.text === 'string' ? content.text
    : Buffer.from(content.blob ?? '', 'base64').toString('utf8');
  return { html, content };
}

/**
 * The app's tools/call through the SDK client, with the host rule of MCP Apps: only tools the
 * server lists, and only those whose _meta.ui.visibility (when given) includes "app".
 */
export async function serverCaller(client) {
  const { tools } = await client.listTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  return async (name, args) => {
    const tool = byName.get(name);
    if (!tool) throw Object.assign(new Error(`Unknown tool: ${name}`), { code: -32602 });
    const vis = tool._meta?.ui?.visibility;
    if (Array.isArray(vis) && !vis.includes('app')) {
      throw Object.assign(new Error(`Tool ${name} is not available to apps`), { code: -32602 });
    }
    return client.callTool({ name, arguments: args }, undefined, { timeout: 300000 });
  };
}

// ---------------------------------------------------------------------------------------------
// canned data (working on the page without a server)

const ADJ = ['amber', 'brisk', 'calm', 'clever', 'coral', 'crisp', 'gentle', 'lucky', 'quiet', 'rapid', 'silver', 'steady'];
const NOUN = ['badger', 'comet', 'falcon', 'gecko', 'heron', 'lynx', 'otter', 'panda', 'raven', 'tiger', 'whale', 'wolf'];
const hex = (n) => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(Math.random() * 16)]).join('');
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const SLUG_ERROR = 'computer_id must be 1-63 lowercase letters, numbers, or hyphens; it must start and end with a letter or number.';

/** Synthetic computers in the shape of computer_list's items. */
export function fakeComputers(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push({
      computer_id: `${ADJ[i % 12]}-${NOUN[Math.floor(i / 12) % 12]}-${i.toString(16).padStart(4, '0')}`,
      sandbox_id: hex(64),
      backend: 'docker',
      state: i % 7 === 3 ? 'exited' : 'running',
      temporary: i % 3 !== 0,
      image: i % 5 === 4 ? null : 'debian:bookworm-slim',
      created_at: new Date(Date.UTC(2026, 0, 26, 9, 0, i)).toISOString(),
    });
  }
  return out;
}

/** A callTool over canned in-memory computers, with the server's result and error shapes. */
export function fakeCaller({ count = 6, delayMs = 150 } = {}) {
  const computers = new Map(fakeComputers(count).map((c) => [c.computer_id, c]));
  const ok = (obj) => ({ content: [{ type: 'text', text: JSON.stringify(obj) }], structuredContent: obj, isError: false });
  const err = (msg) => ({ content: [{ type: 'text', text: JSON.stringify({ error: msg }) }], structuredContent: { error: msg }, isError: true });
  const list = () => {
    const arr = [...computers.values()].sort((a, b) => (a.computer_id < b.computer_id ? -1 : 1));
    return ok({ computers: arr, count: arr.length });
  };
  const known = (id) => {
    if (typeof id !== 'string' || !SLUG.test(id.trim())) return [null, err(SLUG_ERROR)];
    const c = computers.get(id.trim());
    return c ? [c, null] : [null, err(`Computer '${id.trim()}' was not found.`)];
  };
  return async (name, args = {}) => {
    await sleep(delayMs);
    switch (name) {
      case 'computer_list':
      case 'computer_dashboard':
        return list();
      case 'computer_create': {
        const id = (args.computer_id ?? '').trim() || `${ADJ[Math.floor(Math.random() * 12)]}-${NOUN[Math.floor(Math.random() * 12)]}-${hex(4)}`;
        if (!SLUG.test(id)) return err(SLUG_ERROR);
        const temporary = args.temporary !== false;
        const had = computers.get(id);
        if (had && had.temporary !== temporary) {
          return err(`Computer '${id}' already exists with temporary=${had.temporary}; requested temporary=${temporary}.`);
        }
        const c = had ?? { computer_id: id, sandbox_id: hex(64), backend: 'docker', state: 'running', temporary, image: 'debian:bookworm-slim', created_at: new Date().toISOString() };
        computers.set(id, c);
        return ok({ ok: true, computer_id: id, sandbox_id: c.sandbox_id, temporary });
      }
      case 'computer_restart':
      case 'computer_factory_reset': {
        const [c, e] = known(args.computer_id);
        if (e) return e;
        c.sandbox_id = name === 'computer_factory_reset' ? hex(64) : c.sandbox_id;
        c.state = 'running';
        return ok({ ok: true, computer_id: c.computer_id, sandbox_id: c.sandbox_id, temporary: c.temporary });
      }
      case 'computer_delete': {
        const [c, e] = known(args.computer_id);
        if (e) return e;
        computers.delete(c.computer_id);
        return ok({ ok: true, computer_id: c.computer_id, deleted: true });
      }
      case 'terminal_execute': {
        const [c, e] = known(args.computer_id);
        if (e) return e;
        const cmd = String(args.command ?? '');
        const echo = /^echo (.*)$/.exec(cmd);
        const res = {
          computer_id: c.computer_id, temporary: c.temporary,
          stdout: echo ? `${echo[1]}\n` : cmd.startsWith('false') ? '' : `(fake) ran: ${cmd}\n`,
          stderr: cmd.includes('>&2') ? 'something on stderr\n' : '',
          exit_code: cmd.startsWith('false') ? 1 : 0,
          exec_duration_ms: 12 + Math.floor(Math.random() * 80),
        };
        return { content: [{ type: 'text', text: JSON.stringify(res) }], structuredContent: res, isError: false };
      }
      default:
        return { content: [{ type: 'text', text: `Unknown tool: ${name}` }], isError: true };
    }
  };
}

// ---------------------------------------------------------------------------------------------
// by hand

async function main(argv) {
  const opt = (name, dflt) => {
    const i = argv.indexOf(name);
    return i >= 0 && argv[i + 1] && !argv[i + 1].startsWith('--') ? argv[i + 1] : dflt;
  };
  const port = Number(opt('--port', 8440));
  let html;
  let callTool;
  let stop = async () => {};
  if (argv.includes('--fake')) {
    html = readFileSync(DASHBOARD_FILE, 'utf8');
    callTool = fakeCaller({ count: Number(opt('--fake', 6)) });
  } else {
    const srv = await startServer({ port: argv.includes('--server-port') ? Number(opt('--server-port')) : undefined, trace: true });
    const client = await connectClient(srv.mcpUrl);
    ({ html } = await readDashboard(client));
    callTool = await serverCaller(client);
    console.log(`MCP server: ${srv.mcpUrl}`);
    stop = async () => { await client.close().catch(() => {}); await srv.stop(); };
  }
  const host = await startHost({ html, callTool, port });
  console.log(`host page: ${host.url}  (Ctrl+C to stop)`);
  const bye = async () => { await host.close(); await stop(); process.exit(0); };
  process.once('SIGINT', bye);
  process.once('SIGTERM', bye);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((e) => { console.error(e); process.exit(1); });
}
