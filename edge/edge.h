/*
 * edge.h - runs the MCP edge in front of a session service, over the
 * transport the command line chose (stdio or Streamable HTTP).
 */
#ifndef EDGE_EDGE_H
#define EDGE_EDGE_H

#include "edge_desc.h"
#include "msc_cfg.h"
#include "msc_rpc.h"

/*
 * Serves until stdin ends (stdio) or SIGTERM/SIGINT arrives. Call it with
 * SIGTERM and SIGINT blocked in every thread. `session` and `desc` (the
 * tool description, edge_desc.h) are borrowed.
 * Returns the process exit status.
 */
int edge_run(const struct msc_cfg *cfg, struct msc_client *session,
    struct edge_desc *desc);

#endif /* EDGE_EDGE_H */
