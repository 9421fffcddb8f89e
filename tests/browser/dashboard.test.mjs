// Browser test of the MCP App dashboard (edge/dashboard.html, served as ui://kilntainers/computers).
//
// Starts the real server over HTTP with ENABLE_LIFECYCLE_TOOLS=true, reads the dashboard with
// resources/read through the official SDK client, serves it inside host.html (the host side of the
// MCP Apps bridge: sandboxed srcdoc iframe, default MCP Apps CSP, tools/call forwarded to the server
// by the SDK client in host.mjs), and drives it in Debian's headless Chromium with playwright-core:
// create a computer with a typed id, run `echo hello`, delete it with the in-page confirmation, and
// more. Then a second server with --tools lifecycle,snapshots: snapshot a computer from the page,
// restore it (confirmed), fork it, delete the snapshot; hostile names render as text.
// Screenshots: artifacts/dashboard.png and dashboard-snapshots.png (MSC_UPDATE_DOCS=1 also copies
// them to docs/).
//
// Run it as a plain script (not `node --test`), so that the skip code reaches meson:
//   node tests/browser/dashboard.test.mjs        (or: meson test -C build browser/dashboard)
// Exits 77 (skipped) when tests/browser/node_modules or the browser is missing.
// Needs a Docker engine and the image debian:bookworm-slim, like the integration tests.
//
// Environment: MSC_BIN (default <repo>/build/mcp-sandbox-computer), MSC_CHROMIUM (default
// /usr/bin/chromium), MSC_DOCKER (default docker), MSC_TEST_TRACE=1 (server stderr to ours),
// MSC_UPDATE_DOCS=1 (refresh docs/dashboard.png, docs/dashboard-snapshots.png).

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.MSC_CHROMIUM || '/usr/bin/chromium';
for (const need of [path.join(HERE, 'node_modules', 'playwright-core'), path.join(HERE, 'node_modules', '@modelcontextprotocol', 'sdk'), CHROMIUM]) {
  if (!existsSync(need)) {
    console.log(`# SKIP browser/dashboard: ${need} is missing (apt-get install chromium; npm ci --prefix tests/browser)`);
    process.exit(77);
  }
}
const { chromium } = await import('playwright-core');
const H = await import('./host.mjs');

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const DOCKER = process.env.MSC_DOCKER || 'docker';
const TRACE = process.env.MSC_TEST_TRACE === '1';
const RUN = `br${randomBytes(3).toString('hex')}`;
const RUN_LABEL = 'msc.browser-test-run';
const ARTIFACTS = path.join(HERE, 'artifacts');
const SHOT = path.join(ARTIFACTS, 'dashboard.png');
const DOCS_SHOT = path.join(H.REPO, 'docs', 'dashboard.png');
const SNAP_SHOT = path.join(ARTIFACTS, 'dashboard-snapshots.png');
const SLUG_ERROR = 'computer_id must be 1-63 lowercase letters, numbers, or hyphens; it must start and end with a letter or number.';
const UI_TIMEOUT = 120000; // a first create may pull the image

function docker(args) {
  return new Promise((resolve) => {
    execFile(DOCKER, args, { timeout: 60000 }, (err, stdout, stderr) => resolve({ err, stdout: String(stdout), stderr: String(stderr) }));
  });
}

