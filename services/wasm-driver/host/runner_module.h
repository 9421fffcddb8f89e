/*
 * runner_module.h - how a runner reaches the C that wasm2c made of a
 * module. `msc-wasm-fuel --glue` writes, next to that C, the msc_wasm_*
 * functions below; msc-wasm-busybox links them in, msc-wasm-exec finds
 * them in a module .so with dlsym(). The glue's msc_wasm_abi() must equal
 * MSC_WASM_ABI: change it whenever these functions, the WASI host's
 * exported symbols or what msc-wasm-fuel makes of a module change; it is
 * part of the cached .so's name (wasm_compile.h), and a runner refuses a
 * .so of another number.
 */
#ifndef RUNNER_MODULE_H
#define RUNNER_MODULE_H

/* 3: modules built with the pinned wasm-rt mode and a clean environment
 * (wasm_compile.c); a .so cached before that is compiled again. */
#define MSC_WASM_ABI 3

#ifndef MSC_WASM_ABI_ONLY
#include <stddef.h>
#include <stdint.h>

#include "wasm-rt.h"

struct Z_wasi_snapshot_preview1_instance_t;

/* The glue functions of one module (all borrowed, never NULL). */
struct runner_module {
	unsigned (*abi)(void);
	size_t (*instance_size)(void);
	void (*init_module)(void);
	void (*instantiate)(void *inst,
	    struct Z_wasi_snapshot_preview1_instance_t *wasi);
	void (*free)(void *inst);
	wasm_rt_memory_t *(*memory)(void *inst);
	void (*start)(void *inst);
	int64_t *(*fuel)(void *inst);
	void *dl;               /* dlopen() handle, or NULL when linked in */
};

/*
 * Fills m from a module .so (dlopen, RTLD_NOW). Returns 0, or -1 with a
 * message in err. Blocks on file I/O.
 */
int runner_module_open(const char *so_path, struct runner_module *m,
    char *err, size_t errlen);

/* The glue functions themselves, as the glue defines them. */
unsigned msc_wasm_abi(void);
size_t msc_wasm_instance_size(void);
void msc_wasm_init_module(void);
void msc_wasm_instantiate(void *inst,
    struct Z_wasi_snapshot_preview1_instance_t *wasi);
void msc_wasm_free(void *inst);
wasm_rt_memory_t *msc_wasm_memory(void *inst);
void msc_wasm_start(void *inst);
int64_t *msc_wasm_fuel(void *inst);

/* How a runner opens a --module .so: runner_module_open, or none. */
typedef int (*runner_module_open_fn)(const char *so_path,
    struct runner_module *m, char *err, size_t errlen);

/*
 * Shared by both runners: the CLI contract of runner.c's file comment.
 * msc-wasm-busybox passes its built-in module and no opener (it is linked
 * statically, and refuses --module); msc-wasm-exec passes no module and
 * runner_module_open.
 */
int runner_main(int argc, char **argv, const struct runner_module *builtin,
    runner_module_open_fn open_module);
#endif

#endif /* RUNNER_MODULE_H */
