#!/usr/bin/env python3
"""Turns a file into a C source with its bytes: embed.py IN OUT.c OUT.h NAME"""
import sys

src, out_c, out_h, name = sys.argv[1:5]
data = open(src, 'rb').read()
with open(out_h, 'w') as h:
    h.write('/* Generated from %s by edge/embed.py. */\n' % src.split('/')[-1])
    h.write('#ifndef %s_H\n#define %s_H\n#include <stddef.h>\n' % (name.upper(), name.upper()))
    h.write('extern const char %s[];\nextern const size_t %s_len;\n#endif\n' % (name, name))
with open(out_c, 'w') as c:
    c.write('#include <stddef.h>\n')
    c.write('const char %s[] = {\n' % name)
    for i in range(0, len(data), 16):
        c.write('  ' + ', '.join('(char)0x%02x' % b for b in data[i:i + 16]) + ',\n')
    c.write('  0x00 };\nconst size_t %s_len = %d;\n' % (name, len(data)))
