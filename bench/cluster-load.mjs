#!/usr/bin/env node
// cluster-load.mjs: the load of bench/cluster.sh. N concurrent MCP sessions over Streamable
// HTTP (plain JSON-RPC POSTs, keep-alive connections), spread round-robin over the given edges;
// each session initializes, runs a first terminal_execute (which creates its computer), then K
// more (`true` and `echo hi` in turn), one after another; all sessions at once. Then it reads
// the services' memory from /proc and ends every session (DELETE), which removes the computers.
//
//   node bench/cluster-load.mjs --edge URL [--edge URL]... --sessions N --calls K
//        [--token T] [--pid NAME=PID]... [--driver-label PREFIX] [--label TEXT]
//        [--source-addresses N] [--max-sockets M] [--computer-dir NAME=DIR]...
//   node bench/cluster-load.mjs --render A.json B.json...   (markdown tables of earlier runs)
//
// Prints one JSON object on stdout: phase wall times, terminal_execute latencies (p50/p99) of
// the creating call and of the later calls, calls/s, errors, per-driver computer counts (by the
// kilntainers.driver label, when --driver-label is given), VmRSS/VmHWM per process.
//
// --computer-dir: computers counted as the entries of DIR (a go_busybox driver's folder of
// computers) instead of by the containers' kilntainers.driver label.
//
// Session i connects from loopback address 127.0.0.(1 + i % N) (--source-addresses N, default
// 64), at most M connections from each (--max-sockets, default no bound: one per session in
// flight; more sessions than an edge takes connections, 4096, share them and queue here): on Linux all of 127/8 is the loopback, so N addresses stand for N client machines, and
// no edge meets its per-address connection cap (--max-address-connections, 256) from a load
// that real clients would spread over many addresses. Session i goes to edge i % E, so with two
// edges and an even N each edge sees the N / 2 addresses of its parity: with the defaults and
// --max-sockets 4, 32 x 4 = 128 connections per edge.
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

function parseArgs(argv) {
  const o = { edges: [], sessions: 100, calls: 4, token: '', pids: [], driverLabel: null, label: '', render: null,
    sources: 64, maxSockets: Infinity, dirs: [] };
  for (let i = 0; i < argv.length; i++) {
    const v = () => argv[++i];
    switch (argv[i]) {
      case '--edge': o.edges.push(v()); break;
      case '--sessions': o.sessions = Number(v()); break;
      case '--calls': o.calls = Number(v()); break;
      case '--token': o.token = v(); break;
      case '--pid': { const [n, p] = v().split('='); o.pids.push({ name: n, pid: Number(p) }); break; }
      case '--driver-label': o.driverLabel = v(); break;
      case '--label': o.label = v(); break;
      case '--source-addresses': o.sources = Number(v()); break;
      case '--max-sockets': o.maxSockets = Number(v()); break;
      case '--computer-dir': { const [n, d] = v().split('='); o.dirs.push({ name: n, dir: d }); break; }
      case '--render': o.render = argv.slice(i + 1); i = argv.length; break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  return o;
}

// one keep-alive agent per source address (see above). A connection idle for 5 s is closed
// here (the agent's timeout, which Node applies to pooled sockets only; each request sets its
// own): the edges close keep-alive connections idle for 10 s, and a request sent on one as it
// closes fails with "socket hang up". That timer, like everything here, runs on this one
// thread: a stall of this process's event loop (a client starved of CPU by the services'
// threads) lets pooled connections outlive the edges' 10 s and be reused after the edge closed
// them. So the loop's longest stall is measured and reported (clientStallMs).
let agents = [];
let stallMs = 0;
function watchStalls() {
  let last = performance.now();
  return setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last - 100);
    last = now;
  }, 100);
}
function makeAgents(n, maxSockets) {
  agents = Array.from({ length: Math.max(1, n) }, (_, i) =>
    new http.Agent({ keepAlive: true, maxSockets, timeout: 5000, localAddress: `127.0.0.${1 + i}` }));
}

/** One HTTP request from source agent `agent`; resolves {status, headers, body}. */
function request(agent, url, method, headers, body, timeoutMs = 900000) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    // a connection closed under a request sent on a pooled connection, or on a new one
    req.on('error', (e) => reject(new Error(`${e.message}${req.reusedSocket ? ' (a reused connection)' : ''}`)));
    req.end(body);
  });
}

function quantile(sorted, q) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function summary(lat) {
  const s = [...lat].sort((a, b) => a - b);
  const r = (x) => (x === null ? null : Math.round(x * 10) / 10);
  return { n: s.length, p50: r(quantile(s, 0.5)), p99: r(quantile(s, 0.99)), max: r(s[s.length - 1] ?? null) };
}

