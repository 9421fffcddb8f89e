/* msc_rpc_int.h - helpers shared by msc_rpc_server.c and msc_rpc_client.c. */
#ifndef MSC_RPC_INT_H
#define MSC_RPC_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <nng/nng.h>

#include "msc_rpc.h"

/* Largest message either side accepts (a 2 MiB stdin, 2x output, slack). */
#define MSC_RPC_MAX_MSG (64u * 1024 * 1024)

/*
 * Packs `env` (borrowed) and, when `body` is not NULL, `body` as its
 * payload into a new nng message. Returns 0 or a negative errno.
 */
int msc_rpc_pack(Msc__V1__Envelope *env, const ProtobufCMessage *body,
    nng_msg **msgp);

/* Maps an NNG error (positive) to a status code. */
Msc__V1__Code msc_rpc_code_from_nng(int rv);

/*
 * Which connections (NNG pipe ids) of a client are up, from NNG's pipe
 * events. NNG 1.5 runs a pipe's removal on its reaper thread, which can
 * come before the addition still under way on the dialer's thread (a
 * connection that closes as it is set up), and reports the removal of a
 * pipe that closed before it was added, which never is. A removal seen
 * first is remembered, so the late addition counts for nothing: counted,
 * it would say "up" for ever with no connection (calls then waited for
 * their deadline, never redialed). The caller serializes the calls.
 */
#define MSC_RPC_PIPES_MAX 16    /* one dialer: one, two while it changes */

struct msc_rpc_pipes {
	uint32_t live[MSC_RPC_PIPES_MAX];       /* up now (0: free slot) */
	uint32_t gone[MSC_RPC_PIPES_MAX];       /* removed before added */
	unsigned next_gone;
};

/* Pipe `id` was added; returns whether it is counted up now. */
bool msc_rpc_pipes_added(struct msc_rpc_pipes *t, uint32_t id);

/* Pipe `id` was removed; returns whether it had been counted up. */
bool msc_rpc_pipes_removed(struct msc_rpc_pipes *t, uint32_t id);

#endif /* MSC_RPC_INT_H */
