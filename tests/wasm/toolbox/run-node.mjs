// run-node.mjs - runs the toolbox .wasm under Node's WASI (preview 1), for
// testing the module without the wasm2c host.
//
//   node run-node.mjs busybox.wasm [applet args...]
//
// The sandbox root "/" is TOOLBOX_ROOT or the current directory; the guest
// starts in "/" (PWD=/). stdin/stdout/stderr are the process's own. The exit
// status is the module's. Not a security boundary (see notes/wasm.md).
import { readFileSync } from 'node:fs';

process.removeAllListeners('warning');
const { WASI } = await import('node:wasi');

const [wasmPath, ...args] = process.argv.slice(2);
if (!wasmPath) {
	process.stderr.write('usage: node run-node.mjs busybox.wasm [args...]\n');
	process.exit(2);
}
const root = process.env.TOOLBOX_ROOT || process.cwd();
// The caller's environment passes through, except what describes the host.
const env = {};
for (const [k, v] of Object.entries(process.env))
	if (!['PWD', 'HOME', 'PATH', 'OLDPWD', 'TOOLBOX_ROOT'].includes(k) &&
	    !k.startsWith('NODE'))
		env[k] = v;
Object.assign(env, { PWD: '/', HOME: '/', PATH: '/bin' });
const wasi = new WASI({
	version: 'preview1',
	args: ['busybox', ...args],
	env,
	preopens: { '/': root },
	returnOnExit: true,
});
const mod = await WebAssembly.compile(readFileSync(wasmPath));
const inst = await WebAssembly.instantiate(mod, wasi.getImportObject());
process.exitCode = wasi.start(inst);
