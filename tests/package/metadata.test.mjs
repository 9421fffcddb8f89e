// The deployment metadata checked without a network: server.json against the MCP Registry's
// published server.json schema (a copy in server.schema.json, $id .../2025-12-11/..., its example registry URLs left out) and the
// registry's own rules for an OCI package; .mcp.json; fly.toml (tomllib via python3); and that
// the image's ownership label, the Debian package and meson agree on the name and version.
// Run: meson test -C build package/metadata
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
// ajv and ajv-formats come with the MCP SDK in tests/integration (npm ci there).
const require = createRequire(path.join(REPO, 'tests/integration/package.json'));
const Ajv = require('ajv');
const addFormats = require('ajv-formats');

const read = (p) => fs.readFileSync(path.join(REPO, p), 'utf8');
const json = (p) => JSON.parse(read(p));
const SCHEMA = json('tests/package/server.schema.json');
const SERVER = json('server.json');
const MESON_VERSION = read('meson.build').match(/version:\s*'([^']+)'/)[1];

function validator() {
  // The schema's own dialect is draft-07 (Ajv's default); its formats are checked, and its
  // non-validating annotation keywords ("example") are allowed.
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  return ajv.compile(SCHEMA);
}

describe('server.json', () => {
  it('is the registry schema we vendored (draft-07, 2025-12-11)', () => {
    assert.equal(SCHEMA.$id, 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json');
    assert.equal(SCHEMA.$schema, 'http://json-schema.org/draft-07/schema#');
    assert.equal(SERVER.$schema, SCHEMA.$id, 'server.json names the schema it follows');
  });

  it('validates against the published schema', () => {
    const validate = validator();
    assert.ok(validate(SERVER), JSON.stringify(validate.errors, null, 2));
  });

  it('the validator is real: it rejects what the schema forbids', () => {
    const validate = validator();
    const bad = [
      { ...SERVER, name: 'no-slash' },
      { ...SERVER, description: 'x'.repeat(101) },
      { ...SERVER, version: undefined },
      { ...SERVER, websiteUrl: 'not a uri' },
      { ...SERVER, packages: [{ ...SERVER.packages[0], transport: undefined }] },
      { ...SERVER, packages: [{ ...SERVER.packages[0], version: 'latest' }] },
      { ...SERVER, packages: [{ ...SERVER.packages[1], transport: { type: 'streamable-http', url: 'ftp://x' } }] },
    ];
    for (const b of bad) assert.equal(validate(JSON.parse(JSON.stringify(b))), false, JSON.stringify(b).slice(0, 200));
  });

  it('has what the schema requires, in the forms it requires', () => {
    // ServerDetail.required and its constraints, written out here too so that a schema copy that
    // lost them would not pass silently.
    const sd = SCHEMA.definitions.ServerDetail;
    assert.deepEqual(sd.required, ['name', 'description', 'version']);
    assert.match(SERVER.name, /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    assert.ok(SERVER.name.length >= 3 && SERVER.name.length <= 200);
    assert.ok(SERVER.description.length >= 1 && SERVER.description.length <= 100);
    assert.ok(SERVER.version.length <= 255);
    assert.doesNotMatch(SERVER.version, /^[~^<>=]|\.x$|\*|^latest$/, 'a specific version, not a range');
    assert.deepEqual(SCHEMA.definitions.Package.required, ['registryType', 'identifier', 'transport']);
    assert.deepEqual(SCHEMA.definitions.StreamableHttpTransport.required, ['type', 'url']);
    assert.deepEqual(SCHEMA.definitions.KeyValueInput.allOf[1].required, ['name']);
  });

  it('its version is the project version (meson.build, debian/changelog)', () => {
    assert.equal(SERVER.version, MESON_VERSION);
    const deb = read('debian/changelog').match(/^mcp-sandbox-computer \(([^)]+)\)/)[1];
    assert.equal(deb, MESON_VERSION);
  });

  it('describes the image as OCI packages, one per transport: stdio and Streamable HTTP', () => {
    assert.equal(SERVER.packages.length, 2);
    const types = SERVER.packages.map((p) => p.transport.type).sort();
    assert.deepEqual(types, ['stdio', 'streamable-http']);
    for (const p of SERVER.packages) {
      assert.equal(p.registryType, 'oci');
      // The registry's OCI rule: the identifier is the whole reference with its tag (no
      // separate version field, no registryBaseUrl), and the tag is this version.
      assert.equal(p.version, undefined);
      assert.equal(p.registryBaseUrl, undefined);
      assert.match(p.identifier, /^[a-z0-9._/-]+:[A-Za-z0-9._-]+$/);
      assert.equal(p.identifier.split(':').pop(), SERVER.version);
      assert.doesNotMatch(p.identifier, /:latest$/);
      assert.equal(p.runtimeHint, 'docker');
      const args = p.runtimeArguments.map((a) => `${a.name}${a.value === undefined ? '' : `=${a.value}`}`);
      // What the image needs to reach the host's engine (README: the security note).
      assert.ok(args.includes('--volume=/var/run/docker.sock:/var/run/docker.sock'), args.join(' '));
      assert.ok(args.includes('--network=host') && args.includes('--cap-add=NET_ADMIN'), args.join(' '));
    }
  });

  it('the HTTP package listens on loopback, where the Host/Origin guard lets its URL in', () => {
    const http = SERVER.packages.find((p) => p.transport.type === 'streamable-http');
    const a = Object.fromEntries(http.packageArguments.map((x) => [x.name, x.value]));
    assert.equal(a['--transport'], 'http');
    assert.equal(a['--host'], '127.0.0.1');
    assert.equal(http.transport.url, `http://127.0.0.1:${a['--port']}/mcp`);
    const stdio = SERVER.packages.find((p) => p.transport.type === 'stdio');
    assert.ok(stdio.runtimeArguments.some((x) => x.name === '--interactive'), 'stdio needs docker run -i');
  });

  it('marks secrets as secret and nothing else', () => {
    const SECRET = new Set(['KILNTAINERS_AUTH_TOKEN', 'FLY_API_TOKEN', 'FLY_TOKEN', 'E2B_API_KEY',
      'MODAL_TOKEN_SECRET']);
    let seen = 0;
    for (const p of SERVER.packages) {
      for (const e of p.environmentVariables ?? []) {
        assert.equal(e.isSecret === true, SECRET.has(e.name), `${e.name} isSecret`);
        assert.equal(e.value, undefined, `${e.name} has no fixed value in server.json`);
        seen += SECRET.has(e.name) ? 1 : 0;
      }
      for (const h of p.transport.headers ?? []) if (h.name === 'Authorization') assert.equal(h.isSecret, true);
    }
    assert.ok(seen >= 1, 'the HTTP token is described');
    const httpEnv = SERVER.packages.find((p) => p.transport.type === 'streamable-http').environmentVariables
      .map((e) => e.name);
    assert.ok(httpEnv.includes('KILNTAINERS_AUTH_TOKEN') && httpEnv.includes('KILNTAINERS_ALLOWED_HOSTS'));
  });

  it('the image carries the registry ownership label with this name', () => {
    const m = read('deploy/Dockerfile').match(/^LABEL io\.modelcontextprotocol\.server\.name="([^"]+)"$/m);
    assert.ok(m, 'LABEL io.modelcontextprotocol.server.name in deploy/Dockerfile');
    assert.equal(m[1], SERVER.name);
  });
});

