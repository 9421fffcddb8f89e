/*
 * runner_module.c - finds a module's glue functions: in a .so made by
 * wasm_compile_module() (msc-wasm-exec), whose references to wasm_rt_*
 * and to the WASI host resolve to this executable's exported symbols.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "runner_module.h"

/* Looks up name in the .so; false (and a message in err) when missing. */
static bool
sym(void *dl, const char *name, void *out, char *err, size_t errlen)
{
	void *p = dlsym(dl, name);

	if (p == NULL) {
		snprintf(err, errlen, "the module has no %s: not made by "
		    "wasm_compile_module", name);
		return false;
	}
	memcpy(out, &p, sizeof(p));
	return true;
}

int
runner_module_open(const char *so_path, struct runner_module *m, char *err,
    size_t errlen)
{
	const char *e;

	memset(m, 0, sizeof(*m));
	if ((m->dl = dlopen(so_path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		e = dlerror();
		snprintf(err, errlen, "cannot load the module %s: %s", so_path,
		    e != NULL ? e : "unknown error");
		return -1;
	}
	if (!sym(m->dl, "msc_wasm_abi", &m->abi, err, errlen) ||
	    !sym(m->dl, "msc_wasm_instance_size", &m->instance_size, err,
		errlen) ||
	    !sym(m->dl, "msc_wasm_init_module", &m->init_module, err,
		errlen) ||
	    !sym(m->dl, "msc_wasm_instantiate", &m->instantiate, err,
		errlen) ||
	    !sym(m->dl, "msc_wasm_free", &m->free, err, errlen) ||
	    !sym(m->dl, "msc_wasm_memory", &m->memory, err, errlen) ||
	    !sym(m->dl, "msc_wasm_start", &m->start, err, errlen) ||
	    !sym(m->dl, "msc_wasm_fuel", &m->fuel, err, errlen)) {
		dlclose(m->dl);
		m->dl = NULL;
		return -1;
	}
	return 0;
}
