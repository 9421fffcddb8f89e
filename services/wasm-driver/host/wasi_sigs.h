/*
 * wasi_sigs.h - the wasi_snapshot_preview1 functions this host provides,
 * with their wasm signatures: one letter per parameter ('i' = i32,
 * 'I' = i64) and the result ("i" = errno as i32, "" = none). msc-wasm-fuel
 * refuses a module that imports anything else, or one of these with
 * another signature, so a compiled module always calls the host with the
 * C signature the host defines.
 */
#ifndef WASI_SIGS_H
#define WASI_SIGS_H

struct wasi_sig {
	const char *name;
	const char *params;
	const char *result;
};

static const struct wasi_sig wasi_sigs[] = {
	{ "args_get", "ii", "i" },
	{ "args_sizes_get", "ii", "i" },
	{ "environ_get", "ii", "i" },
	{ "environ_sizes_get", "ii", "i" },
	{ "clock_res_get", "ii", "i" },
	{ "clock_time_get", "iIi", "i" },
	{ "fd_advise", "iIIi", "i" },
	{ "fd_allocate", "iII", "i" },
	{ "fd_close", "i", "i" },
	{ "fd_datasync", "i", "i" },
	{ "fd_fdstat_get", "ii", "i" },
	{ "fd_fdstat_set_flags", "ii", "i" },
	{ "fd_fdstat_set_rights", "iII", "i" },
	{ "fd_filestat_get", "ii", "i" },
	{ "fd_filestat_set_size", "iI", "i" },
	{ "fd_filestat_set_times", "iIIi", "i" },
	{ "fd_pread", "iiiIi", "i" },
	{ "fd_prestat_get", "ii", "i" },
	{ "fd_prestat_dir_name", "iii", "i" },
	{ "fd_pwrite", "iiiIi", "i" },
	{ "fd_read", "iiii", "i" },
	{ "fd_readdir", "iiiIi", "i" },
	{ "fd_renumber", "ii", "i" },
	{ "fd_seek", "iIii", "i" },
	{ "fd_sync", "i", "i" },
	{ "fd_tell", "ii", "i" },
	{ "fd_write", "iiii", "i" },
	{ "path_create_directory", "iii", "i" },
	{ "path_filestat_get", "iiiii", "i" },
	{ "path_filestat_set_times", "iiiiIIi", "i" },
	{ "path_link", "iiiiiii", "i" },
	{ "path_open", "iiiiiIIii", "i" },
	{ "path_readlink", "iiiiii", "i" },
	{ "path_remove_directory", "iii", "i" },
	{ "path_rename", "iiiiii", "i" },
	{ "path_symlink", "iiiii", "i" },
	{ "path_unlink_file", "iii", "i" },
	{ "poll_oneoff", "iiii", "i" },
	{ "proc_exit", "i", "" },
	{ "proc_raise", "i", "i" },
	{ "sched_yield", "", "i" },
	{ "random_get", "ii", "i" },
	{ "sock_accept", "iii", "i" },
	{ "sock_recv", "iiiiii", "i" },
	{ "sock_send", "iiiii", "i" },
	{ "sock_shutdown", "ii", "i" },
	{ 0, 0, 0 }
};

#endif /* WASI_SIGS_H */
