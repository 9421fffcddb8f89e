/* sys/xattr.h for toybox under WASI: see tbx_wasi.h. */
#include "tbx_wasi.h"
