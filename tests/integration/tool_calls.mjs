// tool_calls.mjs: one tool call through an official SDK client (either era) and its checks, for
// the tests of the tool groups (files, copy, ports, processes, the cloud backends' tools).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';

/** tools/call `name` with `args`, waiting up to 2 minutes. */
export const call = (c, name, args) => c.callTool({ name, arguments: args }, undefined, { timeout: 120000 });

/** A call that must succeed, its text and structuredContent the same JSON; its structuredContent. */
export async function ok(c, name, args) {
  const res = await call(c, name, args);
  assert.equal(res.isError, false, `${name}: ${JSON.stringify(res).slice(0, 2000)}`);
  assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent, 'text and structuredContent agree');
  return res.structuredContent;
}

/** A call that must be refused with a text matching `re`; that text. */
export async function refused(c, name, args, re) {
  const res = await call(c, name, args);
  assert.equal(res.isError, true, `${name} ${JSON.stringify(args).slice(0, 200)}: ${JSON.stringify(res).slice(0, 500)}`);
  assert.match(res.content[0].text, re);
  return res.content[0].text;
}

/** The hex SHA-256 of a string or buffer. */
export const sha = (b) => createHash('sha256').update(b).digest('hex');
