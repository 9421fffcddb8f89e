/* sed.h - the sed applet's script representation (sed_parse.c, sed.c). */
#ifndef TB_SED_H
#define TB_SED_H

#include "../toolbox.h"

enum sed_atype { A_NONE, A_LINE, A_LAST, A_RE, A_STEP, A_REL, A_MULT };

struct sed_addr {
	enum sed_atype	 type;
	long		 n, step;
	regex_t		*re;	/* NULL with A_RE: the last regex used */
};

struct sed_cmd {
	struct sed_addr	 a1, a2;
	bool		 negate;
	char		 cmd;
	bool		 active;	/* inside an address range */
	long		 range_end;
	/* s */
	regex_t		*re;
	char		*repl;
	bool		 global, print;
	long		 nth;
	/* a i c : b t T r w, y, q */
	char		*text;
	FILE		*wfile;
	int		 jump;		/* { -> matching }, b/t/T -> label */
	unsigned char	 ymap[256];
	long		 code;
};

struct sed_script {
	struct sed_cmd	*cmds;
	int		 n;
	regex_t		**regs;	/* every compiled regex, for freeing */
	int		 nregs;
	FILE		**files;	/* w files */
	char		**fnames;
	int		 nfiles;
	bool		 ere;
	bool		 quiet_hint;	/* "#n" first line */
};

/* The state of one sed run. */
struct sed {
	struct tb_io		*io;
	struct sed_script	 s;
	bool			 quiet, separate, inplace;
	/* input */
	char			**files;
	int			 nfiles, fi;
	FILE			*in;
	const char		*inname;
	struct tb_buf		 next;		/* lookahead line */
	bool			 have_next, next_nl;
	long			 lineno;
	/* state */
	struct tb_buf		 ps, hs;
	bool			 ps_nl;		/* pattern space had a newline */
	bool			 replaced;	/* for t/T */
	regex_t			*last_re;
	struct tb_buf		 append;	/* a and r output after the cycle */
	FILE			*out;
	bool			 quit;
	int			 rc;
};

/* sed.c */
/* Opens the next input operand; false when there is none. */
bool sed_open_next(struct sed *sd);
/* Loads the lookahead line (crossing into the next files if asked). */
void sed_fill_next(struct sed *sd, bool cross_files);
/* Runs the script over the input until it ends or q. */
void sed_run_stream(struct sed *sd);

/* sed_parse.c */
/* Parses script text; 0 or -1 (message printed). */
int sed_parse(struct tb_io *io, struct sed_script *s, const char *text);
void sed_script_free(struct sed_script *s);

#endif /* TB_SED_H */