describe('.mcp.json', () => {
  it('runs the checkout’s server, one entry on Fly with the lifecycle tools', () => {
    const m = json('.mcp.json');
    const servers = Object.values(m.mcpServers);
    assert.ok(servers.length >= 1);
    for (const s of servers) {
      assert.equal(s.command, './build/mcp-sandbox-computer');
      assert.ok(Array.isArray(s.args));
    }
    const fly = servers.find((s) => s.args.includes('fly'));
    assert.ok(fly, 'a Fly entry');
    assert.deepEqual(fly.args, ['--backend', 'fly']);
    assert.equal(fly.env.ENABLE_LIFECYCLE_TOOLS, 'true');
    // No credentials in a checked-in file.
    for (const s of servers) for (const k of Object.keys(s.env ?? {})) assert.doesNotMatch(k, /TOKEN|KEY|SECRET/);
  });

  it('the command it names is the program meson builds (in build/, as README says)', () => {
    const bin = path.join(REPO, 'build/mcp-sandbox-computer');
    assert.equal(path.basename(process.env.MSC_BIN ?? bin), path.basename(bin));
    // With meson's build directory at build/ (scripts/setup.sh), the file is there.
    if (path.resolve(path.dirname(process.env.MSC_BIN ?? '')) === path.join(REPO, 'build'))
      fs.accessSync(bin, fs.constants.X_OK);
  });
});

