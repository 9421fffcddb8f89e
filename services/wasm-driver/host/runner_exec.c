/*
 * runner_exec.c - msc-wasm-exec: the runner (runner.c) for a user module
 * compiled at run time (wasm_compile_module) and given by --module.
 */
#include "runner_module.h"

int
main(int argc, char **argv)
{
	return runner_main(argc, argv, NULL, runner_module_open);
}