/** Static checks on the app's HTML (the file, and what the server serves). */
function checkHtml(html, where) {
  assert.ok(html.startsWith('<!doctype html>') || /^<!doctype html>/i.test(html.trimStart()), `${where}: an HTML5 document`);
  assert.ok(!/<script[^>]*\ssrc\s*=/i.test(html), `${where}: no <script src=`);
  assert.ok(!/<link[^>]*\srel\s*=/i.test(html), `${where}: no <link rel=`);
  assert.ok(!/\b(?:src|href|action)\s*=\s*["']?(?:https?:)?\/\//i.test(html), `${where}: no external URL`);
  assert.ok(!/@import|url\(\s*["']?(?:https?:)?\/\//i.test(html), `${where}: no external CSS`);
  assert.ok(html.includes('2026-01-26'), `${where}: protocol version 2026-01-26`);
  assert.ok(html.includes('callTool("computer_list"'), `${where}: callTool("computer_list"`);
  assert.ok(html.includes('callTool("terminal_execute"'), `${where}: callTool("terminal_execute"`);
  assert.ok(html.includes('ui/initialize') && html.includes('ui/notifications/initialized'), `${where}: the bridge handshake`);
  // Sandboxed iframes without allow-modals make confirm()/alert()/prompt() no-ops; server strings never go through HTML.
  assert.ok(!/(?<![\w.$])(?:window\.)?(?:confirm|alert|prompt)\s*\(/.test(html), `${where}: no confirm()/alert()/prompt()`);
  assert.ok(!/innerHTML|outerHTML|insertAdjacentHTML|document\.write/.test(html), `${where}: no HTML string injection`);
  assert.ok(!/\bfetch\s*\(|XMLHttpRequest|WebSocket|EventSource/.test(html), `${where}: no network of its own (CSP connect-src 'none')`);
  const size = Buffer.byteLength(html);
  assert.ok(size < 32 * 1024, `${where}: light page (${size} bytes, limit 32 KiB)`);
}

// A sanitizer report in a server's stderr (the ASan build) fails the run.
function sanitizerCheck(srv) {
  const err = srv?.stderr() ?? '';
  if (/ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /.test(err)) {
    process.stderr.write(`sanitizer report:\n${err.slice(-5000)}\n`);
    process.exitCode = 1;
  }
}

// One browser for both servers' pages (launched on first use, closed at the end).
let browserP = null;
const launchBrowser = () => (browserP ??= chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true }));
after(async () => { await browserP?.then((b) => b.close()).catch(() => {}); });

test('edge/dashboard.html is self-contained and speaks the MCP Apps bridge', () => {
  checkHtml(readFileSync(H.DASHBOARD_FILE, 'utf8'), 'edge/dashboard.html');
});

describe('the dashboard in headless Chromium against the server', () => {
  let srv, client, callTool, host, browser, page, app, frame;
  let served;
  const problems = []; // console errors, CSP violations, page errors (any frame)
  const ids = new Set();
  const cid = (name) => { const id = `${RUN}-${name}`; ids.add(id); return id; };

  const row = (id) => app.locator(`li.row[data-id="${id}"]`);
  const idle = () => app.locator('#refresh:not([disabled])').waitFor({ timeout: UI_TIMEOUT });
  const statusText = () => app.locator('#status').textContent();
  async function waitStatus(re, timeout = UI_TIMEOUT) {
    await app.locator('#status').filter({ hasText: re }).waitFor({ timeout });
  }
  async function listed() {
    const r = await client.callTool({ name: 'computer_list', arguments: {} });
    assert.equal(r.isError ?? false, false, JSON.stringify(r));
    return new Map(r.structuredContent.computers.map((c) => [c.computer_id, c]));
  }

  before(async () => {
    srv = await H.startServer({ flags: [`--docker-run-flag=--label=${RUN_LABEL}=${RUN}`], trace: TRACE });
    client = await H.connectClient(srv.mcpUrl);
    served = await H.readDashboard(client);
    callTool = await H.serverCaller(client);
    host = await H.startHost({ html: served.html, callTool });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1180, height: 820 } });
    page.setDefaultTimeout(30000);
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    app = page.frameLocator('#app');
  });

  after(async () => {
    await page?.close().catch(() => {});
    await host?.close().catch(() => {});
    if (client) {
      for (const id of ids) await client.callTool({ name: 'computer_delete', arguments: { computer_id: id } }).catch(() => {});
      await client.close().catch(() => {});
    }
    const st = await srv?.stop();
    sanitizerCheck(srv);
    if (TRACE && st) console.log(`# server exit ${JSON.stringify(st)}`);
    // Anything this run left behind (permanent computers, a crash): by label.
    const ps = await docker(['ps', '-aq', '--filter', `label=${RUN_LABEL}=${RUN}`]);
    const left = ps.stdout.split('\n').filter(Boolean);
    if (left.length) await docker(['rm', '-f', ...left]);
    // The sandbox network the driver made, and its host rules, once no container uses it.
    if (!(await docker(['network', 'rm', 'kilntainers-sandbox'])).err) {
      for (const f of ['inet', 'bridge']) await new Promise((r) => execFile('nft', ['delete', 'table', f, 'kilntainers_sandbox'], () => r()));
    }
  });

  test('the server serves the page as the MCP App resource', async () => {
    assert.equal(served.content.uri, H.DASHBOARD_URI);
    assert.equal(served.content.mimeType, H.APP_MIME);
    checkHtml(served.html, H.DASHBOARD_URI);
    assert.equal(served.html, readFileSync(H.DASHBOARD_FILE, 'utf8'),
      'the served page is edge/dashboard.html as built into the binary (rebuild: ninja -C build)');
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const n of ['terminal_execute', 'computer_dashboard', 'computer_list', 'computer_create', 'computer_restart', 'computer_factory_reset', 'computer_delete']) {
      assert.ok(names.includes(n), `tools/list has ${n}: ${names.join(', ')}`);
    }
    const dash = tools.find((t) => t.name === 'computer_dashboard');
    assert.equal(dash._meta?.ui?.resourceUri, H.DASHBOARD_URI);
  });

  test('connects over the bridge: ui/initialize, initialized, then the list', async () => {
    await page.goto(host.url);
    frame = page.frames().find((f) => f !== page.mainFrame());
    await waitStatus(/^Connected$/);
    await app.locator('#count').filter({ hasText: /\d+ computers?/ }).waitFor();
    await idle();
    const log = await page.evaluate(() => window.bridgeLog);
    const fromApp = log.filter((e) => e.dir === 'app->host').map((e) => e.msg);
    assert.equal(fromApp[0].method, 'ui/initialize');
    assert.deepEqual(fromApp[0].params, {
      appInfo: { name: 'sandbox-computer-dashboard', version: '1.0.0' },
      appCapabilities: { availableDisplayModes: ['inline', 'fullscreen', 'pip'] },
      protocolVersion: '2026-01-26',
    });
    assert.equal(fromApp[0].jsonrpc, '2.0');
    assert.equal(fromApp[1].method, 'ui/notifications/initialized');
    assert.equal(fromApp[1].id, undefined, 'initialized is a notification');
    const calls = fromApp.filter((m) => m.method === 'tools/call');
    assert.ok(calls.some((m) => m.params.name === 'computer_list'), 'silent refresh with computer_list');
    for (const m of calls) assert.ok(m.id !== undefined && m.params.arguments && typeof m.params.arguments === 'object');
    assert.ok(await app.locator('#temp').isChecked(), 'Temporary is checked by default');
    assert.equal(await app.locator('h1').textContent(), 'Sandbox Computers');
    // Without the snapshots group, the one snapshot_list probe is refused and nothing about snapshots shows.
    assert.ok(calls.some((m) => m.params.name === 'snapshot_list'), 'probes snapshot_list once');
    assert.ok(await app.locator('#snaps').isHidden(), 'no snapshot section');
  });

  test('create a computer with a typed id, run `echo hello`, delete it with the in-page confirmation', async () => {
    const id = cid('dash');
    await app.locator('#cid').fill(id);
    await app.locator('#create').click();
    await row(id).waitFor({ timeout: UI_TIMEOUT });
    await waitStatus(`Created ${id}`);
    await idle();
    assert.equal(await row(id).locator('button[data-act="snapshot"]').count(), 0, 'no Snapshot button without the group');
    assert.equal(await app.locator('#target').inputValue(), id, 'the new computer is the terminal target');
    assert.match(await row(id).locator('.pill').textContent(), /^temporary$/);
    assert.match(await row(id).locator('.meta').textContent(), /^docker · running · \S+ · [0-9a-f]{12}/);
    assert.ok(await row(id).evaluate((li) => li.classList.contains('sel')));
    assert.equal(await app.locator('#cid').inputValue(), '', 'the id box is cleared');
    const before = await listed();
    assert.equal(before.get(id)?.temporary, true, 'computer_list has it, temporary');

    await app.locator('#cmd').fill('echo hello');
    await app.locator('#run').click();
    await app.locator('#out').filter({ hasText: '[exit 0' }).waitFor({ timeout: UI_TIMEOUT });
    const out = await app.locator('#out').textContent();
    assert.match(out, /^\$ echo hello\nhello\n\n\[exit 0 · \d+ ms\]$/);
    const exec = host.calls.filter((c) => c.name === 'terminal_execute').at(-1);
    assert.deepEqual(exec.arguments, { computer_id: id, temporary: true, command: 'echo hello' });

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.locator('#app').screenshot({ path: SHOT });
    if (process.env.MSC_UPDATE_DOCS === '1') {
      mkdirSync(path.dirname(DOCS_SHOT), { recursive: true });
      copyFileSync(SHOT, DOCS_SHOT);
    }

    await row(id).locator('button[data-act="delete"]').click();
    const confirmBtn = row(id).locator('button[data-act="confirm"]');
    await confirmBtn.waitFor();
    assert.equal(await confirmBtn.textContent(), 'Confirm delete');
    assert.ok(!host.calls.some((c) => c.name === 'computer_delete'), 'nothing deleted before the confirmation');
    await confirmBtn.click();
    await row(id).waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    await waitStatus(`Deleted ${id}`);
    await idle();
    assert.equal(await app.locator('#target').inputValue(), '', 'the target is cleared');
    assert.equal(await app.locator(`#target option[value="${id}"]`).count(), 0);
    assert.ok(!(await listed()).has(id), 'computer_list no longer has it');
    ids.delete(id);
  });

  test('create a computer with a network policy; the inventory shows it', async () => {
    const id = cid('dashnet');
    await app.locator('#cid').fill(id);
    await app.locator('#net').selectOption('none');
    await app.locator('#create').click();
    await row(id).waitFor({ timeout: UI_TIMEOUT });
    await waitStatus(`Created ${id}`);
    await idle();
    const create = host.calls.filter((c) => c.name === 'computer_create').at(-1);
    assert.deepEqual(create.arguments.network, { mode: 'none' });
    assert.equal((await listed()).get(id)?.network, 'none');
    assert.match(await row(id).locator('.meta').getAttribute('title'), /network none/);
    await app.locator('#net').selectOption('');
    await row(id).locator('button[data-act="delete"]').click();
    await row(id).locator('button[data-act="confirm"]').click();
    await row(id).waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    await idle();
    ids.delete(id);
  });

  test('a permanent computer with a random id: busy buttons, restart, factory reset, cancel, delete', async () => {
    await app.locator('#cid').fill('');
    await app.locator('#temp').uncheck();
    const known = new Set(await frame.evaluate(() => [...document.querySelectorAll('li.row')].map((li) => li.dataset.id)));
    await app.locator('#create').click();
    await waitStatus(/^Created \S+ \(permanent\)$/);
    await idle();
    const id = (await statusText()).split(' ')[1];
    ids.add(id);
    assert.match(id, /^[a-z]+-[a-z]+-[0-9a-f]{4}$/, 'a random readable id');
    assert.ok(!known.has(id));
    assert.equal(await row(id).locator('.pill').textContent(), 'permanent');
    assert.equal((await listed()).get(id)?.temporary, false);
    await app.locator('#temp').check();

    // Every button is disabled while a call is running.
    await app.locator('#cmd').fill('sleep 1; echo marker > /root/mark; echo slept >&2');
    await app.locator('#cmd').press('Control+Enter');
    await app.locator('#run[disabled]').waitFor({ timeout: 2000 });
    assert.ok(await app.locator('#create').isDisabled());
    assert.ok(await row(id).locator('button[data-act="restart"]').isDisabled());
    await app.locator('#out').filter({ hasText: /slept\n\n\[exit 0 · \d+ ms\]$/ }).waitFor({ timeout: UI_TIMEOUT });
    await idle();
    const exec = host.calls.filter((c) => c.name === 'terminal_execute').at(-1);
    assert.equal(exec.arguments.temporary, false, 'run uses the row mode');
    assert.equal(await app.locator('#out .e').last().textContent(), 'slept\n', 'stderr shown apart');

    await row(id).locator('button[data-act="restart"]').click();
    await waitStatus(`Restarted ${id}`);
    await idle();
    await app.locator('#cmd').fill('cat /root/mark');
    await app.locator('#run').click();
    await app.locator('#out').filter({ hasText: /\$ cat \/root\/mark\nmarker\n\n\[exit 0/ }).waitFor({ timeout: UI_TIMEOUT });
    await idle();

    // Reset: ask, cancel, nothing happens; ask, confirm, the files are gone.
    await row(id).locator('button[data-act="reset"]').click();
    await row(id).locator('button[data-act="confirm"]').filter({ hasText: 'Confirm reset' }).waitFor();
    await row(id).locator('button[data-act="cancel"]').click();
    await row(id).locator('button[data-act="reset"]').waitFor();
    assert.ok(!host.calls.some((c) => c.name === 'computer_factory_reset'));
    await row(id).locator('button[data-act="reset"]').click();
    await row(id).locator('button[data-act="confirm"]').click();
    await waitStatus(`Reset ${id}`);
    await idle();
    assert.ok(host.calls.some((c) => c.name === 'computer_factory_reset' && c.arguments.computer_id === id));
    await app.locator('#target').selectOption(id);
    await app.locator('#cmd').fill('cat /root/mark');
    await app.locator('#run').click();
    await app.locator('#out').filter({ hasText: /No such file or directory\n\n\[exit 1 · \d+ ms\]$/ }).waitFor({ timeout: UI_TIMEOUT });
    await idle();

    await row(id).locator('button[data-act="delete"]').click();
    await row(id).locator('button[data-act="confirm"]').click();
    await row(id).waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    await idle();
    assert.ok(!(await listed()).has(id));
    ids.delete(id);
  });

  test('errors from the server are shown in the page', async () => {
    await app.locator('#cid').fill('Bad ID');
    await app.locator('#create').click();
    await waitStatus(`Create failed: ${SLUG_ERROR}`);
    assert.ok(await app.locator('#status').evaluate((n) => n.classList.contains('err')));
    await idle();
    await app.locator('#cid').fill('');
    // A run the server refuses (a target that is not a slug, put in the select by hand): [error] in the pane.
    const r = await frame.evaluate(() => {
      const sel = document.getElementById('target');
      const o = document.createElement('option');
      o.value = o.textContent = 'Not-A-Slug';
      sel.appendChild(o);
      sel.value = 'Not-A-Slug';
      document.getElementById('cmd').value = 'true';
      document.getElementById('run').click();
      return sel.value;
    });
    assert.equal(r, 'Not-A-Slug');
    await app.locator('#out').filter({ hasText: /\[error\] .+$/ }).waitFor({ timeout: UI_TIMEOUT });
    await idle();
    await app.locator('#refresh').click();
    await waitStatus(/^\d+ computer\(s\)$/);
  });

  test('stays usable with 500 computers (a tool-result notification replaces the list)', async () => {
    const big = H.fakeComputers(500);
    const opaque = await page.evaluate((computers) => {
      // The payload as a text block only (no structuredContent): the app parses it.
      window.host.toolResult({ content: [{ type: 'text', text: JSON.stringify({ computers, count: computers.length }) }] });
      return document.getElementById('app').contentDocument === null;
    }, big);
    assert.ok(opaque, 'the app runs in an opaque-origin sandbox (no same-origin access from the host)');
    await app.locator('#count').filter({ hasText: /^500 computers$/ }).waitFor();
    const timing = await frame.evaluate(async () => {
      const list = document.getElementById('list');
      const filter = document.getElementById('filter');
      const t0 = performance.now();
      filter.value = 'otter';
      filter.dispatchEvent(new Event('input'));
      await new Promise((r) => setTimeout(r, 100));
      const filtered = list.querySelectorAll('li.row').length;
      const t1 = performance.now();
      filter.value = '';
      filter.dispatchEvent(new Event('input'));
      await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r)));
      return { filtered, all: list.querySelectorAll('li.row').length, options: document.querySelectorAll('#target option').length, t: t1 - t0 };
    });
    assert.equal(timing.all, 500);
    assert.equal(timing.options, 501);
    assert.ok(timing.filtered > 0 && timing.filtered < 500, `filter narrows the list (${timing.filtered})`);
    // One full rebuild of 500 rows (filter input, 60 ms debounce, render, layout), timed in the page.
    const rebuild = await frame.evaluate(() => new Promise((resolve) => {
      const list = document.getElementById('list');
      const t0 = performance.now();
      new MutationObserver((_, mo) => {
        mo.disconnect();
        document.body.getBoundingClientRect();
        resolve(performance.now() - t0);
      }).observe(list, { childList: true });
      document.getElementById('filter').dispatchEvent(new Event('input'));
    }));
    assert.ok(rebuild < 1500, `500 rows render in ${rebuild.toFixed(0)} ms`);
    await row(big[499].computer_id).scrollIntoViewIfNeeded();
    await row(big[499].computer_id).click();
    assert.equal(await app.locator('#target').inputValue(), big[499].computer_id, 'clicking a row targets it');
    await app.locator('#refresh').click();
    // Refresh brings the server's list back (the status may already read "N computer(s)").
    await app.locator('#count').filter({ hasNotText: /^500 computers$/ }).waitFor({ timeout: UI_TIMEOUT });
    await idle();
    assert.match(await statusText(), /^\d+ computer\(s\)$/);
    assert.ok(await app.locator('li.row').count() < 500);
  });

  test('answers ping and ui/resource-teardown with {}', async () => {
    assert.deepEqual(await page.evaluate(() => window.host.request('ping', {})), {});
    assert.deepEqual(await page.evaluate(() => window.host.request('ui/resource-teardown', {})), {});
    await assert.rejects(page.evaluate(() => window.host.request('no/such-method', {})), /Method not found/);
  });

  test('no console errors, CSP violations or page errors', () => {
    assert.deepEqual(problems, []);
    assert.equal(host.calls.filter((c) => c.name === 'snapshot_list').length, 1, 'snapshot_list probed once, not on every refresh');
  });
});