function memory(pids) {
  const out = {};
  for (const { name, pid } of pids) {
    try {
      const st = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(st)?.[1] ?? NaN);
      out[name] = { rssKb: kb('VmRSS'), hwmKb: kb('VmHWM'), threads: kb('Threads') };
    } catch { out[name] = null; }
  }
  return out;
}

function placement(prefix, dirs) {
  if (dirs.length > 0) {
    const per = {};
    for (const { name, dir } of dirs) {
      let n = 0;
      try { n = readdirSync(dir).filter((e) => !e.startsWith('.')).length; } catch { /* none yet */ }
      if (n > 0) per[name] = n;
    }
    return per;
  }
  const out = execFileSync('docker', ['ps', '-a', '--filter', 'label=kilntainers.driver',
    '--format', '{{.Label "kilntainers.driver"}}']).toString();
  const per = {};
  for (const d of out.split('\n')) if (d.startsWith(prefix)) per[d] = (per[d] ?? 0) + 1;
  return per;
}

async function run(o) {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  if (o.token) headers.Authorization = `Bearer ${o.token}`;
  const errors = [];
  const err = (what) => { if (errors.length < 2000) errors.push(what); };
  makeAgents(o.sources, o.maxSockets);
  const stalls = watchStalls();
  const sessions = Array.from({ length: o.sessions }, (_, i) => ({ edge: o.edges[i % o.edges.length], sid: null,
    agent: agents[i % agents.length] }));
  let id = 1;
  const res = { label: o.label, sessions: o.sessions, callsPerSession: o.calls, edges: o.edges.length };
  const clean = (h) => Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined));

  res.memoryIdle = memory(o.pids);
  // 1. initialize
  let t0 = performance.now();
  await Promise.all(sessions.map(async (s) => {
    try {
      const r = await request(s.agent, s.edge, 'POST', headers, JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'cluster-bench', version: '1' } } }));
      if (r.status === 200 && r.headers['mcp-session-id']) s.sid = r.headers['mcp-session-id'];
      else err(`initialize ${r.status} ${r.body.slice(0, 200)}`);
    } catch (e) { err(`initialize ${e.message}`); }
  }));
  res.initializeMs = Math.round(performance.now() - t0);
  const live = sessions.filter((s) => s.sid);

  // one terminal_execute; resolves its latency in ms, or null on an error
  const exec = async (s, command, expect) => {
    const t = performance.now();
    try {
      const r = await request(s.agent, s.edge, 'POST', clean({ ...headers, 'Mcp-Session-Id': s.sid }),
        JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: 'terminal_execute', arguments: { command } } }));
      const ms = performance.now() - t;
      const body = r.status === 200 ? JSON.parse(r.body) : null;
      const sc = body?.result?.structuredContent;
      if (!sc || body.result.isError || sc.stdout !== expect || sc.exit_code !== 0) {
        err(`exec ${r.status} ${r.body.slice(0, 200)}`);
        return null;
      }
      return ms;
    } catch (e) { err(`exec ${e.message}`); return null; }
  };

  // 2. the first call of every session: creates its computer
  const first = [];
  t0 = performance.now();
  await Promise.all(live.map(async (s) => {
    const ms = await exec(s, 'true', '');
    if (ms !== null) first.push(ms);
    s.created = ms !== null;
  }));
  res.createWallMs = Math.round(performance.now() - t0);
  res.first = summary(first);
  res.createErrors = live.length - first.length;
  if (o.driverLabel || o.dirs.length) res.placement = placement(o.driverLabel, o.dirs);

  // 3. steady state: K more calls per session, one after another, all sessions at once (the
  // sessions whose computer could not be made sit this out: their retries would be creations)
  const later = [];
  t0 = performance.now();
  await Promise.all(live.filter((s) => s.created).map(async (s) => {
    for (let k = 0; k < o.calls; k++) {
      const ms = await exec(s, k % 2 ? 'echo hi' : 'true', k % 2 ? 'hi\n' : '');
      if (ms !== null) later.push(ms);
    }
  }));
  const wall = performance.now() - t0;
  res.steadyWallMs = Math.round(wall);
  res.later = summary(later);
  res.callsPerSecond = Math.round((later.length / wall) * 1000 * 10) / 10;
  res.memoryLoaded = memory(o.pids);

  // 4. every session ends: its temporary computer is removed
  t0 = performance.now();
  await Promise.all(live.map(async (s) => {
    try {
      const r = await request(s.agent, s.edge, 'DELETE', clean({ Authorization: headers.Authorization, 'Mcp-Session-Id': s.sid }));
      if (r.status !== 200) err(`delete ${r.status} ${r.body.slice(0, 200)}`);
    } catch (e) { err(`delete ${e.message}`); }
  }));
  res.deleteMs = Math.round(performance.now() - t0);
  if (o.driverLabel || o.dirs.length) {
    // until the drivers have removed every computer of the run
    while (Object.keys(placement(o.driverLabel, o.dirs)).length > 0 && performance.now() - t0 < 900000) {
      await new Promise((r) => setTimeout(r, 500));
    }
    res.removalMs = Math.round(performance.now() - t0);
    res.leftAfterRemoval = Object.values(placement(o.driverLabel, o.dirs)).reduce((a, b) => a + b, 0);
  }
  clearInterval(stalls);
  res.clientStallMs = Math.round(stallMs);
  res.errors = errors.length;
  res.errorSamples = [...new Set(errors)].slice(0, 5);
  for (const a of agents) a.destroy();
  return res;
}

