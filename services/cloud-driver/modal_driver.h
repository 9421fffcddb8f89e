/*
 * modal_driver.h - the cloud-driver's Modal backend: msc.v1.Driver on top
 * of Modal's gRPC API (the control plane modal.client.ModalClient, and
 * each sandbox task's command router for commands), spoken over libcurl's
 * HTTP/2 with protobuf-c. Computers are Modal sandboxes tagged with the
 * kilntainers* keys, so they are found again after a restart; temporary
 * ones are terminated at Stop, permanent ones keep running until their
 * lifetime (--sandbox-timeout) ends.
 */
#ifndef MODAL_DRIVER_H
#define MODAL_DRIVER_H

#include "msc_cfg.h"

struct modal_driver;

/*
 * Starts the service on `url` with the --modal-*, --gpu, --region,
 * --sandbox-timeout, --image, --network and --shell options of `cfg`
 * (borrowed). Credentials: modal_conf.h. Does not contact Modal: missing
 * or wrong tokens are reported on the first call. Bad option values are
 * reported (kilntainers: error: ...) and fail the start.
 */
int modal_driver_start(const struct msc_cfg *cfg, const char *url,
    struct modal_driver **dp);

/* Stops serving and frees. Accepts NULL. */
void modal_driver_stop(struct modal_driver *d);

#endif /* MODAL_DRIVER_H */
