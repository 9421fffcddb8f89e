/* sys/wait.h for BWK awk under WASI (wasi-libc has none): bwk_system()
 * returns the shell's status as waitpid() would encode an exit. */
#ifndef BWK_SYS_WAIT_H
#define BWK_SYS_WAIT_H
#define WIFEXITED(s)	1
#define WEXITSTATUS(s)	(((s) >> 8) & 0xff)
#define WIFSIGNALED(s)	0
#define WTERMSIG(s)	0
#endif
