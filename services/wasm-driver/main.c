/* main.c - msc-wasm-driver: the wasm backends' driver as its own process. */
#include "msc_log.h"
#include "msc_main.h"
#include "wasm_cfg.h"
#include "wasm_driver.h"

int
main(int argc, char **argv)
{
	struct msc_cfg cfg;
	struct wasm_driver *d = NULL;
	int status;

	msc_log_init("msc-wasm-driver");
	if ((status = msc_main_config(&cfg, &wasm_program, argc, argv)) >= 0)
		goto out;
	status = 1;
	if (cfg.listen == NULL) {
		msc_cfg_error("msc-wasm-driver needs --listen");
		goto out;
	}
	msc_main_block_signals();
	if (wasm_driver_start(&cfg, cfg.listen, &d) != 0)
		goto out;
	msc_log_info("serving %s on %s", cfg.backend, cfg.listen);
	msc_main_wait_signal();
	wasm_driver_stop(d);
	status = 0;
out:
	msc_cfg_fini(&cfg);
	return status;
}
