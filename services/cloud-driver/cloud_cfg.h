/*
 * cloud_cfg.h - what the cloud backends (E2B, Modal) share on the command
 * line: the network flags they can honour, and msc-cloud-driver.
 */
#ifndef CLOUD_CFG_H
#define CLOUD_CFG_H

#include "msc_cfg.h"

/* msc-cloud-driver, which serves either (its row: cloud_backend.c) */
extern const struct msc_program cloud_program;

/*
 * Only --network-allow maps onto the provider's egress rules: deny
 * entries, proxy credentials and a resolver (with an allowlist) are
 * refused. Prints and returns -EINVAL, or 0.
 */
int cloud_cfg_validate(const struct msc_cfg *cfg);

#endif /* CLOUD_CFG_H */
