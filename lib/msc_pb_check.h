/*
 * msc_pb_check.h - checks on a serialized protobuf message that its
 * unpacked form cannot show: protobuf-c ends every string at its first
 * NUL byte, so "a\0/../x" would reach a handler as "a", a different name
 * from the one the caller sent.
 */
#ifndef MSC_PB_CHECK_H
#define MSC_PB_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

/*
 * Whether no string field of the message of type `desc` in buf[0..len),
 * nested messages included, holds a NUL byte. Walks the wire format with
 * every length checked; a message it cannot walk (truncated, groups,
 * nested too deep) is not clean. Does not allocate.
 */
bool msc_pb_strings_clean(const ProtobufCMessageDescriptor *desc,
    const uint8_t *buf, size_t len);

#endif /* MSC_PB_CHECK_H */
