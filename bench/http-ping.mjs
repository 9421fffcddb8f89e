// http-ping.mjs: the HTTP transport's own cost, without a container: JSON-RPC `ping` on an open
// session (POST /mcp, one Touch to the session service) and GET /healthz, one request at a time
// on a keep-alive connection and 32 at a time on 32 connections, for one or more server builds
// in the same run (rounds alternate between builds so that machine load hits both alike). The
// first --bin is the reference of the ratio column.
//
//   node bench/http-ping.mjs --bin OLD_BINARY --bin NEW_BINARY [--requests 2000] [--rounds 3]
//
// Prints a markdown table on stdout: median and p99 latency per request, requests/s, and each
// build's figure as a ratio to the first build's. Exits 1 when a request fails (not 200, a ping
// answered without a result, no answer within 30 s) or a server does not start, exits before
// it is stopped or does not exit 0 on SIGTERM.
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { performance } from 'node:perf_hooks';

const args = process.argv.slice(2);
const bins = [];
let requests = 2000;
let rounds = 3;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--bin') bins.push(args[++i]);
  else if (args[i] === '--requests') requests = Number(args[++i]);
  else if (args[i] === '--rounds') rounds = Number(args[++i]);
  else { process.stderr.write(`http-ping: unknown argument ${args[i]}\n`); process.exit(2); }
}
if (!bins.length) { process.stderr.write('usage: node bench/http-ping.mjs --bin PATH [--bin PATH]...\n'); process.exit(2); }

const freePort = () => new Promise((resolve) => {
  const s = net.createServer();
  s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});

const REQUEST_MS = 30000;

function post(agent, port, body, session) {
  return new Promise((resolve, reject) => {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Content-Length': Buffer.byteLength(body) };
    if (session) headers['Mcp-Session-Id'] = session;
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/mcp', agent, headers, timeout: REQUEST_MS }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, session: res.headers['mcp-session-id'], text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${REQUEST_MS / 1000} s`)));
    req.on('error', reject);
    req.end(body);
  });
}

function get(agent, port) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'GET', path: '/healthz', agent, timeout: REQUEST_MS }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${REQUEST_MS / 1000} s`)));
    req.on('error', reject);
    req.end();
  });
}

/** A ping's answer: JSON-RPC with a result (an error answer with 200 is a failure too). */
function pingAnswered(r) {
  if (r.status !== 200) return false;
  try {
    // JSON, or one SSE event whose data line carries it
    const m = /^data: (.*)$/m.exec(r.text);
    return JSON.parse(m ? m[1] : r.text).result !== undefined;
  } catch { return false; }
}

async function startServer(bin) {
  const port = await freePort();
  const proc = spawn(bin, ['--transport', 'http', '--port', String(port)], { stdio: ['ignore', 'ignore', 'ignore'] });
  const exited = new Promise((resolve) => {
    proc.once('exit', (code, signal) => resolve(code ?? signal));
    proc.once('error', (e) => resolve(e.message));
  });
  const gone = () => proc.exitCode !== null || proc.signalCode !== null;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = 0; ; i++) {
    if (gone() || proc.pid === undefined) throw new Error(`${bin}: exited at startup (${await exited})`);
    try { if ((await get(agent, port)).status === 200) break; } catch { /* not yet */ }
    if (i >= 400) { proc.kill('SIGKILL'); throw new Error(`${bin}: not up after 20 s`); }
    await new Promise((r) => setTimeout(r, 50));
  }
  const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'http-ping', version: '1' } } });
  const r = await post(agent, port, init);
  if (r.status !== 200 || !r.session) { proc.kill('SIGKILL'); throw new Error(`${bin}: initialize answered ${r.status}`); }
  agent.destroy();
  return {
    proc, port, session: r.session,
    stop: async () => {
      if (gone()) throw new Error(`${bin}: exited before it was stopped (${await exited})`);
      proc.kill('SIGTERM');
      const status = await exited;   // 0 on SIGTERM: anything else is a crash or, under ASan, a leak
      if (status !== 0) throw new Error(`${bin}: exited ${status} after SIGTERM`);
    },
  };
}

async function measure(srv, kind, concurrency) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });
  const one = () => (kind === 'ping' ? post(agent, srv.port, ping, srv.session) : get(agent, srv.port));
  for (let i = 0; i < 50; i++) await one();
  const lat = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < requests) {
      const s = performance.now();
      const r = await one();
      if (kind === 'ping' ? !pingAnswered(r) : r.status !== 200) throw new Error(`${kind} answered ${r.status} ${r.text?.slice(0, 200) ?? ''}`);
      lat.push(performance.now() - s);
    }
  }));
  const wall = performance.now() - t0;
  agent.destroy();
  lat.sort((a, b) => a - b);
  return { median: lat[lat.length >> 1], p99: lat[Math.floor(lat.length * 0.99)], rps: lat.length / (wall / 1000) };
}

const scenarios = [['ping', 1], ['ping', 32], ['healthz', 1], ['healthz', 32]];
const results = bins.map(() => scenarios.map(() => []));
try {
  for (let round = 0; round < rounds; round++) {
    for (let b = 0; b < bins.length; b++) {
      const srv = await startServer(bins[b]);
      let measured = null;
      try {
        for (let s = 0; s < scenarios.length; s++) results[b][s].push(await measure(srv, ...scenarios[s]));
      } catch (e) {
        measured = e;
      }
      await srv.stop();   // a server that died mid-run says so here, before the request's error
      if (measured) throw measured;
    }
  }
} catch (e) {
  process.stderr.write(`http-ping: ${e.message}\n`);
  process.exit(1);
}
const med = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
const f = (x) => x.toFixed(x < 10 ? 2 : 0);
console.log(`| request | at once | build | median ms | p99 ms | req/s | median vs first | req/s vs first |`);
console.log(`|---|---|---|---|---|---|---|---|`);
for (let s = 0; s < scenarios.length; s++) {
  const ref = { median: med(results[0][s].map((r) => r.median)), rps: med(results[0][s].map((r) => r.rps)) };
  for (let b = 0; b < bins.length; b++) {
    const m = med(results[b][s].map((r) => r.median));
    const p = med(results[b][s].map((r) => r.p99));
    const q = med(results[b][s].map((r) => r.rps));
    console.log(`| ${scenarios[s][0]} | ${scenarios[s][1]} | ${bins[b]} | ${f(m)} | ${f(p)} | ${f(q)} | ${(m / ref.median).toFixed(2)} | ${(q / ref.rps).toFixed(2)} |`);
  }
}
