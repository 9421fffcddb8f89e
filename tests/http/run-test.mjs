#!/usr/bin/env node
// Meson wrapper for one test file: exits 77 (meson: skipped) when the npm dependencies are not
// installed (`npm ci --prefix tests/http`; meson never runs npm), else runs
// `node --test --test-reporter=spec <file>` and exits with its status.
//
//   node tests/http/run-test.mjs contract.test.mjs
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node run-test.mjs <file.test.mjs>\n');
  process.exit(2);
}
if (!existsSync(path.join(HERE, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'))) {
  process.stderr.write(`http tests: ${path.join(HERE, 'node_modules')} missing; run: npm ci --prefix ${HERE} (skipping)\n`);
  process.exit(77);
}
const child = spawn(process.execPath, ['--test', '--test-reporter=spec', path.resolve(HERE, file)], { stdio: 'inherit', cwd: HERE });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
