// A cluster of hosts made of network namespaces on one machine, for netns.test.mjs: one
// namespace per host (session, inventory, three drivers, two edges) on a bridge
// (netns-up.sh), each service started inside its host with `ip netns exec`, every link
// tls+tcp:// with certificates from scripts/make-certs (each naming its host's role), one
// cluster file for all. The three docker-drivers share this machine's Docker engine (its unix
// socket is a file, reachable from any namespace), each with its own driver identity.
//
// Everything this module makes is named after PREFIX (namespaces PREFIX-*, driver identities
// PREFIX-<run>-dN, computer ids nt<run>-*), and cleanup() removes exactly that, also what an
// earlier failed run left.
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

export { sleep };

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, '..', '..');
export const BUILD = process.env.MSC_BUILD_DIR || path.join(REPO, 'build');
export const PREFIX = 'mscnt';
const RUN = randomBytes(3).toString('hex');
export const cid = (name) => `nt${RUN}-${name}`;
export const TOKEN = randomBytes(16).toString('hex');

export const HOSTS = {
  session: '10.77.0.2',
  inventory: '10.77.0.3',
  d1: '10.77.0.11',
  d2: '10.77.0.12',
  d3: '10.77.0.13',
  e1: '10.77.0.21',
  e2: '10.77.0.22',
};
export const ROOT_IP = '10.77.0.1';
export const DRIVERS = ['d1', 'd2', 'd3'];
export const driverId = (d) => `${PREFIX}-${RUN}-${d}`;
const PORT = { session: 7101, inventory: 7201, driver: 7301, edge: 8435 };
export const sessionUrl = `tls+tcp://${HOSTS.session}:${PORT.session}`;
export const driverUrl = (d) => `${driverId(d)}=tls+tcp://${HOSTS[d]}:${PORT.driver}`;

const BIN = {
  session: path.join(BUILD, 'services', 'session', 'msc-session'),
  inventory: path.join(BUILD, 'services', 'inventory', 'msc-inventory'),
  driver: path.join(BUILD, 'services', 'docker-driver', 'msc-docker-driver'),
  edge: path.join(BUILD, 'edge', 'msc-edge'),
  cli: path.join(BUILD, 'mcp-sandbox-computer'),
};
export const EDGE_BIN = BIN.edge;
export const SESSION_BIN = BIN.session;
export const CLI_BIN = BIN.cli;
export const INVENTORY_BIN = BIN.inventory;

/** Why this machine cannot run the test, or null. */
export function skipReason() {
  if (process.getuid?.() !== 0) return 'needs root (ip netns)';
  for (const p of ['/usr/sbin/ip', '/usr/bin/openssl']) {
    if (!existsSync(p) && !which(path.basename(p))) return `${path.basename(p)} is missing (apt-get install iproute2 openssl)`;
  }
  for (const b of Object.values(BIN)) if (!existsSync(b)) return `${b} is missing (build first)`;
  try { execFileSync('docker', ['image', 'inspect', 'debian:bookworm-slim'], { stdio: 'ignore' }); } catch {
    return 'no Docker engine with the image debian:bookworm-slim (scripts/ensure-image.sh)';
  }
  try {
    execFileSync('ip', ['netns', 'add', `${PREFIX}-probe`], { stdio: 'ignore' });
    execFileSync('ip', ['netns', 'del', `${PREFIX}-probe`], { stdio: 'ignore' });
  } catch { return 'cannot make network namespaces here'; }
  return null;
}

function which(name) {
  try { execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }); return true; } catch { return false; }
}

/** Runs a program, returns stdout; throws with stderr on failure. */
export function sh(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts }).toString();
}

/** `ip netns exec` in host NAME (or in the switch for 'sw'). */
export function inHost(name, cmd, args) {
  return sh('ip', ['netns', 'exec', `${PREFIX}-${name}`, cmd, ...args]);
}

