// Strict parsing (issue 27): a request that a proxy in front could read differently from us is
// refused, never served the way we happened to read it.
//   * The head: two Content-Length headers (differing, or the same twice), whitespace before a
//     header's colon ("Transfer-Encoding : chunked", "Content-Length : N"), a second Host, no Host
//     on HTTP/1.1. Each gets exactly one 400 with Connection: close, the connection closes, and
//     the complete initialize smuggled behind it is never served (no session).
//   * The body: a NUL or control character in a method, tool name, id or path argument, in both
//     eras. libmicrohttpd/jansson read them as C strings, so "initialize\u0000x" was an
//     initialize and "server/discover\u0000x" a discover. Each is refused -32602 and nothing of
//     it is served.
// Raw TCP (node:net) and node:http; no container is made.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHttpServer, initializeBody, PROTOCOL_VERSION, exchange as exchangeWith, statuses } from './lib.mjs';

let srv;
before(async () => { srv = await startHttpServer([]); });
after(async () => { await srv?.stop(); });

const MCP = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const MODERN = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

/** A request head from [name, value] pairs, kept in order and as written (duplicates too). */
const head = (method, path, pairs, version = 'HTTP/1.1') =>
  `${method} ${path} ${version}\r\n${pairs.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
const hostPair = () => ['Host', `127.0.0.1:${srv.port}`];
const innerInitialize = () => {
  const body = JSON.stringify(initializeBody());
  return head('POST', '/mcp', [hostPair(), ...Object.entries(MCP), ['Content-Length', Buffer.byteLength(body)]]) + body;
};
const exchange = (payload, opts) => exchangeWith(srv, payload, opts);

function assertRefused({ raw, closed }, why) {
  assert.deepEqual(statuses(raw), [400], `${why}: responses on the connection:\n${raw.slice(0, 1500)}`);
  assert.match(raw, /\r\nconnection: *close\r\n/i, `${why}: Connection: close`);
  assert.ok(closed, `${why}: the server closed the connection`);
  assert.doesNotMatch(raw, /mcp-session-id/i, `${why}: no session issued`);
  assert.doesNotMatch(raw, /"result"/, `${why}: no JSON-RPC result`);
}

describe('a request head that can be read two ways → 400 and close', () => {
  it('two differing Content-Length headers (the first would win)', async () => {
    const inner = innerInitialize();
    const outer = head('POST', '/mcp', [hostPair(), ...Object.entries(MCP), ['Content-Length', Buffer.byteLength(inner)], ['Content-Length', '0']]);
    assertRefused(await exchange(outer + inner), 'differing Content-Length');
  });

  it('the same Content-Length twice', async () => {
    const body = JSON.stringify(initializeBody());
    const n = Buffer.byteLength(body);
    const req = head('POST', '/mcp', [hostPair(), ...Object.entries(MCP), ['Content-Length', n], ['Content-Length', n]]) + body;
    assertRefused(await exchange(req), 'repeated Content-Length');
  });

  it('"Transfer-Encoding : chunked" (space before the colon), its chunks holding an initialize', async () => {
    const inner = innerInitialize();
    const outer = head('GET', '/healthz', [hostPair(), ['Transfer-Encoding ', 'chunked']]);
    assertRefused(await exchange(`${outer}0\r\n\r\n${inner}`), 'Transfer-Encoding with a space');
  });

  it('Transfer-Encoding with Content-Length, twice, or not chunked', async () => {
    const inner = innerInitialize();
    const chunk = `${Buffer.byteLength(inner).toString(16)}\r\n${inner}\r\n0\r\n\r\n`;
    const both = head('POST', '/mcp', [hostPair(), ...Object.entries(MCP), ['Transfer-Encoding', 'chunked'], ['Content-Length', '0']]);
    assertRefused(await exchange(both + chunk), 'Transfer-Encoding and Content-Length');
    const twice = head('POST', '/mcp', [hostPair(), ...Object.entries(MCP), ['Transfer-Encoding', 'chunked'], ['Transfer-Encoding', 'chunked']]);
    assertRefused(await exchange(twice + chunk), 'repeated Transfer-Encoding');
    const other = head('POST', '/mcp', [hostPair(), ...Object.entries(MCP), ['Transfer-Encoding', 'gzip, chunked']]);
    assertRefused(await exchange(other + chunk), 'Transfer-Encoding gzip, chunked');
  });

  it('"Content-Length : N" (space before the colon)', async () => {
    const inner = innerInitialize();
    const outer = head('POST', '/mcp', [hostPair(), ...Object.entries(MCP), ['Content-Length ', Buffer.byteLength(inner)]]);
    assertRefused(await exchange(outer + inner), 'Content-Length with a space');
  });

  it('a second Host (a foreign one after ours)', async () => {
    const body = JSON.stringify(initializeBody());
    const req = head('POST', '/mcp', [hostPair(), ['Host', 'evil.example.com'], ...Object.entries(MCP), ['Content-Length', Buffer.byteLength(body)]]) + body;
    assertRefused(await exchange(req), 'second Host');
  });

  it('no Host on HTTP/1.1', async () => {
    const body = JSON.stringify(initializeBody());
    const req = head('POST', '/mcp', [...Object.entries(MCP), ['Content-Length', Buffer.byteLength(body)]]) + body;
    assertRefused(await exchange(req), 'no Host');
    assertRefused(await exchange(head('GET', '/healthz', [['Accept', '*/*']])), 'no Host, GET /healthz');
  });

  it('still served: HTTP/1.0 without Host, and a plain request after a refused one on a new connection', async () => {
    const { raw } = await exchange(head('GET', '/healthz', [['Accept', '*/*']], 'HTTP/1.0'));
    assert.deepEqual(statuses(raw), [200], raw.slice(0, 500));
    const again = await exchange(innerInitialize());
    assert.deepEqual(statuses(again.raw), [200], again.raw.slice(0, 800));
    assert.match(again.raw, /\r\nmcp-session-id: /i);
  });
});

/** POST a raw JSON text (so that \u0000 escapes go as written) with extra headers. */
function postRaw(text, headers = {}) {
  const req = head('POST', '/mcp', [hostPair(), ...Object.entries(MCP), ...Object.entries(headers), ['Connection', 'close'],
    ['Content-Length', Buffer.byteLength(text)]]) + text;
  return exchange(req, { quietMs: 5000 }).then(({ raw }) => {
    const i = raw.indexOf('\r\n\r\n');
    const status = statuses(raw)[0];
    const sid = /\r\nmcp-session-id: *([^\r]+)/i.exec(raw)?.[1];
    let json = null;
    try { json = JSON.parse(raw.slice(i + 4)); } catch { /* none */ }
    return { status, json, sid, raw };
  });
}

async function session() {
  const r = await postRaw(JSON.stringify(initializeBody()));
  assert.equal(r.status, 200, r.raw.slice(0, 500));
  assert.ok(r.sid);
  return r.sid;
}

function assertInvalidParams(r, what, id) {
  assert.equal(r.json?.error?.code, -32602, `${what}: ${r.raw.slice(0, 800)}`);
  assert.match(r.json.error.message, /NUL|control/, what);
  assert.equal(r.json.result, undefined, what);
  assert.deepEqual(r.json.id, id, `${what}: the id`);
  assert.equal(r.sid, undefined, `${what}: no session issued`);
}

describe('a NUL or control character in a name, id or path → -32602, nothing served', () => {
  it('2025: "initialize\\u0000x" opens no session', async () => {
    const b = initializeBody();
    const text = JSON.stringify(b).replace('"initialize"', '"initialize\\u0000x"');
    assertInvalidParams(await postRaw(text), 'initialize\\0', b.id);
  });

  it('2025 session: a method, tool name, id or path with NUL or a control character', async () => {
    const sid = await session();
    const hdr = { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': PROTOCOL_VERSION };
    const cases = [
      ['method tools/list\\0', '{"jsonrpc":"2.0","id":2,"method":"tools/list\\u0000x","params":{}}', 2],
      ['method with a newline', '{"jsonrpc":"2.0","id":3,"method":"tools/list\\n","params":{}}', 3],
      ['tool name computer_release\\0', '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"computer_release\\u0000x","arguments":{"sandbox_handle":"h"}}}', 4],
      ['an id with NUL (answered with id null)', '{"jsonrpc":"2.0","id":"a\\u0000b","method":"tools/list","params":{}}', null],
      ['working_directory with NUL', '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"terminal_execute","arguments":{"command":"pwd","working_directory":"/tmp\\u0000/etc"}}}', 5],
      ['sandbox_handle with a control character', '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"terminal_execute","arguments":{"command":"true","sandbox_handle":"h\\u0001"}}}', 6],
      ['a computer_id with NUL (it would be cut there)', '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"terminal_execute","arguments":{"command":"true","computer_id":"mine\\u0000x"}}}', 8],
      ['a command with NUL (it would be cut there)', '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"terminal_execute","arguments":{"command":"true\\u0000; rm -rf /"}}}', 7],
    ];
    for (const [what, text, id] of cases) {
      const r = await postRaw(text, hdr);
      assert.equal(r.status, 400, `${what}: ${r.raw.slice(0, 500)}`);
      assertInvalidParams(r, what, id);
    }
  });

  it('2026-07-28: "server/discover\\u0000x" and "computer_release\\u0000x" are not served', async () => {
    const body = (method, params, id) => JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } })
      .replace(/\\\\u0000/g, '\\u0000');
    const hdr = (m, name) => ({ 'MCP-Protocol-Version': MODERN, 'Mcp-Method': m, ...(name ? { 'Mcp-Name': name } : {}) });
    const d = await postRaw(body('server/discover\\u0000x', {}, 'd'), hdr('server/discover'));
    assert.equal(d.status, 400, d.raw.slice(0, 500));
    assertInvalidParams(d, 'server/discover\\0', 'd');
    const t = await postRaw(body('tools/call', { name: 'computer_release\\u0000x', arguments: { sandbox_handle: 'h' } }, 't'),
      hdr('tools/call', 'computer_release'));
    assert.equal(t.status, 400, t.raw.slice(0, 500));
    assertInvalidParams(t, 'computer_release\\0', 't');
    // The same without the NUL is served (the control for both).
    const ok = await postRaw(body('server/discover', {}, 'ok'), hdr('server/discover'));
    assert.equal(ok.status, 200, ok.raw.slice(0, 500));
    assert.deepEqual(ok.json.result.supportedVersions, [MODERN]);
  });

  it('stdin may hold any byte: a NUL in stdin is not refused', async () => {
    const sid = await session();
    // An unknown tool: refused for its name, not for the NUL in stdin (no container is made).
    const r = await postRaw('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"no_such_tool","arguments":{"command":"cat","stdin":"a\\u0000b\\u0001"}}}',
      { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': PROTOCOL_VERSION });
    assert.equal(r.status, 200, r.raw.slice(0, 500));
    assert.equal(r.json.result?.isError, true, r.raw.slice(0, 500));
    assert.match(r.json.result.content[0].text, /Unknown tool: no_such_tool/);
  });
});
