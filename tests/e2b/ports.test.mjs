// Preview URLs (issue 30) on the e2b backend, against the local fake of E2B (fake_e2b.py, whose
// listener serves a sandbox's port at E2B's per-port host, <port>-<sandboxID>.<domain>, as E2B's
// edge does): computer_expose_port answers that host for the computer's sandbox, with no proxy of
// ours; a perl server in the sandbox answers through it; computer_list shows the port, across a
// restart (E2B's pause and resume: the same sandbox, the same URL); unexposing forgets it and says
// that E2B keeps serving the port; bad ports and a deleted computer are refused. Through the
// official SDK over stdio.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClientV1, StdioV1 } from '../integration/sdk_clients.mjs';
import { MSC_BIN, waitFor } from '../integration/lib.mjs';
import { ok, refused } from '../integration/tool_calls.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const KEY = 'e2b_fake' + randomBytes(6).toString('hex');
const RUN = `e2bp${randomBytes(3).toString('hex')}`;
const DOMAIN = 'sandboxes.e2b-fake.localhost';
const SERVER = readFileSync(path.join(HERE, '..', 'browser', 'preview_server.pl'), 'utf8');
const SANITIZER_RE = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /;
let fake;
let api;
let fakePort;
const clients = new Set();
const stderrs = [];

before(async () => {
  ({ proc: fake, url: api, port: fakePort } = await new Promise((resolve, reject) => {
    const p = spawn('python3', [path.join(HERE, 'fake_e2b.py'), '--key', KEY], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (c) => { out += c; const m = /PORT (\d+)/.exec(out); if (m) resolve({ proc: p, url: `http://127.0.0.1:${m[1]}`, port: Number(m[1]) }); });
    p.on('exit', (code) => reject(new Error(`fake_e2b.py exited ${code}`)));
  }));
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  const bad = stderrs.find((b) => SANITIZER_RE.test(b.text));
  if (bad) { process.stderr.write(`sanitizer report:\n${bad.text.slice(-5000)}\n`); process.exitCode = 1; }
  fake?.kill('SIGTERM');   // the fake removes its containers
  await new Promise((r) => (fake.exitCode !== null ? r() : fake.once('exit', r)));
});

async function stdio(tools, extra = []) {
  const t = new StdioV1({
    command: MSC_BIN, args: ['--backend', 'e2b', '--tools', tools, ...extra], stderr: 'pipe',
    env: { ...process.env, E2B_API_KEY: KEY, E2B_API_URL: api, E2B_SANDBOX_URL: api, E2B_DOMAIN: DOMAIN },
  });
  const box = { text: '' };
  stderrs.push(box);
  t.stderr.on('data', (c) => { box.text = (box.text + c).slice(-200000); });
  const c = new ClientV1({ name: 'e2b-ports-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(t);
  return c;
}

/** A GET of url's path with url's Host, sent to the fake's listener (E2B's edge here); the whole answer. */
function get(url) {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect(fakePort, '127.0.0.1');
    let data = '';
    s.on('connect', () => s.write(`GET ${u.pathname}x HTTP/1.1\r\nHost: ${u.host}\r\nConnection: close\r\n\r\n`));
    s.on('data', (d) => { data += d; });
    s.on('error', () => resolve(data));
    s.on('close', () => resolve(data));
  });
}

const sandboxOf = async (id) => (await (await fetch(`${api}/_fake/state`)).json()).sandboxes
  .find((s) => s.metadata['kilntainers-computer-id'] === id);

