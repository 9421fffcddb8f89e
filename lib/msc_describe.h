/*
 * msc_describe.h - each backend's terminal_execute description, built
 * from its configuration (image, shell, default timeout). A driver serves
 * its own through Driver/Describe; nothing upstream knows the backend.
 */
#ifndef MSC_DESCRIBE_H
#define MSC_DESCRIBE_H

#include "msc_cfg.h"

/*
 * Each returns a malloc'd text (the caller frees), or NULL when out of
 * memory; msc_describe_e2b also for a template of the operator's own,
 * which no text fits. msc_describe_wasm covers go_busybox and wasm
 * (cfg->backend).
 */
char *msc_describe_docker(const struct msc_cfg *cfg);
char *msc_describe_fly(const struct msc_cfg *cfg);
char *msc_describe_e2b(const struct msc_cfg *cfg);
char *msc_describe_modal(const struct msc_cfg *cfg);
char *msc_describe_wasm(const struct msc_cfg *cfg);

/*
 * Why backend `backend` serves no preview URLs (issue 30), the text an
 * agent reads for computer_expose_port (static); NULL for a backend that
 * serves them (docker, e2b, modal).
 */
const char *msc_describe_preview_refusal(const char *backend);

#endif /* MSC_DESCRIBE_H */
