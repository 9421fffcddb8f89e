/*
 * wasm_driver.h - the msc.v1.Driver service for the WebAssembly backends:
 * `go_busybox` (our toolbox module, built in) and `wasm` (a user's WASI
 * module given by --wasm-path, compiled once and cached). A computer is a
 * private directory preopened as "/"; each command runs in a short-lived
 * runner child process (host/).
 */
#ifndef WASM_DRIVER_H
#define WASM_DRIVER_H

#include "msc_cfg.h"

struct wasm_driver;

/* Serves the Driver service on url for cfg->backend (borrowed). */
int wasm_driver_start(const struct msc_cfg *cfg, const char *url,
    struct wasm_driver **dp);

/* Stops serving, ends running commands and frees. Accepts NULL. */
void wasm_driver_stop(struct wasm_driver *d);

#endif /* WASM_DRIVER_H */
