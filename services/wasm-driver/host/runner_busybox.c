/*
 * runner_busybox.c - msc-wasm-busybox: the runner (runner.c) with the
 * toolbox module linked in, its glue made by `msc-wasm-fuel --glue`.
 */
#include "runner_module.h"

int
main(int argc, char **argv)
{
	static const struct runner_module toolbox = {
		.abi = msc_wasm_abi,
		.instance_size = msc_wasm_instance_size,
		.init_module = msc_wasm_init_module,
		.instantiate = msc_wasm_instantiate,
		.free = msc_wasm_free,
		.memory = msc_wasm_memory,
		.start = msc_wasm_start,
		.fuel = msc_wasm_fuel,
	};

	return runner_main(argc, argv, &toolbox, NULL);
}
