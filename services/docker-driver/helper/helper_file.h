/*
 * helper_file.h - the file commands of the exec helper (issue 29), run as
 * a plain command in the computer by the file tools:
 *
 *   msc-exec-helper --file read PATH OFFSET LIMIT BUDGET NUMBERS
 *   msc-exec-helper --file write PATH MODE MAKE_DIRS      (content on stdin)
 *   msc-exec-helper --file edit PATH OLD_LEN ALL SHA256   (old, new on stdin)
 *   msc-exec-helper --file untar DEST MAKE_DIRS          (a tar on stdin)
 *   msc-exec-helper --file tar SRC SKIP LEN              (a tar on stdout)
 *
 * each printing one JSON object on stdout (exit 0) or one line on stderr
 * (exit 2). helper_file_path.c resolves and guards paths; helper_file.c
 * dispatches and reads; helper_file_write.c writes and edits;
 * helper_file_text.c holds the pure parts (the text window, binary
 * detection, base64).
 */
#ifndef MSC_HELPER_FILE_H
#define MSC_HELPER_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "helper_process.h"

/* Files hashed whole and scanned for a line offset up to this size. */
#define HXF_SCAN_MAX		(256LL * 1024 * 1024)
/* The largest file file_edit reads into memory. */
#define HXF_EDIT_MAX		(32LL * 1024 * 1024)
/* The most stdin file_write and file_edit take (the session's bound is
 * 2 MiB; a little more for file_edit's two strings). */
#define HXF_STDIN_MAX		(4LL * 1024 * 1024)
/* What the binary test looks at. */
#define HXF_SNIFF		8192

/*
 * Where the file commands resolve paths. By default (fd < 0) the process's
 * own "/" and working folder: the helper in its container. The WASM
 * runner (services/wasm-driver/host/runner_files.c) names a root instead,
 * a host folder that is the computer's "/": every folder, file and
 * symlink on a path is then resolved from it with openat2() and
 * RESOLVE_IN_ROOT (the kernel treats it as "/" for "..", absolute paths
 * and symlinks), so no path or symlink leads out of it. `charge`, when
 * set, asks the computer's disk quota for bytes about to be stored:
 * 0, or -ENOSPC when they do not fit.
 */
struct hxf_root {
	int fd;                 /* the root folder, or -1 */
	const char *cwd;        /* the guest's working folder (absolute) */
	const char *host;       /* the root's real host path, or NULL */
	int (*charge)(void *arg, uint64_t bytes);
	void *arg;
};
extern struct hxf_root hxf_root;

/* What one new file or folder costs against a quota, at least. */
#define HXF_ENTRY_BYTES		4096

/* A path resolved to its folder (an open descriptor) and its last name. */
struct hxf_target {
	int dirfd;
	char base[256];
	char shown[4096];       /* the path as the answer names it */
	bool exists;
	struct stat st;         /* the file's (not followed), when it exists */
};

/*
 * Resolves `path` (relative: to the working folder) to its folder and
 * name; with make_dirs, makes missing folders (0755). Follows symlinks,
 * refusing any folder or file of /proc, /sys or the helper's own /.msc on
 * the way; refuses a last name that is not a regular file unless `any`.
 * 0, or HX_EXIT_ERR with the failure line written.
 */
int hxf_resolve(const char *path, bool make_dirs, struct hxf_target *t);
/* Whether open descriptor fd (stat st) is one the file tools refuse; the
 * reason, or NULL. */
const char *hxf_forbidden(int fd, const struct stat *st);
/* Why a non-regular file is refused ("a folder", "a fifo", ...). */
const char *hxf_kind(mode_t mode);

int hxf_write(int argc, char **argv);
int hxf_edit(int argc, char **argv);
/* helper_file_tar.c: computer_upload's and computer_download's side. */
int hxf_untar(int argc, char **argv);
int hxf_tar(int argc, char **argv);
/* Opens `name` below folder `top`, nothing followed (openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS); -1 with errno set. */
int hxf_beneath(int top, const char *name, int flags, mode_t mode);
/* Writes all of p[0..n) to fd: 0 or -errno. */
int hxf_write_all(int fd, const uint8_t *p, size_t n);

/* ---- helper_file_text.c: pure parts ------------------------------------- */

/* Whether the first bytes of a file (at most HXF_SNIFF) look binary: a NUL,
 * or more than a tenth of bytes neither UTF-8 nor usual text controls. */
bool hxf_looks_binary(const uint8_t *p, size_t n);
/* A mime type for binary content by its first bytes. */
const char *hxf_mime(const uint8_t *p, size_t n);
/* The length of a valid UTF-8 sequence at p (n bytes left), or 0. An
 * incomplete sequence at the end counts as valid when `partial_ok`. */
size_t hxf_utf8_len(const uint8_t *p, size_t n, bool partial_ok);

struct hxf_text {
	long long lines;        /* whole lines emitted */
	bool cut;               /* the first line alone passed the budget */
	bool invalid;           /* bytes not UTF-8 shown as U+FFFD */
	size_t used;            /* raw bytes consumed */
};

/*
 * Emits raw[0..n) as one JSON string (with its quotes) of whole lines, at
 * most `budget` bytes in all, invalid UTF-8 as U+FFFD, each line after
 * its number (cat -n style, from first_line) when `numbers`. When the
 * first line alone does not fit, its head is emitted (r->cut).
 */
void hxf_emit_text(struct out *o, const uint8_t *raw, size_t n,
    long long first_line, bool numbers, size_t budget, struct hxf_text *r);
/* p[0..n) in base64 (standard alphabet, padded) as a JSON string. */
void hxf_out_base64(struct out *o, const uint8_t *p, size_t n);

#endif /* MSC_HELPER_FILE_H */
