/* bwk_begin.c - linked just before BWK awk's objects (wasm only): marks
 * where their variables begin (bwk_shim.h puts them in bwk_data/bwk_bss). */
#pragma clang section bss="bwk_bss" data="bwk_data"
char bwk_bss_begin[1];
char bwk_data_begin[1] = { 1 };