test('e2b: the sandbox\'s own host for a port, served by E2B; listed, kept across a restart, forgotten, refused when bad', { timeout: 180000 }, async () => {
  const c = await stdio('ports,lifecycle');
  const id = `${RUN}-web`;
  const where = { computer_id: id };
  const start = `cat > /tmp/s.pl <<'PERL_EOF'\n${SERVER}\nPERL_EOF\n(setsid perl /tmp/s.pl 8000 e2bweb >/dev/null 2>&1 &) ; sleep 0.5; echo started`;
  assert.match((await ok(c, 'terminal_execute', { ...where, command: start })).stdout, /started/);
  const sbx = await sandboxOf(id);
  assert.ok(sbx, 'the fake has the sandbox');

  const ep = await ok(c, 'computer_expose_port', { ...where, port: 8000 });
  assert.equal(ep.url, `https://8000-${sbx.sandboxID}.${DOMAIN}/`, 'E2B\'s per-port host of that sandbox');
  assert.deepEqual(ep.exposed_ports, [8000]);
  assert.match(ep.note, /E2B serves every port .* does not close it/);
  assert.ok(await waitFor(async () => /hello from e2bweb port 8000 path \/x/.test(await get(ep.url)), { timeoutMs: 15000, intervalMs: 300 }),
    'the server answers at the URL');
  const fakeSaw = await (await fetch(`${api}/_fake/requests`)).json();
  assert.ok(fakeSaw.some((r) => r.host === `8000-${sbx.sandboxID}.${DOMAIN}`), 'served by E2B\'s host, not a proxy of ours');
  // A port nothing listens on: E2B's own answer.
  const idle = await ok(c, 'computer_expose_port', { ...where, port: 8001 });
  assert.equal(idle.url, `https://8001-${sbx.sandboxID}.${DOMAIN}/`);
  assert.match(await get(idle.url), /^HTTP\/1\.[01] 502/);
  assert.deepEqual((await ok(c, 'computer_expose_port', { ...where, port: 8000 })).url, ep.url, 'the same URL again');

  const row = async () => (await ok(c, 'computer_list', {})).computers.find((x) => x.computer_id === id);
  assert.deepEqual((await row()).exposed_ports, [8000, 8001]);
  // A restart is E2B's pause and resume: the same sandbox, so the same URL, and the server lives on.
  await ok(c, 'computer_restart', where);
  assert.deepEqual((await row()).exposed_ports, [8000, 8001]);
  assert.equal((await ok(c, 'computer_expose_port', { ...where, port: 8000 })).url, ep.url);
  assert.match(await get(ep.url), /hello from e2bweb/);

  const un = await ok(c, 'computer_unexpose_port', { ...where, port: 8001 });
  assert.equal(un.revoked, false, 'E2B keeps serving the port: not revoked');
  assert.match(un.note, /does not close it/);
  assert.deepEqual(un.exposed_ports, [8000]);
  assert.deepEqual((await row()).exposed_ports, [8000]);
  await refused(c, 'computer_unexpose_port', { ...where, port: 8001 }, /Port 8001 of computer '.*-web' is not exposed/);
  await refused(c, 'computer_expose_port', { ...where, port: 0 }, /port: must be a whole number from 1 to 65535/);
  await refused(c, 'computer_expose_port', { ...where, port: 65536 }, /port: must be a whole number from 1 to 65535/);
  await refused(c, 'computer_expose_port', { computer_id: `${RUN}-none`, port: 8000 }, /not found/i);

  // A factory reset makes a new sandbox: the exposed port is kept, with the new sandbox's URL.
  await ok(c, 'computer_factory_reset', where);
  const after = await sandboxOf(id);
  assert.notEqual(after.sandboxID, sbx.sandboxID);
  assert.deepEqual((await row()).exposed_ports, [8000]);
  assert.equal((await ok(c, 'computer_expose_port', { ...where, port: 8000 })).url, `https://8000-${after.sandboxID}.${DOMAIN}/`);

  await ok(c, 'computer_delete', where);
  await refused(c, 'computer_expose_port', { ...where, port: 8000 }, /not found/i);
});

const fakePost = (what, body) => fetch(`${api}/_fake/${what}`, { method: 'POST', body: JSON.stringify(body) });

test('e2b: a sandbox E2B ended leaves no rows; a new computer of its id gets none at its reset', { timeout: 120000 }, async () => {
  const c = await stdio('ports,lifecycle');
  const id = `${RUN}-gone`;
  const where = { computer_id: id };
  await ok(c, 'terminal_execute', { ...where, command: 'true' });
  await ok(c, 'computer_expose_port', { ...where, port: 8000 });
  await fakePost('end', { sandboxID: (await sandboxOf(id)).sandboxID });   // E2B's timeout
  await ok(c, 'computer_delete', where);
  // The id again: a new computer, whose reset must not bring the old computer's port along.
  await ok(c, 'terminal_execute', { ...where, command: 'true' });
  await ok(c, 'computer_factory_reset', where);
  const row = (await ok(c, 'computer_list', {})).computers.find((x) => x.computer_id === id);
  assert.deepEqual(row.exposed_ports ?? [], [], 'no port of the earlier computer');
  await ok(c, 'computer_delete', where);
});

test('e2b: with --no-network no preview URL', { timeout: 60000 }, async () => {
  const c = await stdio('ports,lifecycle', ['--no-network']);
  const id = `${RUN}-nonet`;
  await ok(c, 'terminal_execute', { computer_id: id, command: 'true' });
  await refused(c, 'computer_expose_port', { computer_id: id, port: 8000 },
    /Computer '.*-nonet' has no network \(--no-network\): its ports cannot be previewed\./);
  await ok(c, 'computer_delete', { computer_id: id });
});

test('e2b: a domain that is not a host name never reaches a URL', { timeout: 60000 }, async () => {
  const c = await stdio('ports,lifecycle');
  const id = `${RUN}-evil`;
  await fakePost('domain', { domain: 'evil.example/x?' });
  try {
    const r = await c.callTool({ name: 'terminal_execute', arguments: { computer_id: id, command: 'true' } });
    if (!r.isError) {
      const ep = await c.callTool({ name: 'computer_expose_port', arguments: { computer_id: id, port: 8000 } });
      assert.ok(ep.isError, `refused, not ${JSON.stringify(ep.structuredContent ?? ep.content)}`);
    } else {
      assert.doesNotMatch(r.content[0].text, /evil/);
    }
  } finally {
    await fakePost('domain', { domain: null });
  }
  const s = await sandboxOf(id);
  if (s) await fakePost('end', { sandboxID: s.sandboxID });
});
