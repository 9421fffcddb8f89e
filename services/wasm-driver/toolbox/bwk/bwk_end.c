/* bwk_end.c - linked just after BWK awk's objects (wasm only): marks
 * where their variables end. */
#pragma clang section bss="bwk_bss" data="bwk_data"
char bwk_bss_end[1];
char bwk_data_end[1] = { 1 };
