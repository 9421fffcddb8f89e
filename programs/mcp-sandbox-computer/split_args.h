/* split_args.h - the options of one service, out of a server command line. */
#ifndef MSC_SPLIT_ARGS_H
#define MSC_SPLIT_ARGS_H

/* argv[0] is "split-args", argv[1] the program. Returns the exit status. */
int split_args_main(int argc, char **argv);

#endif /* MSC_SPLIT_ARGS_H */
