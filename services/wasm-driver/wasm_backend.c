/*
 * wasm_backend.c - the WebAssembly backends' rows (wasm, go_busybox):
 * what the composition root and msc-wasm-driver list. Above both their
 * options (wasm_cfg.c) and their driver (wasm_driver.c), so neither calls
 * back up.
 */
#include "wasm_cfg.h"
#include "wasm_driver.h"

static int
start(const struct msc_cfg *cfg, const char *url, void **hp)
{
	return wasm_driver_start(cfg, url, (struct wasm_driver **)hp);
}

static void
stop(void *h)
{
	wasm_driver_stop(h);
}

/* These computers have no network at all (wasm_cfg_validate). */
const struct msc_backend wasm_backend = { "wasm", &wasm_cfg_table,
	wasm_cfg_validate, start, stop, MSC_BACKEND_FILES | MSC_BACKEND_SNAPSHOTS,
	wasm_preview_refusal };

const struct msc_backend busybox_backend = { "go_busybox", &wasm_cfg_table,
	wasm_cfg_validate, start, stop, MSC_BACKEND_FILES | MSC_BACKEND_SNAPSHOTS,
	busybox_preview_refusal };

static const struct msc_backend *const backends[] = { &wasm_backend,
	&busybox_backend };

const struct msc_program wasm_program = { "msc-wasm-driver", "The driver of "
	"WebAssembly computers (--backend wasm or go_busybox).",
	MSC_PROG_DRIVER, backends, 2 };
