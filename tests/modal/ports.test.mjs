// Preview URLs (issue 30) on the modal backend, through Modal's tunnels, against the local fake of
// Modal (fake_modal.py: a sandbox gets a tunnel, its own host, for each port its definition opens,
// answered by SandboxGetTunnels; its control listener relays a tunnel host's requests to that port,
// as Modal's tunnel edge does). With --modal-ports every new sandbox opens those ports;
// computer_expose_port answers the port's tunnel (https://HOST/), a perl server answers through it;
// a port without a tunnel is refused with the reason; computer_list shows the port, kept across a
// restart (a new sandbox, a new URL); unexposing forgets it and says Modal keeps the tunnel; a bad
// --modal-ports is refused at start. Through the official SDK over stdio.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClientV1, StdioV1 } from '../integration/sdk_clients.mjs';
import { MSC_BIN, waitFor } from '../integration/lib.mjs';
import { ok, refused } from '../integration/tool_calls.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PY = process.env.MODAL_FAKE_PYTHON || 'python3';
const RND = randomBytes(6).toString('hex');
const TOKEN_ID = `ak-fake${RND}`;
const TOKEN_SECRET = `as-fake${RND}`;
const RUN = `modp${randomBytes(3).toString('hex')}`;
const TMP = mkdtempSync(path.join(os.tmpdir(), 'msc-modal-ports-'));
const SERVER = readFileSync(path.join(HERE, '..', 'browser', 'preview_server.pl'), 'utf8');
const SANITIZER_RE = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /;
let fake;
let api;
let ctl;
const clients = new Set();
const stderrs = [];
const env = () => ({
  ...process.env, MODAL_SERVER_URL: api, MODAL_TOKEN_ID: TOKEN_ID, MODAL_TOKEN_SECRET: TOKEN_SECRET,
  MODAL_CONFIG_PATH: path.join(TMP, 'absent.toml'), MODAL_PROFILE: '', MODAL_ENVIRONMENT: '',
});

before(async () => {
  ({ proc: fake, api, ctl } = await new Promise((resolve, reject) => {
    const p = spawn(PY, [path.join(HERE, 'fake_modal.py'), '--token-id', TOKEN_ID, '--token-secret', TOKEN_SECRET],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (c) => {
      out += c;
      const m = /PORTS (\d+) (\d+) (\d+)/.exec(out);
      if (m) resolve({ proc: p, api: `http://127.0.0.1:${m[1]}`, ctl: Number(m[3]) });
    });
    p.on('exit', (code) => reject(new Error(`fake_modal.py exited ${code}`)));
  }));
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  const bad = stderrs.find((b) => SANITIZER_RE.test(b.text));
  if (bad) { process.stderr.write(`sanitizer report:\n${bad.text.slice(-5000)}\n`); process.exitCode = 1; }
  fake?.kill('SIGTERM');   // the fake removes its containers
  await new Promise((r) => (fake.exitCode !== null ? r() : fake.once('exit', r)));
  rmSync(TMP, { recursive: true, force: true });
});

async function stdio(args) {
  const t = new StdioV1({ command: MSC_BIN, args: ['--backend', 'modal', ...args], stderr: 'pipe', env: env() });
  const box = { text: '' };
  stderrs.push(box);
  t.stderr.on('data', (c) => { box.text = (box.text + c).slice(-200000); });
  const c = new ClientV1({ name: 'modal-ports-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(t);
  return c;
}

/** A GET with url's Host, sent to the fake's tunnel edge (its control listener); the whole answer. */
function get(url) {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect(ctl, '127.0.0.1');
    let data = '';
    s.on('connect', () => s.write(`GET ${u.pathname}x HTTP/1.1\r\nHost: ${u.host}\r\nConnection: close\r\n\r\n`));
    s.on('data', (d) => { data += d; });
    s.on('error', () => resolve(data));
    s.on('close', () => resolve(data));
  });
}

const state = async () => (await (await fetch(`http://127.0.0.1:${ctl}/state`)).json());
const sandboxOf = async (id) => (await state()).sandboxes.find((s) => s.tags['kilntainers-computer-id'] === id && s.status === null);