function render(files) {
  const runs = files.map((f) => JSON.parse(readFileSync(f, 'utf8')));
  const base = runs[0];
  const lines = [];
  lines.push('| run | sessions | errors | initialize s | create: wall s | create: failed | create: p50 / p99 ms | terminal_execute calls | p50 ms | p99 ms | calls/s | calls/s ratio to first row | p50 ratio | load client stall max s |');
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const r of runs) {
    lines.push(`| ${r.label} | ${r.sessions} | ${r.errors} | ${(r.initializeMs / 1000).toFixed(1)} | ${(r.createWallMs / 1000).toFixed(1)} | ${r.createErrors} | ` +
      `${r.first.p50} / ${r.first.p99} | ${r.later.n} | ${r.later.p50} | ${r.later.p99} | ${r.callsPerSecond} | ` +
      `${(r.callsPerSecond / base.callsPerSecond).toFixed(2)} | ${(r.later.p50 / base.later.p50).toFixed(2)} | ` +
      `${r.clientStallMs !== undefined ? (r.clientStallMs / 1000).toFixed(1) : ''} |`);
  }
  lines.push('');
  lines.push('| run | computers per driver | removal after DELETE s |');
  lines.push('| --- | --- | ---: |');
  for (const r of runs) {
    const p = r.placement ? Object.entries(r.placement).sort().map(([, n]) => n).join(' / ') : '';
    lines.push(`| ${r.label} | ${p} | ${r.removalMs !== undefined ? (r.removalMs / 1000).toFixed(1) : ''} |`);
  }
  lines.push('');
  lines.push('| run | process | VmRSS idle MB | VmRSS loaded MB | VmHWM MB | threads |');
  lines.push('| --- | --- | ---: | ---: | ---: | ---: |');
  const mb = (kb) => (Number.isFinite(kb) ? (kb / 1024).toFixed(1) : '?');
  for (const r of runs) {
    for (const [name, m] of Object.entries(r.memoryLoaded ?? {})) {
      const idle = r.memoryIdle?.[name];
      lines.push(`| ${r.label} | ${name} | ${mb(idle?.rssKb)} | ${mb(m?.rssKb)} | ${mb(m?.hwmKb)} | ${m?.threads ?? '?'} |`);
    }
  }
  lines.push('');
  lines.push('| run | sessions | VmRSS growth of all processes, MB | per session kB |');
  lines.push('| --- | ---: | ---: | ---: |');
  for (const r of runs) {
    let kb = 0;
    for (const [name, m] of Object.entries(r.memoryLoaded ?? {})) kb += (m?.rssKb ?? 0) - (r.memoryIdle?.[name]?.rssKb ?? 0);
    lines.push(`| ${r.label} | ${r.sessions} | ${(kb / 1024).toFixed(1)} | ${(kb / r.sessions).toFixed(1)} |`);
  }
  for (const r of runs) {
    if (r.errorSamples?.length) lines.push('', `Errors in ${r.label}: ${r.errorSamples.map((e) => `\`${e}\``).join('; ')}`);
  }
  return `${lines.join('\n')}\n`;
}

const o = parseArgs(process.argv.slice(2));
if (o.render) {
  process.stdout.write(render(o.render));
} else {
  if (o.edges.length === 0) throw new Error('at least one --edge URL');
  process.stdout.write(`${JSON.stringify(await run(o))}\n`);
}
