// Computer ids and session resolution: slug validation (§3), random default slugs, explicit ids
// never becoming the default, lifecycle-mode conflicts (§4.1, §4.3), concurrent first calls
// creating one default (§9). Reference: §10 test_computers, test_server (session part).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer, cid, containerOf, cleanupContainers, assertReplyShape, assertToolError, textOf, track,
  RANDOM_SLUG_RE, SLUG_ERROR, PREFIX, listKilntainers,
} from './lib.mjs';

let s;

before(async () => {
  s = await startServer(['--timeout', '20']);
});

after(async () => {
  await s?.close();
  await cleanupContainers();
});

describe('slug validation', () => {
  const invalid = ['', 'UPPER', 'with space', '-leading', 'trailing-', 'a'.repeat(64), 'under_score', 'dot.ted', 'ümlaut', `${PREFIX}x/`];
  for (const id of invalid) {
    it(`computer_id ${JSON.stringify(id.length > 20 ? id.slice(0, 10) + '…(' + id.length + ')' : id)} is rejected`, async () => {
      const res = await s.call({ computer_id: id, command: 'true' });
      const text = assertToolError(res, 'computer_id');
      assert.equal(text, SLUG_ERROR);
      assert.equal(res.structuredContent, undefined);
    });
  }

  it('no container was created for rejected ids', async () => {
    const all = await listKilntainers();
    for (const bad of ['UPPER', 'with space', '-leading', 'trailing-', 'under_score']) {
      assert.ok(!all.some((c) => c.computerId === bad), `no container for ${bad}`);
    }
  });

  it('63 characters are accepted', async () => {
    const id = (PREFIX + 'x'.repeat(63)).slice(0, 62) + '9';
    assert.equal(id.length, 63);
    const sc = assertReplyShape(await s.call({ computer_id: id, command: 'echo ok' }));
    assert.equal(sc.computer_id, id);
    assert.equal(sc.stdout, 'ok\n');
    assert.ok(await containerOf(id), 'container exists');
  });

  it('surrounding whitespace is trimmed', async () => {
    const id = cid('trim');
    const sc = assertReplyShape(await s.call({ computer_id: `  ${id}\t`, command: 'echo ok' }));
    assert.equal(sc.computer_id, id);
    assert.ok(await containerOf(id));
  });

  it('digits and inner hyphens are fine', async () => {
    const id = cid('0-9--x');
    const sc = assertReplyShape(await s.call({ computer_id: id, command: 'true' }));
    assert.equal(sc.computer_id, id);
  });
});

describe('default computer', () => {
  let def;

  it('concurrent first calls without computer_id create exactly one random default', async () => {
    const results = await Promise.all([1, 2, 3].map(() => s.call({ command: 'hostname' })));
    const ids = results.map((r) => assertReplyShape(r).computer_id);
    ids.forEach(track);
    def = ids[0];
    assert.match(def, RANDOM_SLUG_RE);
    assert.deepEqual(ids, [def, def, def]);
    // (no global container count here: other processes may create random computers meanwhile;
    // one id, one container name and one hostname for all three calls prove a single default)
    assert.ok(await containerOf(def), 'the default container exists');
    const hostnames = new Set(results.map((r) => r.structuredContent.stdout));
    assert.equal(hostnames.size, 1, 'all three ran in the same container');
  });

  it('the default is a running container named kilntainer-<slug>, temporary', async () => {
    const c = await containerOf(def);
    assert.ok(c);
    assert.equal(c.State.Running, true);
    assert.equal(c.Config.Labels['kilntainers.temporary'], 'true');
    assert.equal(c.Config.Labels['kilntainers.computer-id'], def);
    assert.equal(c.Config.Labels['kilntainers'], 'true');
  });

  it('an explicit id does not become the default', async () => {
    const x = cid('explicit');
    const r1 = assertReplyShape(await s.call({ computer_id: x, command: 'echo x > /tmp/who; cat /tmp/who' }));
    assert.equal(r1.computer_id, x);
    const r2 = assertReplyShape(await s.call({ command: 'cat /tmp/who 2>/dev/null || echo none' }));
    assert.equal(r2.computer_id, def, 'omitting the id goes back to the default');
    assert.equal(r2.stdout, 'none\n');
  });

  it('temporary:false is ignored when the default already exists', async () => {
    const sc = assertReplyShape(await s.call({ command: 'true', temporary: false }));
    assert.equal(sc.computer_id, def);
    assert.equal(sc.temporary, true);
    assert.equal((await containerOf(def)).Config.Labels['kilntainers.temporary'], 'true');
  });

  it('another server process gets a different default', async () => {
    const s2 = await startServer([]);
    try {
      const sc = assertReplyShape(await s2.call({ command: 'true' }));
      track(sc.computer_id);
      assert.match(sc.computer_id, RANDOM_SLUG_RE);
      assert.notEqual(sc.computer_id, def);
    } finally {
      await s2.close();
    }
  });
});

describe('lifecycle mode conflicts', () => {
  it('same session: an attached temporary id requested as permanent → error', async () => {
    const id = cid('mode-t');
    assertReplyShape(await s.call({ computer_id: id, command: 'true' }));
    const res = await s.call({ computer_id: id, command: 'true', temporary: false });
    assert.equal(textOf(res), `Computer '${id}' is already attached with temporary=true.`);
    assert.equal(res.isError, true);
  });

  it('same session: a permanent id requested as temporary → error', async () => {
    const id = cid('mode-p');
    const sc = assertReplyShape(await s.call({ computer_id: id, command: 'true', temporary: false }));
    assert.equal(sc.temporary, false);
    assert.equal((await containerOf(id)).Config.Labels['kilntainers.temporary'], 'false');
    const res = await s.call({ computer_id: id, command: 'true', temporary: true });
    assert.equal(res.isError, true);
    assert.equal(textOf(res), `Computer '${id}' is already attached with temporary=false.`);
    // omitted temporary means true (the schema default) → also a conflict
    const res2 = await s.call({ computer_id: id, command: 'true' });
    assert.equal(res2.isError, true);
  });

  it('a permanent computer of another process requested as temporary → "already exists" error', async () => {
    const id = cid('mode-other');
    const s1 = await startServer([]);
    try {
      assertReplyShape(await s1.call({ computer_id: id, command: 'true', temporary: false }));
    } finally {
      await s1.close();
    }
    assert.ok(await containerOf(id), 'permanent container survives its server');
    const res = await s.call({ computer_id: id, command: 'true', temporary: true });
    assert.equal(res.isError, true);
    assert.equal(textOf(res), `Computer '${id}' already exists with temporary=false; requested temporary=true.`);
    // and attaching with the right mode works
    const sc = assertReplyShape(await s.call({ computer_id: id, command: 'echo attached', temporary: false }));
    assert.equal(sc.stdout, 'attached\n');
    assert.equal(sc.temporary, false);
  });

  it('a container name taken by a foreign (unlabelled) container → "not owned by this server" error', async () => {
    const { docker } = await import('./lib.mjs');
    const id = cid('foreign');
    const name = `kilntainer-${id}`;
    const r = await docker(['run', '-d', '--rm', '--name', name, 'debian:bookworm-slim', 'sleep', '120']);
    assert.equal(r.code, 0, r.stderr);
    try {
      const res = await s.call({ computer_id: id, command: 'true' });
      assert.equal(res.isError, true, JSON.stringify(res).slice(0, 300));
      assert.equal(textOf(res), `Docker name '${name}' is already in use by a container not owned by this server.`);
    } finally {
      await docker(['rm', '-f', name]);
    }
  });
});