// The snapshots group on (issue 31): the dashboard lists snapshot_list beside the computers and
// snapshots, restores, forks and deletes through the same tool calls an agent makes.
describe('snapshots in the dashboard (--tools lifecycle,snapshots)', () => {
  const DRIVER = `${RUN}s`; // this server's snapshots carry kilntainers.snapshot.driver=DRIVER
  const HOSTILE = '<img src=x onerror=alert(1)>';
  let srv, client, host, browser, page, app;
  const problems = [];
  const ids = new Set();
  const snaps = new Set();
  const row = (id) => app.locator(`#list li.row[data-id="${id}"]`);
  const srow = (sid) => app.locator(`#slist li.row[data-id="${sid}"]`);
  const idle = () => app.locator('#refresh:not([disabled])').waitFor({ timeout: UI_TIMEOUT });
  async function waitStatus(re, timeout = 20000) {
    try {
      await app.locator('#status').filter({ hasText: re }).waitFor({ timeout });
    } catch (e) {
      console.log(`# the status reads: ${await app.locator("#status").textContent().catch(() => "?")}`);
      throw e;
    }
  }
  async function call(name, args) {
    const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
    assert.equal(r.isError ?? false, false, `${name}: ${JSON.stringify(r.content)}`);
    return r.structuredContent;
  }
  const sh = async (id, command) => (await call('terminal_execute', { computer_id: id, temporary: true, command })).stdout;

  before(async () => {
    srv = await H.startServer({ flags: ['--tools', 'lifecycle,snapshots', '--driver-id', DRIVER,
      `--docker-run-flag=--label=${RUN_LABEL}=${RUN}`], trace: TRACE });
    client = await H.connectClient(srv.mcpUrl);
    const served = await H.readDashboard(client);
    host = await H.startHost({ html: served.html, callTool: await H.serverCaller(client) });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1180, height: 900 } });
    page.setDefaultTimeout(30000);
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    app = page.frameLocator('#app');
  });

  after(async () => {
    await page?.close().catch(() => {});
    await host?.close().catch(() => {});
    if (client) {
      for (const id of ids) await client.callTool({ name: 'computer_delete', arguments: { computer_id: id } }).catch(() => {});
      for (const sid of snaps) await client.callTool({ name: 'snapshot_delete', arguments: { snapshot_id: sid } }).catch(() => {});
      await client.close().catch(() => {});
    }
    await srv?.stop();
    sanitizerCheck(srv);
    const ps = await docker(['ps', '-aq', '--filter', `label=${RUN_LABEL}=${RUN}`]);
    const left = ps.stdout.split('\n').filter(Boolean);
    if (left.length) await docker(['rm', '-f', ...left]);
    const imgs = (await docker(['images', '-q', '--filter', `label=kilntainers.snapshot.driver=${DRIVER}`])).stdout.trim();
    if (imgs) await docker(['rmi', '-f', ...new Set(imgs.split(/\s+/))]);
  });

  test('snapshot, restore and fork from the dashboard; names render as text', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const id = `${RUN}-snap`;
    ids.add(id);
    await call('computer_create', { computer_id: id, temporary: true });
    await sh(id, 'echo original > /root/data.txt');

    await page.goto(host.url);
    await app.locator('#status').filter({ hasText: /^Connected$/ }).waitFor({ timeout: UI_TIMEOUT });
    await row(id).waitFor({ timeout: UI_TIMEOUT });
    await app.locator('#snaps').waitFor({ state: 'visible' });
    await idle();
    assert.equal(await app.locator('#scount').textContent(), '0 snapshots');

    // A name the server refuses (names are agent-chosen): the error, as text; nothing made.
    await app.locator('#sname').fill(HOSTILE);
    await row(id).locator('button[data-act="snapshot"]').click();
    await waitStatus(/^Snapshot failed: .*name must be/);
    await idle();
    assert.equal((await call('snapshot_list', {})).count, 0);

    // Snapshot through the dashboard.
    await app.locator('#sname').fill('before change');
    await row(id).locator('button[data-act="snapshot"]').click();
    await waitStatus(`Snapshot before change of ${id}`);
    await idle();
    const listed = (await call('snapshot_list', {})).snapshots;
    assert.equal(listed.length, 1);
    const snap = listed[0];
    snaps.add(snap.snapshot_id);
    assert.deepEqual(host.calls.filter((c) => c.name === 'computer_snapshot').at(-1).arguments, { computer_id: id, name: 'before change' });
    assert.equal(await srow(snap.snapshot_id).locator('.sn').evaluate((n) => n.firstChild.textContent), 'before change');
    assert.match(await srow(snap.snapshot_id).locator('.meta').textContent(), new RegExp(`^of ${id} · \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d`));
    assert.equal(await app.locator('#scount').textContent(), '1 snapshot');
    assert.equal(await app.locator('#sname').inputValue(), '', 'the name box is cleared');

    // Change the file; restore, with the in-page confirmation; the old content is back.
    await sh(id, 'echo changed > /root/data.txt');
    await srow(snap.snapshot_id).locator('button[data-act="restore"]').click();
    const confirmBtn = srow(snap.snapshot_id).locator('button[data-act="confirm"]');
    assert.equal(await confirmBtn.textContent(), 'Confirm restore');
    assert.ok(!host.calls.some((c) => c.name === 'computer_restore'), 'nothing restored before the confirmation');
    await confirmBtn.click();
    await waitStatus(`Restored ${id} to before change`);
    await idle();
    assert.deepEqual(host.calls.filter((c) => c.name === 'computer_restore').at(-1).arguments, { computer_id: id, snapshot_id: snap.snapshot_id });
    assert.equal(await sh(id, 'cat /root/data.txt'), 'original\n');

    // Fork (temporary, as the Temporary box says): a new computer in the inventory with the snapshot's file.
    await srow(snap.snapshot_id).locator('button[data-act="fork"]').click();
    await waitStatus(/^Forked before change into \S+ \(temporary\)$/);
    await idle();
    const fork = (await app.locator('#status').textContent()).split(' ')[4];
    ids.add(fork);
    assert.notEqual(fork, id);
    await row(fork).waitFor();
    assert.equal(await app.locator('#target').inputValue(), fork, 'the fork is the terminal target');
    assert.deepEqual(host.calls.filter((c) => c.name === 'computer_create').at(-1).arguments, { from_snapshot: snap.snapshot_id, temporary: true });
    assert.equal(await sh(fork, 'cat /root/data.txt'), 'original\n');
    await page.locator('#app').screenshot({ path: SNAP_SHOT });
    if (process.env.MSC_UPDATE_DOCS === '1') copyFileSync(SNAP_SHOT, path.join(H.REPO, 'docs', 'dashboard-snapshots.png'));

    // Provider- and agent-controlled strings in a snapshot_list result render as text.
    const evil = { snapshot_id: 'snap-<b>x</b>', name: HOSTILE, computer_id: '<img src=x onerror=document.body.dataset.pwned=1>',
      created_at: '<script>document.body.dataset.pwned=1</script>', made_by: '<i>me</i>', size_bytes: 1, own_bytes: 0 };
    await page.evaluate((s) => window.host.toolResult({ structuredContent: { snapshots: [s], count: 1 }, content: [] }), evil);
    await app.locator('#scount').filter({ hasText: /^1 snapshot$/ }).waitFor();
    const er = srow(evil.snapshot_id);
    assert.equal(await er.locator('.sn').evaluate((n) => n.firstChild.textContent), HOSTILE);
    assert.equal(await er.locator('.meta').textContent(), `of ${evil.computer_id} · ${evil.created_at} · 1 B · by <i>me</i>`);
    assert.equal(await app.locator('#slist img, #slist script, #slist b, #slist i').count(), 0, 'no element made from a string');
    await page.waitForTimeout(200);
    assert.equal(await app.locator('body[data-pwned]').count(), 0);
    assert.ok(await er.locator('button[data-act="restore"]').isDisabled(), 'restore needs its computer in the inventory');

    // Delete the snapshot (confirmed): refused while computers made from it (the fork, the restored
    // computer) exist, the server's error shown; then done, and the list refreshes.
    await app.locator('#refresh').click();
    await srow(snap.snapshot_id).waitFor();
    await idle();
    await call('computer_delete', { computer_id: fork });
    ids.delete(fork);
    await srow(snap.snapshot_id).locator('button[data-act="delete"]').click();
    await srow(snap.snapshot_id).locator('button[data-act="confirm"]').filter({ hasText: 'Confirm delete' }).click();
    await waitStatus(/^Delete failed: .*in use/);
    await idle();
    assert.equal(await srow(snap.snapshot_id).count(), 1);
    await call('computer_delete', { computer_id: id });
    ids.delete(id);
    await srow(snap.snapshot_id).locator('button[data-act="delete"]').click();
    await srow(snap.snapshot_id).locator('button[data-act="confirm"]').filter({ hasText: 'Confirm delete' }).click();
    await waitStatus('Deleted snapshot before change');
    await srow(snap.snapshot_id).waitFor({ state: 'detached' });
    await idle();
    assert.equal((await call('snapshot_list', {})).count, 0);
    snaps.delete(snap.snapshot_id);
    assert.equal(await app.locator('#scount').textContent(), '0 snapshots');
    assert.deepEqual(problems, []);
  });
});
