/* msc_rpc_int.h - helpers shared by msc_rpc_server.c and msc_rpc_client.c. */
#ifndef MSC_RPC_INT_H
#define MSC_RPC_INT_H

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

#endif /* MSC_RPC_INT_H */