/** Whether service NAME (a host) has a TCP connection up to every driver. */
export function reachesDrivers(name) {
  const out = inHost(name, 'ss', ['-Htn', 'state', 'established']);
  return DRIVERS.every((d) => out.includes(`${HOSTS[d]}:${PORT.driver}`));
}

/** Cuts host NAME off the network (its switch port down), or plugs it back. */
export function link(name, up) {
  inHost('sw', 'ip', ['link', 'set', `h-${name}`, up ? 'up' : 'down']);
}

// --------------------------------------------------------------------------------------------
// containers

/** Containers of this test: [{id, name, driver, computerId, temporary}], `all` = earlier runs too. */
export function ownContainers({ all = false } = {}) {
  const out = sh('docker', ['ps', '-a', '--filter', 'label=kilntainers.driver', '--format',
    '{{.ID}}\t{{.Names}}\t{{.Label "kilntainers.driver"}}\t{{.Label "kilntainers.computer-id"}}\t{{.Label "kilntainers.temporary"}}']);
  const want = all ? `${PREFIX}-` : `${PREFIX}-${RUN}-`;
  return out.split('\n').filter(Boolean).map((l) => {
    const [id, name, driver, computerId, temporary] = l.split('\t');
    return { id, name, driver, computerId, temporary: temporary === 'true' };
  }).filter((c) => c.driver.startsWith(want));
}

export function removeContainers(list) {
  if (list.length === 0) return;
  try { sh('docker', ['rm', '-f', ...list.map((c) => c.id)]); } catch { /* gone already */ }
  for (const c of list) rmSync(path.join('/run/mcp-sandbox-computer', c.name), { recursive: true, force: true });
}

// --------------------------------------------------------------------------------------------
// the cluster

