/*
 * edge_desc.h - the terminal_execute description the edge lists, fetched
 * from the session service in the background (Session/Describe, which
 * asks a driver): the edge starts, and answers, before the services are
 * up, and knows no backend.
 */
#ifndef EDGE_EDGE_DESC_H
#define EDGE_EDGE_DESC_H

#include "msc_cfg.h"
#include "msc_rpc.h"

struct edge_desc;

/*
 * Starts fetching. With --tool-instruction-override the text is known at
 * once; otherwise a thread asks the session until it answers, then adds
 * --extended-tool-instruction. `cfg` and `session` are borrowed and must
 * outlive edge_desc_stop. Returns 0 or a negative errno.
 */
int edge_desc_start(const struct msc_cfg *cfg, struct msc_client *session,
    struct edge_desc **dp);

/*
 * The description (borrowed; valid until edge_desc_stop), waiting up to
 * wait_ms for it; NULL when it is not known by then. Blocks.
 */
const char *edge_desc_get(struct edge_desc *d, int wait_ms);

/* Stops the fetch (waits up to about a second) and frees. Accepts NULL. */
void edge_desc_stop(struct edge_desc *d);

#endif /* EDGE_EDGE_DESC_H */
