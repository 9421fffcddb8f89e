/*
 * msc_helper_copy.h - the exec helper's plain-command modes (background
 * processes, issue 28; file tools and copies, issue 29) on a computer
 * that has no helper of ours mounted: a provider's sandbox or VM.
 *
 * The edge asks for them as an Exec of "/.msc-helper --process|--file
 * ...", which a driver whose computers have the helper mounted runs as
 * it is. A driver whose computers have no mount of the helper copies
 * the same static helper binary into the computer on first need (a
 * plain command with the binary on its stdin, into /tmp under a name
 * that carries its digest) and runs the asked mode from there. The
 * state (process folders, logs) lives in the computer as with a mounted
 * helper, so it outlives the call, the connection and the server.
 *
 * A backend whose exec carries only text (stdin and output as JSON
 * strings) sets text_only: stdin then travels as base64, decoded in the
 * computer by base64(1), and the helper's stdout comes back as base64,
 * decoded here, so any bytes pass unchanged (a failure of base64(1) on
 * either side is an error, never a part passed on). Only arguments are
 * passed (argv), never quoted into a shell line. Background processes
 * (--process) are refused there: whether a process outlives such an exec
 * is not known.
 */
#ifndef MSC_HELPER_COPY_H
#define MSC_HELPER_COPY_H

#include <stdbool.h>
#include <stddef.h>

#include "driver.pb-c.h"

/* A driver's own Exec (borrowed request; res filled on 0). */
typedef int (*msc_helper_exec_fn)(void *be, const Msc__V1__ExecRequest *req,
    Msc__V1__ExecResult *res, char *err, size_t errlen);

/*
 * Where this host's helper binary may be, from the including driver's
 * build defines (its meson c_args): MSC_EXEC_HELPER_BUILD, then
 * MSC_EXEC_HELPER_INSTALLED; the environment's MSC_EXEC_HELPER first.
 */
#ifdef MSC_EXEC_HELPER_BUILD
#define MSC_HELPER_COPY_BUILD_PATH MSC_EXEC_HELPER_BUILD
#else
#define MSC_HELPER_COPY_BUILD_PATH NULL
#endif
#ifdef MSC_EXEC_HELPER_INSTALLED
#define MSC_HELPER_COPY_INSTALLED_PATH MSC_EXEC_HELPER_INSTALLED
#else
#define MSC_HELPER_COPY_INSTALLED_PATH NULL
#endif

/* How a driver reaches its computers (a constant it owns). */
struct msc_helper_copy {
	msc_helper_exec_fn exec;
	const char *build_path;      /* MSC_HELPER_COPY_BUILD_PATH */
	const char *installed_path;  /* MSC_HELPER_COPY_INSTALLED_PATH */
	bool text_only;              /* stdin and stdout travel as base64 */
};

/*
 * Runs req through hc->exec: unchanged unless it names the helper
 * (args[0] is "/.msc-helper"), which then runs from its copy in the
 * computer, copied there first when missing. Same contract as exec.
 */
int msc_helper_copy_exec(const struct msc_helper_copy *hc, void *be,
    const Msc__V1__ExecRequest *req, Msc__V1__ExecResult *res, char *err,
    size_t errlen);

/*
 * The background processes running in computer id (for Restart, Reset
 * and Delete: Computer.processes_ended), through the helper's list; a
 * negative errno when not known (-ENOENT: the helper was never copied
 * in, so none were started). Never copies the helper in.
 */
int msc_helper_copy_processes(const struct msc_helper_copy *hc, void *be,
    const char *id);

#endif /* MSC_HELPER_COPY_H */
