// Request smuggling past the early answers: a request the server refuses from its headers alone
// (421 foreign Host, 403 Origin, 401, 404, 405, 406, 415, 400, 411, 413) carries as its body a
// complete `POST /mcp` initialize with `Host: 127.0.0.1`, all in one write, as an attacker (or a
// DNS-rebound page) would send it. The server must never take that body for the next request on
// the connection: exactly one response comes back and no session is issued. Then what real
// clients do after such an answer (Claude Code's probe, the conformance suite's
// dns-rebinding-protection): the next request on the same connection, or on a new one when the
// server closed it, is served normally. Pipelined requests that are accepted still work.
// Raw TCP (node:net); no container is needed.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startHttpServer, initializeBody, exchange, statuses } from './lib.mjs';

const TOKEN = 'smuggling-test-token-0123456789abcdef';
let srv;
let authed;
before(async () => {
  srv = await startHttpServer([]);
  authed = await startHttpServer([], { env: { KILNTAINERS_AUTH_TOKEN: TOKEN } });
});
after(async () => {
  await srv?.stop();
  await authed?.stop();
});

const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

function head(method, path, headers) {
  return `${method} ${path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
}

/** A complete, valid initialize for `server` (Host 127.0.0.1:port), as bytes. */
function innerInitialize(server, extra = {}) {
  const body = JSON.stringify(initializeBody());
  return head('POST', '/mcp', { Host: `127.0.0.1:${server.port}`, ...MCP_HEADERS, 'Content-Length': Buffer.byteLength(body), ...extra }) + body;
}

describe('a refused request whose body is another request', () => {
  const cases = [
    ['foreign Host', 421, () => srv, { Host: 'evil.example.com', ...MCP_HEADERS }],
    ['foreign Origin', 403, () => srv, { Origin: 'http://evil.example.com', ...MCP_HEADERS }],
    ['no bearer token', 401, () => authed, { ...MCP_HEADERS }],
    ['a path below /mcp', 404, () => srv, { ...MCP_HEADERS }, '/mcp/x'],
    ['a path outside /mcp', 404, () => srv, { ...MCP_HEADERS }, '/nowhere'],
    ['GET /mcp with a body', 405, () => srv, { ...MCP_HEADERS }, '/mcp', 'GET'],
    ['Accept without text/event-stream', 406, () => srv, { 'Content-Type': 'application/json', Accept: 'application/json' }],
    ['Content-Type text/plain', 415, () => srv, { 'Content-Type': 'text/plain', Accept: 'application/json, text/event-stream' }],
    ['an unsupported MCP-Protocol-Version', 400, () => srv, { ...MCP_HEADERS, 'MCP-Protocol-Version': '2099-01-01' }],
  ];
  for (const [what, status, server, headers, path = '/mcp', method = 'POST'] of cases) {
    it(`${what} → ${status}, and the smuggled initialize is never served`, async () => {
      const s = server();
      const inner = innerInitialize(s, s === authed ? { Authorization: `Bearer ${TOKEN}` } : {});
      const outer = head(method, path, { Host: headers.Host ?? `127.0.0.1:${s.port}`, ...headers, 'Content-Length': Buffer.byteLength(inner) });
      const { raw } = await exchange(s, outer + inner);
      assert.deepEqual(statuses(raw), [status], `responses on the connection:\n${raw.slice(0, 1500)}`);
      assert.doesNotMatch(raw, /mcp-session-id/i, 'no session issued');
      assert.doesNotMatch(raw, /"result"/, 'no JSON-RPC result');
    });
  }

  it('a body declared longer than 4 MiB → 413, and the request behind it is never served', async () => {
    const inner = innerInitialize(srv);
    const outer = head('POST', '/mcp', { Host: `127.0.0.1:${srv.port}`, ...MCP_HEADERS, 'Content-Length': 5 * 1024 * 1024 });
    const { raw } = await exchange(srv, outer + inner);
    assert.deepEqual(statuses(raw), [413], raw.slice(0, 1500));
    assert.doesNotMatch(raw, /mcp-session-id/i);
  });

  it('a chunked body → 411, and the request in its chunks is never served', async () => {
    const inner = innerInitialize(srv);
    const chunk = `${Buffer.byteLength(inner).toString(16)}\r\n${inner}\r\n0\r\n\r\n`;
    const outer = head('POST', '/mcp', { Host: `127.0.0.1:${srv.port}`, ...MCP_HEADERS, 'Transfer-Encoding': 'chunked' });
    const { raw } = await exchange(srv, outer + chunk);
    assert.deepEqual(statuses(raw), [411], raw.slice(0, 1500));
    assert.doesNotMatch(raw, /mcp-session-id/i);
  });
});

describe('after a refused request, the client goes on', () => {
  // Claude Code's first request is a probe the server refuses; its initialize follows on the same
  // keep-alive connection. The conformance suite does the same after a foreign Host.
  for (const [what, status, headers] of [
    ['a probe with an unsupported protocol version', 400, { ...MCP_HEADERS, 'MCP-Protocol-Version': '2099-01-01' }],
    ['a foreign Host', 421, { ...MCP_HEADERS, Host: 'evil.example.com' }],
  ]) {
    it(`${what} (${status}), then initialize: served on the same connection or after the server closed it`, async () => {
      const probe = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'server/discover', params: {} });
      const first = head('POST', '/mcp', { Host: `127.0.0.1:${srv.port}`, ...headers, 'Content-Length': Buffer.byteLength(probe) }) + probe;
      const sock = net.connect(srv.port, '127.0.0.1');
      let raw = '';
      let closed = false;
      sock.on('data', (d) => { raw += d.toString('latin1'); });
      sock.on('error', () => {});
      sock.on('close', () => { closed = true; });
      await new Promise((r) => sock.on('connect', r));
      sock.write(first);
      const t0 = Date.now();
      while (!/\r\n\r\n/.test(raw) && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(statuses(raw), [status], raw.slice(0, 500));
      const mustClose = /\r\nconnection: *close\r\n/i.test(raw.slice(0, raw.indexOf('\r\n\r\n') + 2));
      await new Promise((r) => setTimeout(r, 300));
      let second;
      if (closed) {
        assert.ok(mustClose, 'the server closed the connection: it said Connection: close');
        second = await exchange(srv, innerInitialize(srv));
        sock.destroy();
      } else {
        assert.ok(!mustClose, 'Connection: close was said, but the connection stayed open');
        const before = raw.length;
        sock.write(innerInitialize(srv));
        const t1 = Date.now();
        while (!/\r\n\r\n\{.*\}$/s.test(raw.slice(before)) && !closed && Date.now() - t1 < 5000) await new Promise((r) => setTimeout(r, 10));
        second = { raw: raw.slice(before) };
        sock.destroy();
      }
      assert.deepEqual(statuses(second.raw), [200], `the initialize after the refusal:\n${second.raw.slice(0, 800)}`);
      assert.match(second.raw, /\r\nmcp-session-id: /i);
    });
  }

  it('two accepted requests pipelined in one write get two answers, in order', async () => {
    const body = JSON.stringify(initializeBody());
    const one = head('POST', '/mcp', { Host: `127.0.0.1:${srv.port}`, ...MCP_HEADERS, 'Content-Length': Buffer.byteLength(body) }) + body;
    const hz = head('GET', '/healthz', { Host: `127.0.0.1:${srv.port}` });
    const { raw } = await exchange(srv, one + hz);
    assert.deepEqual(statuses(raw), [200, 200], raw.slice(0, 1500));
    assert.match(raw, /\{"status":"ok"\}$/);
  });
});
