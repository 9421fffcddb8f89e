// Memory after a burst (issue 27): 64 calls with 2 MB of stdin, 32 at once, leave the server
// within 64 MB of its idle size 3 s later: the heap's free memory goes back to the system
// (lib/msc_main.c; here +25 to 33 MB, the rest being pages malloc_trim cannot give back). Before,
// glibc kept the burst's buffers in its arenas: +93 to 107 MB here, 1.4 GiB after 208 such calls in
// the issue. The go_busybox backend: no engine. Runs in the release build, whose allocator is
// glibc's (a sanitizer build has its own).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startHttpServer, request, isSanitized, sleep } from './lib.mjs';

const MODERN = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
const N = 64;
const BOUND_KB = 64 * 1024;

let dir;
let srv;
before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msc-memory-'));
  srv = await startHttpServer(['--backend', 'go_busybox'], { env: { KILNTAINERS_WASM_DIR: dir, HOME: dir }, label: false });
});
after(async () => {
  await srv?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('memory after a burst of large calls', () => {
  it(`${N} calls with 2 MB of stdin: resident memory returns to within ${BOUND_KB / 1024} MB of idle`, async (t) => {
    if (isSanitized(srv.pid)) {
      t.skip('a sanitizer build keeps freed memory in its quarantine');
      return;
    }
    const stdin = `${'x'.repeat(2 * 1024 * 1024 - 1)}\n`;
    const call = (id) => request(srv, {
      timeoutMs: 120000,
      headers: { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'terminal_execute' },
      body: { jsonrpc: '2.0', id, method: 'tools/call',
        params: { name: 'terminal_execute', arguments: { command: 'wc -c', stdin }, _meta: META } },
    });
    const idle = srv.rssKb();
    let peak = idle;
    const probe = setInterval(() => { peak = Math.max(peak, srv.rssKb()); }, 50);
    let next = 0;
    let ok = 0;
    try {
      await Promise.all(Array.from({ length: 32 }, async () => {
        while (next < N) {
          const r = await call(next++);
          if (r.json?.result?.structuredContent?.stdout?.trim() === '2097152') ok++;
        }
      }));
    } finally {
      clearInterval(probe);
    }
    assert.equal(ok, N, 'every call saw its 2 MB');
    await sleep(3000);
    const later = srv.rssKb();
    t.diagnostic(`VmRSS idle ${idle} kB, peak ${peak} kB, 3 s after ${later} kB`);
    assert.ok(later - idle < BOUND_KB, `resident ${later - idle} kB above idle 3 s after the burst (peak ${peak} kB)`);
  });
});
