#include "msc_pb_check.h"

#include <string.h>

/* Deeper than any of our messages nest; bounds the recursion. */
#define PB_MAX_DEPTH 16

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };

/* Reads a varint at *pos; returns false when it runs past len. */
static bool
read_varint(const uint8_t *buf, size_t len, size_t *pos, uint64_t *out)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (*pos >= len)
			return false;
		b = buf[(*pos)++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if ((b & 0x80) == 0) {
			*out = v;
			return true;
		}
	}
	return false;
}

static bool
walk(const ProtobufCMessageDescriptor *desc, const uint8_t *buf, size_t len,
    int depth)
{
	size_t pos = 0;

	if (depth > PB_MAX_DEPTH)
		return false;
	while (pos < len) {
		const ProtobufCFieldDescriptor *f;
		uint64_t key, n;

		if (!read_varint(buf, len, &pos, &key))
			return false;
		switch (key & 7) {
		case WIRE_VARINT:
			if (!read_varint(buf, len, &pos, &n))
				return false;
			break;
		case WIRE_I64:
		case WIRE_I32:
			n = (key & 7) == WIRE_I64 ? 8 : 4;
			if (len - pos < n)
				return false;
			pos += n;
			break;
		case WIRE_LEN:
			if (!read_varint(buf, len, &pos, &n) || n > len - pos)
				return false;
			f = key >> 3 <= UINT32_MAX ?
			    protobuf_c_message_descriptor_get_field(desc,
				(unsigned)(key >> 3)) : NULL;
			if (f != NULL && f->type == PROTOBUF_C_TYPE_STRING &&
			    memchr(buf + pos, '\0', n) != NULL)
				return false;
			if (f != NULL && f->type == PROTOBUF_C_TYPE_MESSAGE &&
			    !walk(f->descriptor, buf + pos, n, depth + 1))
				return false;
			pos += n;
			break;
		default:
			return false;   /* groups: none of ours has them */
		}
	}
	return true;
}

bool
msc_pb_strings_clean(const ProtobufCMessageDescriptor *desc,
    const uint8_t *buf, size_t len)
{
	return walk(desc, buf, len, 0);
}
