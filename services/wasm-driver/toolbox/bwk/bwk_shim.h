/*
 * bwk_shim.h - included ahead of every source file of BWK awk
 * (original-awk, third_party/; see ../README.md), never by our own code.
 *
 * The awk runs inside the toolbox process, once or many times, so:
 * - stdin/stdout/stderr are the applet's streams (struct tb_io);
 * - malloc and friends keep a list of what the run allocated, freed when
 *   the run ends (awk frees little itself);
 * - exit() ends the run, not the process (bwk_throw, see bwk.c);
 * - system() and popen() go through the in-process shell (no fork);
 * - under WASI its variables live between markers (bwk_begin.c,
 *   bwk_end.c) so that bwk.c can put them back as they were before a
 *   run.
 */
#ifndef BWK_SHIM_H
#define BWK_SHIM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern FILE *bwk_stdin, *bwk_stdout, *bwk_stderr;
#undef stdin
#undef stdout
#undef stderr
#define stdin	bwk_stdin
#define stdout	bwk_stdout
#define stderr	bwk_stderr

void *bwk_malloc(size_t n);
void *bwk_calloc(size_t n, size_t size);
void *bwk_realloc(void *p, size_t n);
void bwk_free(void *p);
char *bwk_strdup(const char *s);
#define malloc	bwk_malloc
#define calloc	bwk_calloc
#define realloc	bwk_realloc
#define free	bwk_free
#define strdup	bwk_strdup

/* Not _Noreturn: under WASI it returns while the stack unwinds (bwk.c). */
void bwk_exit(int status);
#define exit	bwk_exit

FILE *bwk_fopen(const char *path, const char *mode);
FILE *bwk_popen(const char *cmd, const char *mode);
int bwk_pclose(FILE *f);
int bwk_system(const char *cmd);
int bwk_fclose(FILE *f);
#define fopen	bwk_fopen
#define popen	bwk_popen
#define pclose	bwk_pclose
#define system	bwk_system
#define fclose	bwk_fclose

/* f (opened otherwise) is closed when the run ends unless closed before;
 * f, or NULL when out of memory (f is closed then). */
FILE *bwk_track_stream(FILE *f);
/* The same with a buffer of 64 KiB (for a file read line by line). */
FILE *bwk_track_stream_buffered(FILE *f);

/* The awk statement "exit": unwinds to the innermost bwk_try. */
void bwk_throw_exit(void);
/*
 * Runs fn(arg); 1 when an awk "exit" ended it early, else 0. An exit()
 * (bwk_exit) met on the way goes on unwinding to the applet: bwk_try_
 * stops every unwinding, bwk_rethrow starts it again when it was an exit().
 */
int bwk_try_(void (*fn)(void *), void *arg);
int bwk_rethrow(int caught);
#define bwk_try(fn, arg)	bwk_rethrow(bwk_try_((fn), (arg)))

#define main	bwk_main

#ifdef __wasm__
#pragma clang section bss="bwk_bss" data="bwk_data"
#endif

#endif /* BWK_SHIM_H */