describe('fly.toml', () => {
  const fly = JSON.parse(execFileSync('python3', ['-c',
    'import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], "rb"))))',
    path.join(REPO, 'fly.toml')], { encoding: 'utf8' }));
  const cmd = fly.processes.app.split(/\s+/);
  const flag = (n) => cmd[cmd.indexOf(n) + 1];

  it('hosts the HTTP controller with the fly backend on the port the service routes to', () => {
    assert.equal(fly.build.dockerfile, 'deploy/Dockerfile');
    assert.equal(flag('--backend'), 'fly');
    assert.equal(flag('--transport'), 'http');
    assert.equal(flag('--host'), '0.0.0.0');
    assert.equal(Number(flag('--port')), fly.http_service.internal_port);
    assert.ok(fly.http_service.processes.includes('app'));
    assert.equal(fly.primary_region, 'gru');
  });

  it('stays on and is health-checked on /healthz', () => {
    assert.equal(fly.http_service.auto_stop_machines, 'off');
    assert.ok(fly.http_service.min_machines_running >= 1);
    assert.equal(fly.http_service.force_https, true);
    assert.equal(fly.http_service.checks[0].path, '/healthz');
  });

  it('keeps the credentials out of [env] (they are secrets) and lets its public name in', () => {
    for (const k of ['FLY_API_TOKEN', 'FLY_TOKEN', 'KILNTAINERS_AUTH_TOKEN']) assert.equal(fly.env[k], undefined);
    assert.ok(!cmd.includes('--allow-unauthenticated-http'), 'the token is required on 0.0.0.0');
    const text = read('fly.toml');
    assert.match(text, /fly secrets set -a /);
    assert.match(text, /FLY_API_TOKEN="\$\(fly tokens create deploy -a /);
    assert.match(text, /KILNTAINERS_AUTH_TOKEN="\$\(openssl rand -hex 32\)"/);
    assert.equal(fly.env.KILNTAINERS_ALLOWED_HOSTS, `${fly.app}.fly.dev`);
  });
});

// Debian 12 has no Compose v2 (the docker compose plugin); its docker-compose 1.29 validates a
// file against the Compose Specification's JSON schema (compose/config/compose_spec.json) and
// interpolates it the same way, so `docker-compose config` is the check here.
describe('compose files', () => {
  const config = (file, env = {}) => {
    const yaml = execFileSync('docker-compose', ['-f', path.resolve(REPO, file), 'config'],
      { encoding: 'utf8', env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    return JSON.parse(execFileSync('python3', ['-c',
      'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'], { input: yaml, encoding: 'utf8' }));
  };

  it('docker-compose config accepts compose.yaml and deploy/compose.*.yaml', () => {
    for (const f of ['compose.yaml', 'deploy/compose.allinone.yaml', 'deploy/compose.split.yaml']) config(f);
  });

  it('and refuses a file that breaks the specification (the check is real)', () => {
    const bad = path.join(fs.mkdtempSync('/tmp/msc-compose-'), 'compose.yaml');
    try {
      fs.writeFileSync(bad, read('compose.yaml').replace('network_mode: host', 'network_mode: [host]'));
      assert.throws(() => config(bad), /network_mode contains an invalid type/);
      fs.writeFileSync(bad, read('compose.yaml').replace('restart:', 'restarts:'));
      assert.throws(() => config(bad), /Unsupported config option .*'restarts'/);
    } finally { fs.rmSync(path.dirname(bad), { recursive: true }); }
  });

  it('compose.yaml: Streamable HTTP on the host loopback, port 8080, with the engine socket', () => {
    const s = config('compose.yaml', { KILNTAINERS_AUTH_TOKEN: '', MSC_HTTP_PORT: '' }).services['mcp-sandbox-computer'];
    assert.equal(path.resolve(s.build.context), REPO);
    assert.equal(s.build.dockerfile, 'deploy/Dockerfile');
    // The docker driver loads its nftables rules into the host's kernel: the host's network
    // namespace and CAP_NET_ADMIN, so the listener is the host's 127.0.0.1 and nothing is
    // published; the Host/Origin guard covers loopback listeners without a token.
    assert.equal(s.network_mode, 'host');
    assert.deepEqual(s.cap_add, ['NET_ADMIN']);
    assert.equal(s.ports, undefined);
    const c = s.command;
    assert.equal(c[c.indexOf('--transport') + 1], 'http');
    assert.equal(c[c.indexOf('--host') + 1], '127.0.0.1');
    assert.equal(c[c.indexOf('--port') + 1], '8080');
    assert.ok(!c.includes('--allow-unauthenticated-http'));
    assert.ok(s.volumes.some((v) => v.startsWith('/var/run/docker.sock:/var/run/docker.sock')));
    assert.ok('KILNTAINERS_AUTH_TOKEN' in s.environment, 'a token can be set for a wider listener');
    assert.match(s.healthcheck.test.join(' '), /\/healthz/);
  });
});
