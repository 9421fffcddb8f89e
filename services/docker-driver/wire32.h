/*
 * wire32.h - a 32-bit unsigned number in network order (big-endian) in a
 * byte buffer: the frames the driver and the exec helper exchange
 * (fastexec_wire.c, lease_wire.c) and the header of the engine's
 * multiplexed output stream (docker_stream.c). libc only: the static
 * helper includes it too.
 */
#ifndef WIRE32_H
#define WIRE32_H

#include <stdint.h>

static inline void
wire_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint32_t
wire_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

#endif /* WIRE32_H */
