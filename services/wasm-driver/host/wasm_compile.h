/*
 * wasm_compile.h - a user's WASI module (--wasm-path) made runnable by
 * msc-wasm-exec: msc-wasm-fuel --check-wasi (refuses what the host cannot
 * run, adds the fuel counter), wasm2c, then cc -shared, cached by the
 * SHA-256 of the file's content.
 */
#ifndef WASM_COMPILE_H
#define WASM_COMPILE_H

#include <stddef.h>

/*
 * Each tool gets this long (env MSC_WASM_COMPILE_STEP_S overrides it);
 * then its whole process group is killed.
 */
#define WASM_COMPILE_STEP_S 600

/*
 * Returns in *so_path_out (malloc'd, the caller frees) the path of
 * <cache_dir>/<sha256 of the file>-<MSC_WASM_ABI>.so (the ABI number of
 * runner_module.h, so a runner never meets a .so of another version) for
 * the module at wasm_path, compiling it first
 * unless the cache has it (the file is renamed in place atomically, so
 * concurrent calls are safe). cache_dir is made if missing (not its
 * parents). Blocks: about a second for a small module, minutes for a
 * multi-MB one. The tools: msc-wasm-fuel (env MSC_WASM_FUEL, else the
 * build tree's, else the installed one), wasm2c and cc (env MSC_WASM_WASM2C
 * and MSC_WASM_CC, else /usr/bin or /bin: never the server's PATH). Each
 * runs with PATH=/usr/bin:/bin and LC_ALL=C as its whole environment.
 *
 * Returns 0, or a negative errno with the message in err:
 *   "WASM file not found: '<path>'"                      (-ENOENT)
 *   "Failed to compile WASM module '<path>': <detail>"   (others)
 * *so_path_out is not written on failure.
 */
int wasm_compile_module(const char *wasm_path, const char *cache_dir,
    char **so_path_out, char *err, size_t errlen);

#endif /* WASM_COMPILE_H */
