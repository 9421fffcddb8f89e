// The Host/Origin guard (DNS rebinding, cross-site requests) whatever the bind address: a
// server bound to 0.0.0.0, with and without a token, refuses a foreign Host (421) and a foreign
// Origin (403), as a page on a rebound name would send them; names added with --allowed-host /
// --allowed-origin (or KILNTAINERS_ALLOWED_HOSTS / KILNTAINERS_ALLOWED_ORIGINS) pass, and only
// those. The servers of the compose files in deploy/ keep the guard. No container is needed.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startHttpServer, request, initializeBody, REPO } from './lib.mjs';

const TOKEN = 'guard-test-token-0123456789abcdef0123';
let open;
let tokened;
let flagged;
let fromEnv;
before(async () => {
  open = await startHttpServer(['--allow-unauthenticated-http'], { host: '0.0.0.0' });
  tokened = await startHttpServer([], { host: '0.0.0.0', env: { KILNTAINERS_AUTH_TOKEN: TOKEN } });
});
after(async () => {
  for (const s of [open, tokened, flagged, fromEnv]) await s?.stop();
});

const init = (srv, headers, token) => request(srv, { body: initializeBody(), headers, token });

describe('bound to 0.0.0.0', () => {
  for (const [what, srv, token] of [['without a token', () => open, undefined], ['with a token (and the right token sent)', () => tokened, TOKEN]]) {
    it(`${what}: a foreign Host → 421, no session`, async () => {
      const s = srv();
      for (const host of ['evil.example.com', `evil.example.com:${s.port}`, `127.0.0.1.evil.example.com:${s.port}`, `10.0.0.1:${s.port}`]) {
        const r = await init(s, { Host: host }, token);
        assert.equal(r.status, 421, `Host ${host}: ${r.text.slice(0, 200)}`);
        assert.equal(r.headers['mcp-session-id'], undefined);
      }
    });

    it(`${what}: a foreign Origin → 403, no session`, async () => {
      const s = srv();
      for (const origin of ['http://evil.example.com', `http://evil.example.com:${s.port}`, 'null', `http://localhost.evil.example.com:${s.port}`]) {
        const r = await init(s, { Origin: origin }, token);
        assert.equal(r.status, 403, `Origin ${origin}: ${r.text.slice(0, 200)}`);
        assert.equal(r.headers['mcp-session-id'], undefined);
      }
    });

    it(`${what}: the loopback names pass (what a client of a port published on 127.0.0.1 sends)`, async () => {
      const s = srv();
      for (const host of [`127.0.0.1:${s.port}`, `localhost:${s.port}`, `[::1]:${s.port}`]) {
        const r = await init(s, { Host: host, Origin: `http://${host}` }, token);
        assert.equal(r.status, 200, `Host ${host}: ${r.text.slice(0, 200)}`);
      }
    });
  }

  it('with a token: a foreign Host is refused before the token is even looked at', async () => {
    const r = await init(tokened, { Host: 'evil.example.com' });
    assert.equal(r.status, 421);
  });
});

describe('--allowed-host and --allowed-origin', () => {
  before(async () => {
    flagged = await startHttpServer(['--allow-unauthenticated-http', '--allowed-host', 'mcp.example.test',
      '--allowed-host=pinned.example.test:8443', '--allowed-origin', 'https://app.example.test'], { host: '0.0.0.0' });
    fromEnv = await startHttpServer(['--allow-unauthenticated-http'], {
      host: '0.0.0.0',
      env: { KILNTAINERS_ALLOWED_HOSTS: 'env-a.example.test, env-b.example.test', KILNTAINERS_ALLOWED_ORIGINS: 'https://env.example.test' },
    });
  });

  it('a name added with --allowed-host passes with any port; a NAME:PORT entry only with that port', async () => {
    for (const host of ['mcp.example.test', 'mcp.example.test:443', 'MCP.Example.Test:8435', 'pinned.example.test:8443']) {
      const r = await init(flagged, { Host: host });
      assert.equal(r.status, 200, `Host ${host}: ${r.text.slice(0, 200)}`);
    }
    for (const host of ['pinned.example.test', 'pinned.example.test:8444', 'mcp.example.test.evil.example.com', 'xmcp.example.test',
      'mcp.example.test:', 'mcp.example.test:80x', 'evil.example.com']) {
      const r = await init(flagged, { Host: host });
      assert.equal(r.status, 421, `Host ${host}: ${r.status}`);
    }
  });

  it('an Origin added with --allowed-origin passes exactly; others stay refused', async () => {
    const ok = await init(flagged, { Origin: 'https://app.example.test' });
    assert.equal(ok.status, 200, ok.text);
    for (const origin of ['http://app.example.test', 'https://app.example.test:444', 'https://app.example.test.evil.example.com',
      'https://mcp.example.test']) {
      const r = await init(flagged, { Origin: origin });
      assert.equal(r.status, 403, `Origin ${origin}: ${r.status}`);
    }
  });

  it('KILNTAINERS_ALLOWED_HOSTS and KILNTAINERS_ALLOWED_ORIGINS add names the same way', async () => {
    for (const host of ['env-a.example.test', 'env-b.example.test:9000']) {
      const r = await init(fromEnv, { Host: host });
      assert.equal(r.status, 200, `Host ${host}: ${r.text.slice(0, 200)}`);
    }
    assert.equal((await init(fromEnv, { Host: 'env-c.example.test' })).status, 421);
    assert.equal((await init(fromEnv, { Origin: 'https://env.example.test' })).status, 200);
    assert.equal((await init(fromEnv, { Origin: 'https://other.example.test' })).status, 403);
  });

  it('the open endpoints stay open whatever the Host', async () => {
    const r = await request(open, { method: 'GET', path: '/healthz', headers: { Host: 'evil.example.com' } });
    assert.equal(r.status, 200);
  });
});

describe('the compose files in deploy/', () => {
  // The server as deploy/ runs it (0.0.0.0 inside the container, no token) must keep the guard.
  const composeCommand = (file, service) => {
    const text = readFileSync(path.join(REPO, 'deploy', file), 'utf8');
    const block = text.slice(text.search(new RegExp(`^  ${service}:`, 'm')));
    const m = /\n {4}command: (\[[^\]]*\])/.exec(block);
    assert.ok(m, `${file}: no command for ${service}`);
    return JSON.parse(m[1]);
  };
  for (const [file, service] of [['compose.allinone.yaml', 'mcp-sandbox-computer'], ['compose.split.yaml', 'edge']]) {
    it(`${file} (${service}): a foreign Host → 421 and a foreign Origin → 403; the published loopback address passes`, async () => {
      const cmd = composeCommand(file, service);
      const host = cmd[cmd.indexOf('--host') + 1];
      // The same flags, on a free port and in this process's setup (no --session-url, no certificates).
      const flags = [];
      for (let i = 0; i < cmd.length; i++) {
        if (['--transport', '--host', '--port', '--session-url', '--tls-ca', '--tls-cert'].includes(cmd[i])) { i++; continue; }
        flags.push(cmd[i]);
      }
      const s = await startHttpServer(flags, { host });
      try {
        assert.equal((await init(s, { Host: 'evil.example.com:8435' })).status, 421);
        assert.equal((await init(s, { Origin: 'http://evil.example.com:8435' })).status, 403);
        assert.equal((await init(s, { Host: `127.0.0.1:${s.port}`, Origin: `http://127.0.0.1:${s.port}` })).status, 200);
      } finally {
        await s.stop();
      }
    });
  }
});