test('modal: a port of --modal-ports through its tunnel; a port without one refused with the reason; listed, kept across a restart, forgotten', { timeout: 240000 }, async () => {
  const c = await stdio(['--tools', 'ports,lifecycle', '--modal-ports', '8000, 8001']);
  const id = `${RUN}-web`;
  const where = { computer_id: id };
  const start = `cat > /tmp/s.pl <<'PERL_EOF'\n${SERVER}\nPERL_EOF\n(setsid perl /tmp/s.pl 8000 modalweb >/dev/null 2>&1 &) ; sleep 0.5; echo started`;
  assert.match((await ok(c, 'terminal_execute', { ...where, command: start })).stdout, /started/);
  const sbx = await sandboxOf(id);
  assert.deepEqual(sbx.open_ports, [8000, 8001], 'the sandbox was made with the tunnels of --modal-ports');

  const ep = await ok(c, 'computer_expose_port', { ...where, port: 8000 });
  assert.equal(ep.url, `https://${sbx.tunnels['8000']}/`, 'the tunnel of that port');
  assert.deepEqual(ep.exposed_ports, [8000]);
  assert.match(ep.note, /Modal keeps the tunnel .* does not close it/);
  assert.ok(await waitFor(async () => /hello from modalweb port 8000 path \/x/.test(await get(ep.url)), { timeoutMs: 15000, intervalMs: 300 }),
    'the server answers at the tunnel');
  assert.ok((await state()).requests.some((r) => r.method === 'SandboxGetTunnels'), 'asked of Modal');
  assert.equal((await ok(c, 'computer_expose_port', { ...where, port: 8000 })).url, ep.url, 'the same URL again');
  await refused(c, 'computer_expose_port', { ...where, port: 9000 },
    /Port 9000 of computer '.*-web' has no Modal tunnel: Modal opens tunnels only when a sandbox is created, for the ports of --modal-ports \(this server: 8000, 8001\)/);
  const row = async () => (await ok(c, 'computer_list', {})).computers.find((x) => x.computer_id === id);
  assert.deepEqual((await row()).exposed_ports, [8000]);

  // Modal restarts by a filesystem snapshot into a new sandbox: new tunnels, the port kept.
  await ok(c, 'computer_restart', where);
  const after = await sandboxOf(id);
  assert.notEqual(after.sandbox_id, sbx.sandbox_id);
  assert.deepEqual((await row()).exposed_ports, [8000]);
  const again = await ok(c, 'computer_expose_port', { ...where, port: 8000 });
  assert.equal(again.url, `https://${after.tunnels['8000']}/`);
  assert.notEqual(again.url, ep.url);

  const un = await ok(c, 'computer_unexpose_port', { ...where, port: 8000 });
  assert.equal(un.revoked, false, 'Modal keeps the tunnel: not revoked');
  assert.deepEqual(un.exposed_ports, []);
  assert.deepEqual((await row()).exposed_ports ?? [], []);
  await refused(c, 'computer_unexpose_port', { ...where, port: 8000 }, /Port 8000 of computer '.*-web' is not exposed/);
  await ok(c, 'computer_delete', where);
  await refused(c, 'computer_expose_port', { ...where, port: 8000 }, /not found/i);
});

test('modal: without --modal-ports a sandbox has no tunnel, and the refusal says so; a bad --modal-ports stops the start', { timeout: 120000 }, async () => {
  const c = await stdio(['--tools', 'ports']);
  const id = `${RUN}-plain`;
  await ok(c, 'terminal_execute', { computer_id: id, command: 'true' });
  assert.deepEqual((await sandboxOf(id)).open_ports, []);
  await refused(c, 'computer_expose_port', { computer_id: id, port: 8000 }, /has no Modal tunnel: .*\(this server: none\)/);
  for (const bad of ['0', '8000,8000', '80;81', 'x', '1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17']) {
    const r = spawnSync(MSC_BIN, ['--backend', 'modal', '--modal-ports', bad], { env: env(), input: '', timeout: 20000 });
    assert.notEqual(r.status, 0, `--modal-ports ${bad} refused`);
    assert.match(r.stderr.toString(), /argument --modal-ports: invalid value/);
  }
});

test('modal: --modal-ports with --no-network stops the start (tunnels are public ways in)', { timeout: 30000 }, async () => {
  const r = spawnSync(MSC_BIN, ['--backend', 'modal', '--no-network', '--modal-ports', '8000'], { env: env(), input: '', timeout: 20000 });
  assert.notEqual(r.status, 0, 'refused');
  assert.match(r.stderr.toString(), /argument --modal-ports: not allowed with --no-network/);
});

const ctlPost = (what, body) => fetch(`http://127.0.0.1:${ctl}/${what}`, { method: 'POST', body: JSON.stringify(body) });

test('modal: a tunnel host that is not a host name is refused; a sandbox Modal ended leaves no rows for a new computer of its id', { timeout: 180000 }, async () => {
  const c = await stdio(['--tools', 'ports,lifecycle', '--modal-ports', '8000']);
  const id = `${RUN}-gone`;
  const where = { computer_id: id };
  await ok(c, 'terminal_execute', { ...where, command: 'true' });
  const sbx = await sandboxOf(id);
  await ok(c, 'computer_expose_port', { ...where, port: 8000 });
  assert.equal((await ctlPost('tunnel_host', { sandbox_id: sbx.sandbox_id, port: 8000, host: 'evil_host.example:99' })).status, 200);
  // refused (a provider fault), never a URL with that host
  assert.doesNotMatch(await refused(c, 'computer_expose_port', { ...where, port: 8000 }, /./), /evil/);
  // Modal ends the sandbox (its lifetime): delete forgets the rows, and a new computer of the id
  // does not get them at its reset.
  assert.equal((await ctlPost('terminate', { sandbox_id: sbx.sandbox_id })).status, 200);
  await ok(c, 'computer_delete', where);
  await ok(c, 'terminal_execute', { ...where, command: 'true' });
  await ok(c, 'computer_factory_reset', where);
  const row = (await ok(c, 'computer_list', {})).computers.find((x) => x.computer_id === id);
  assert.deepEqual(row.exposed_ports ?? [], [], 'no port of the earlier computer');
  await ok(c, 'computer_delete', where);
});
