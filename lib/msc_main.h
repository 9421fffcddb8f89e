/*
 * msc_main.h - what every program's main() does the same way: parse and
 * validate the shared command line, block SIGTERM/SIGINT before threads
 * start, and wait for one of them.
 */
#ifndef MSC_MAIN_H
#define MSC_MAIN_H

#include "msc_cfg.h"

/*
 * Parses argv into cfg with the options of program `prog` (its roles'
 * and its backends'), and validates it; a program that goes on gets the thread
 * that gives the heap's free memory back after a burst (msc_main.c). Returns -1 to go on, or the exit status to
 * exit with (0 after --help, 2 on a parse error, 1 on a validation error).
 */
int msc_main_config(struct msc_cfg *cfg, const struct msc_program *prog,
    int argc, char **argv);

/*
 * Loads the TLS material, then checks every service address of cfg
 * against the transport rules (msc_tls_check_url). Prints the error and
 * returns -1, or returns 0. msc_main_config does it.
 */
int msc_main_check_transport(const struct msc_cfg *cfg);

/*
 * Blocks SIGTERM, SIGINT, SIGPIPE and SIGHUP in this thread and its
 * children (SIGHUP is then ignored, unless waited for below).
 */
void msc_main_block_signals(void);

/* Waits for SIGTERM or SIGINT (blocked beforehand); returns the signal. */
int msc_main_wait_signal(void);
/* The same, and SIGHUP (the HTTP edge re-reads --tokens-file on it). */
int msc_main_wait_signal_or_hup(void);

/*
 * A helper file the program ships: the path in environment variable env
 * when set (NULL unless access(mode) allows it), else the first of the
 * NULL-terminated cands that access(mode) allows, else NULL. Borrowed.
 */
const char *msc_main_find_file(const char *env, int mode,
    const char *const cands[]);

#endif /* MSC_MAIN_H */