export class Cluster {
  constructor() {
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'msc-netns-'));
    this.certs = path.join(this.dir, 'certs');
    this.conf = path.join(this.dir, 'cluster.conf');
    this.services = new Map();      // name -> {ns, argv, env, proc, err}
    this.sanitizer = [];
    this.deaths = [];               // services that exited without being told to
  }

  /** Namespaces, certificates, the cluster file. */
  setUp() {
    this.cleanUpStale();
    sh(path.join(HERE, 'netns-up.sh'), [PREFIX, ...Object.entries(HOSTS).map(([n, ip]) => `${n}:${ip}`)]);
    // Each host's certificate names its role: the edges, the drivers by their identity,
    // and an operator's for the command line.
    const role = (n) => (n.startsWith('e') ? 'edge' : n.startsWith('d') ? `driver:${driverId(n)}` : n);
    sh(path.join(REPO, 'scripts', 'make-certs'), [this.certs, ...Object.keys(HOSTS).flatMap((n) => ['--role', role(n), n]), 'operator']);
    writeFileSync(this.conf, [
      `session-url = ${sessionUrl}`,
      `inventory-url = tls+tcp://${HOSTS.inventory}:${PORT.inventory}`,
      ...DRIVERS.map((d) => `driver-url = ${driverUrl(d)}`),
      `tls-ca = ${path.join(this.certs, 'ca.pem')}`,
      '',
    ].join('\n'));
  }

  /** What an earlier, failed run left: its namespaces, processes and containers. */
  cleanUpStale() {
    sh(path.join(HERE, 'netns-down.sh'), [PREFIX]);
    removeContainers(ownContainers({ all: true }));
  }

  argvOf(name) {
    const common = ['--cluster', this.conf, '--tls-cert', path.join(this.certs, `${name}.pem`)];
    // The whole output in replies (the slow-link case checks 16,000 bytes).
    if (name === 'session') return [BIN.session, ...common, '--listen', sessionUrl, '--reply-output-limit', '0'];
    if (name === 'inventory') return [BIN.inventory, ...common, '--listen', `tls+tcp://${HOSTS.inventory}:${PORT.inventory}`];
    if (name.startsWith('d')) {
      // --no-network: a driver inside a namespace cannot install the sandbox network's host
      // packet filter (the engine's bridge is in the machine's namespace).
      // --warm-pool 0: the placement checks find each computer by its id label, which a
      // pooled container (named when taken) does not carry.
      return [BIN.driver, ...common, '--listen', `tls+tcp://${HOSTS[name]}:${PORT.driver}`, '--driver-id', driverId(name),
        '--no-network', '--warm-pool', '0'];
    }
    // Clients reach each edge at its address: the Host guard must know it.
    return [BIN.edge, ...common, '--transport', 'http', '--host', '0.0.0.0', '--port', String(PORT.edge),
      '--allowed-host', HOSTS[name]];
  }

  /** Starts service NAME (a host name) inside its host. */
  start(name) {
    const argv = this.argvOf(name);
    const proc = spawn('ip', ['netns', 'exec', `${PREFIX}-${name}`, ...argv], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, KILNTAINERS_AUTH_TOKEN: TOKEN },
    });
    const svc = { name, proc, err: '', total: 0, expected: false };
    // A service that exits on its own has crashed or given up: its last words go into the
    // report (the node reporter prints after-hook failures at the end of the log).
    proc.once('close', (code, signal) => {
      if (svc.expected) return;
      this.scan(svc);
      this.deaths.push(`--- ${name} exited by itself (${signal ?? `status ${code}`}):\n${svc.err.slice(-3000)}`);
    });
    proc.stderr.on('data', (c) => {
      const text = c.toString();
      svc.total += text.length;
      svc.err = (svc.err + text).slice(-65536);
      if (process.env.MSC_TEST_TRACE === '1') process.stderr.write(`[${name}] ${c}`);
    });
    this.services.set(name, svc);
    return svc;
  }

  startAll() {
    for (const n of ['d1', 'd2', 'd3', 'inventory', 'session', 'e1', 'e2']) this.start(n);
  }

  alive(name) {
    const p = this.services.get(name)?.proc;
    return !!p && p.exitCode === null && p.signalCode === null;
  }

  /** kill -9 of service NAME; resolves when it is gone. */
  async kill9(name) {
    const svc = this.services.get(name);
    svc.expected = true;
    this.scan(svc);
    const gone = new Promise((res) => (this.alive(name) ? svc.proc.once('exit', res) : res()));
    svc.proc.kill('SIGKILL');
    await gone;
  }

  pid(name) { return this.services.get(name).proc.pid; }

  scan(svc) {
    const m = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /.exec(svc.err);
    if (m) this.sanitizer.push(`--- ${svc.name}\n${svc.err.slice(Math.max(0, m.index - 200), m.index + 2000)}`);
  }

  /** Stops every service (SIGTERM, then SIGKILL), scans their stderr. */
  async stopAll() {
    const waits = [];
    for (const [name, svc] of this.services) {
      svc.expected = true;
      if (!this.alive(name)) { this.scan(svc); continue; }
      waits.push(new Promise((res) => {
        const t = setTimeout(() => { svc.proc.kill('SIGKILL'); }, 10000);
        svc.proc.once('exit', () => { clearTimeout(t); res(); });
        svc.proc.once('close', () => this.scan(svc));
        svc.proc.kill('SIGTERM');
      }));
    }
    await Promise.all(waits);
    await sleep(100);
  }

  /** Everything away: namespaces, processes, containers, files. Safe to call twice. */
  tearDown() {
    try { sh(path.join(HERE, 'netns-down.sh'), [PREFIX]); } catch { /* best effort */ }
    try { removeContainers(ownContainers()); } catch { /* best effort */ }
    rmSync(this.dir, { recursive: true, force: true });
  }

  stderrTail(name, n = 1500) { return (this.services.get(name)?.err ?? '').slice(-n); }

  /** A mark in service NAME's stderr, and what it wrote since (of its last 64 KiB). */
  stderrMark(name) { return this.services.get(name)?.total ?? 0; }

  stderrSince(name, mark) {
    const svc = this.services.get(name);
    if (!svc) return '';
    const n = svc.total - mark;
    return n <= 0 ? '' : svc.err.slice(-Math.min(n, svc.err.length));
  }
}

