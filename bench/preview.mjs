#!/usr/bin/env node
// preview.mjs: preview URLs (issue 30) against the container's own address, in one run, one
// server (stdio, --tools ports), one computer serving tests/browser/preview_server.pl on 8000:
//   - p50/p90 of one GET at a time on a kept-alive client connection, in turns
//     (through http://CAP.localhost:PORT/ with its Host, then straight to CONTAINER_IP:8000);
//   - requests/s with --concurrency connections, each path for the same number of requests.
// The proxy opens a new connection to the computer per request (Connection: close upstream), so
// the perl server forks per proxied request and not per direct one: the ratio is the whole
// cost a user sees, the connection included.
//
//   node bench/preview.mjs [--bin PATH] [--n 300] [--concurrency 8] [--flags "..."]
//
// Prints a markdown table; with BENCH_NO_APPEND unset also appends it to bench/RESULTS.md.
import path from 'node:path';
import http from 'node:http';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const SDK = path.join(REPO, 'tests', 'integration', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
if (!existsSync(SDK)) {
  process.stderr.write(`bench: MCP SDK not installed; run: npm ci --prefix ${path.join(REPO, 'tests', 'integration')}\n`);
  process.exit(1);
}
const { Client } = await import(pathToFileURL(path.join(SDK, 'client', 'index.js')).href);
const { StdioClientTransport } = await import(pathToFileURL(path.join(SDK, 'client', 'stdio.js')).href);

const o = { bin: process.env.MSC_BIN || path.join(REPO, 'build', 'mcp-sandbox-computer'), n: 300, conc: 8, flags: [] };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--bin') o.bin = process.argv[++i];
  else if (a === '--n') o.n = Number(process.argv[++i]);
  else if (a === '--concurrency') o.conc = Number(process.argv[++i]);
  else if (a === '--flags') o.flags = process.argv[++i].split(/\s+/).filter(Boolean);
  else { process.stderr.write('usage: preview.mjs [--bin PATH] [--n N] [--concurrency C] [--flags "..."]\n'); process.exit(2); }
}

const ID = `pvbench-${randomBytes(3).toString('hex')}`;
const t = new StdioClientTransport({ command: o.bin, args: ['--tools', 'ports', '--preview-listen', '127.0.0.1:0', ...o.flags], stderr: 'ignore', env: { ...process.env } });
const c = new Client({ name: 'bench-preview', version: '1' }, { capabilities: {} });
await c.connect(t);
async function call(name, args) {
  const r = await c.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  if (r.isError) throw new Error(`${name}: ${r.content[0].text}`);
  return JSON.parse(r.content[0].text);
}
let failed = false;
try {
  const server = readFileSync(path.join(REPO, 'tests', 'browser', 'preview_server.pl'), 'utf8');
  await call('terminal_execute', { computer_id: ID, command: `cat > /tmp/s.pl <<'PERL_EOF'\n${server}\nPERL_EOF\n(setsid perl /tmp/s.pl 8000 bench >/dev/null 2>&1 &); sleep 0.5; echo started` });
  const { url } = await call('computer_expose_port', { computer_id: ID, port: 8000 });
  const u = new URL(url);
  const ip = execFileSync(process.env.MSC_DOCKER || 'docker', ['inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}', `kilntainer-${ID}`], { encoding: 'utf8' }).trim().split(/\s+/)[0];
  const targets = {
    preview: { host: '127.0.0.1', port: Number(u.port), hostHeader: u.host },
    direct: { host: ip, port: 8000, hostHeader: `${ip}:8000` },
    fresh: { host: ip, port: 8000, hostHeader: `${ip}:8000` },
  };
  const get = (tg, agent) => new Promise((resolve, reject) => {
    const req = http.request({ host: tg.host, port: tg.port, path: '/bench', agent, headers: { Host: tg.hostHeader } }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => (res.statusCode === 200 && body.includes('hello from bench') ? resolve() : reject(new Error(`${res.statusCode} ${body.slice(0, 200)}`))));
    });
    req.on('error', reject);
    req.setTimeout(20000, () => req.destroy(new Error('timeout')));
    req.end();
  });
  const agents = { preview: new http.Agent({ keepAlive: true, maxSockets: o.conc }), direct: new http.Agent({ keepAlive: true, maxSockets: o.conc }),
    fresh: new http.Agent({ keepAlive: false, maxSockets: o.conc }) };
  for (let i = 0; i < 10; i++) for (const k of ['preview', 'direct', 'fresh']) await get(targets[k], agents[k]);
  // Latency: one request at a time, in turns, so that both see the same load.
  const lat = { preview: [], direct: [], fresh: [] };
  for (let i = 0; i < o.n; i++) {
    for (const k of i % 2 ? ['direct', 'fresh', 'preview'] : ['preview', 'fresh', 'direct']) {
      const t0 = performance.now(); await get(targets[k], agents[k]); lat[k].push(performance.now() - t0);
    }
  }
  // Throughput: o.conc requests in flight, o.n each path; direct then preview then direct again.
  const rps = async (k) => {
    let next = 0;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: o.conc }, async () => { while (next++ < o.n) await get(targets[k], agents[k]); }));
    return o.n / ((performance.now() - t0) / 1000);
  };
  const r = { direct: [await rps('direct')], fresh: [await rps('fresh')], preview: [await rps('preview')] };
  r.direct.push(await rps('direct'));
  r.fresh.push(await rps('fresh'));
  r.preview.push(await rps('preview'));
  const q = (ms, p) => { const s = [...ms].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(s.length * p))]; };
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const f = (x) => x.toFixed(2);
  const rows = [
    `| path (${o.n} requests each) | p50 ms | p90 ms | requests/s (${o.conc} in flight) |`,
    '|---|---:|---:|---:|',
    `| preview URL (proxy, new upstream connection per request) | ${f(q(lat.preview, 0.5))} | ${f(q(lat.preview, 0.9))} | ${mean(r.preview).toFixed(0)} |`,
    `| container address, kept-alive | ${f(q(lat.direct, 0.5))} | ${f(q(lat.direct, 0.9))} | ${mean(r.direct).toFixed(0)} |`,
    `| container address, a new connection per request | ${f(q(lat.fresh, 0.5))} | ${f(q(lat.fresh, 0.9))} | ${mean(r.fresh).toFixed(0)} |`,
    `| ratio preview / kept-alive direct | ${f(q(lat.preview, 0.5) / q(lat.direct, 0.5))} | ${f(q(lat.preview, 0.9) / q(lat.direct, 0.9))} | ${f(mean(r.preview) / mean(r.direct))} |`,
    `| ratio preview / new-connection direct | ${f(q(lat.preview, 0.5) / q(lat.fresh, 0.5))} | ${f(q(lat.preview, 0.9) / q(lat.fresh, 0.9))} | ${f(mean(r.preview) / mean(r.fresh))} |`,
  ];
  console.log(rows.join('\n'));
  if (!process.env.BENCH_NO_APPEND) {
    appendFileSync(path.join(HERE, 'RESULTS.md'), `\n## ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC preview URLs (bench/preview.mjs --n ${o.n} --concurrency ${o.conc})\n\n${rows.join('\n')}\n`);
  }
  for (const a of Object.values(agents)) a.destroy();
} catch (e) {
  process.stderr.write(`bench/preview: ${e.stack || e}\n`);
  failed = true;
}
await call('computer_delete', { computer_id: ID }).catch(() => {});
await c.close();
process.exit(failed ? 1 : 0);