// --------------------------------------------------------------------------------------------
// MCP over HTTP, the way a client does it

const HEADERS = {
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
};

export const edgeUrl = (e) => `http://${HOSTS[e]}:${PORT.edge}/mcp`;

/** Set by the test: what the services last wrote, added (once) to the first call that times out. */
export const diagnosis = { of: null, given: false };

/** One JSON-RPC POST. Resolves {status, sid, body}; rejects on a network error or the timeout. */
export async function post(edge, sid, msg, { timeoutMs = 30000 } = {}) {
  const headers = { ...HEADERS, Authorization: `Bearer ${TOKEN}` };
  if (sid) headers['Mcp-Session-Id'] = sid;
  let r;
  try {
    r = await fetch(edgeUrl(edge), {
      method: 'POST', headers, body: JSON.stringify(msg), signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    if (e?.name !== 'TimeoutError' || !diagnosis.of || diagnosis.given) throw e;
    diagnosis.given = true;
    const err = new Error(`${msg.method} on ${edge}: no answer in ${timeoutMs} ms; the services' last words:\n${diagnosis.of()}`);
    err.name = 'TimeoutError';
    throw err;
  }
  const text = await r.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = { raw: text }; }
  return { status: r.status, sid: r.headers.get('mcp-session-id'), body };
}

/** initialize on `edge`; returns the session id (throws if none). */
export async function initialize(edge, opts) {
  const r = await post(edge, null, {
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'netns-test', version: '1' } },
  }, opts);
  if (r.status !== 200 || !r.sid) throw new Error(`initialize on ${edge}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.sid;
}

let nextId = 10;
/** tools/call terminal_execute; resolves {status, result, error, ms}. */
export async function execute(edge, sid, args, opts) {
  const t0 = Date.now();
  const r = await post(edge, sid, {
    jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'terminal_execute', arguments: args },
  }, opts);
  return { status: r.status, result: r.body?.result, error: r.body?.error, ms: Date.now() - t0 };
}

export const textOf = (res) => res?.result?.content?.find((c) => c.type === 'text')?.text ?? res?.error?.message ?? '';

/** Asserts success and returns structuredContent. */
export async function ok(edge, sid, args, opts) {
  const r = await execute(edge, sid, args, opts);
  if (r.status !== 200 || !r.result || r.result.isError) {
    throw new Error(`terminal_execute ${JSON.stringify(args)} on ${edge}: ${r.status} ${textOf(r) || JSON.stringify(r)}`);
  }
  return r.result.structuredContent;
}

export async function endSession(edge, sid) {
  const headers = { Authorization: `Bearer ${TOKEN}`, 'Mcp-Session-Id': sid };
  const r = await fetch(edgeUrl(edge), { method: 'DELETE', headers, signal: AbortSignal.timeout(30000) });
  await r.text();
  return r.status;
}

export async function healthy(edge) {
  try {
    const r = await fetch(`http://${HOSTS[edge]}:${PORT.edge}/healthz`, { signal: AbortSignal.timeout(2000) });
    await r.text();
    return r.ok;
  } catch { return false; }
}

/** Poll `fn` until truthy or the deadline; returns the last value. */
/** A TCP port on `host` that nothing listens on (the kernel's pick; a random one may be in
 *  the ephemeral range and taken by an outgoing connection). */
export async function freePort(host = ROOT_IP) {
  const srv = net.createServer();
  await new Promise((res, rej) => { srv.once('error', rej); srv.listen(0, host, res); });
  const { port } = srv.address();
  await new Promise((res) => srv.close(res));
  return port;
}

export async function waitFor(fn, { timeoutMs = 10000, intervalMs = 200 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let v;
    try { v = await fn(); } catch { v = undefined; }
    if (v || Date.now() >= deadline) return v;
    await sleep(intervalMs);
  }
}
