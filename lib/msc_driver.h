/*
 * msc_driver.h - the msc.v1.Driver service that every backend shares: the
 * dispatch table, jobs on a bounded worker pool (backend calls block), and
 * per-computer lanes: create, attach, exec, restart and reset run one at a
 * time per computer and in parallel across computers; stop, delete (which
 * end whatever runs) and list go straight to the pool.
 *
 * A backend provides blocking operations that return 0 or a negative
 * errno with a one-line message in err (the message the agent sees).
 */
#ifndef MSC_DRIVER_H
#define MSC_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

#include "driver.pb-c.h"
#include "msc_rpc.h"

#define MSC_DRIVER_ERRLEN 1024

struct msc_driver;

struct msc_driver_ops {
	const char *name;       /* "docker-driver", in overload messages */
	int (*create)(void *be, const char *id, bool temporary,
	    Msc__V1__Computer *out, char *err, size_t errlen);
	int (*attach)(void *be, const char *id, Msc__V1__Computer *out,
	    char *err, size_t errlen);
	int (*restart)(void *be, const char *id, Msc__V1__Computer *out,
	    char *err, size_t errlen);
	int (*reset)(void *be, const char *id, Msc__V1__Computer *out,
	    char *err, size_t errlen);
	/* remove: Delete (gone for good; -ENOENT when absent); else Stop. */
	int (*stop)(void *be, const char *id, bool remove, char *err,
	    size_t errlen);
	int (*list)(void *be, Msc__V1__ComputerList *out, char *err,
	    size_t errlen);
	/* out->stdout/stderr data are malloc'd; the skeleton frees them. */
	int (*exec)(void *be, const Msc__V1__ExecRequest *req,
	    Msc__V1__ExecResult *out, char *err, size_t errlen);
	/* Free what create/attach/restart/reset and list put in out. */
	void (*computer_fini)(Msc__V1__Computer *c);
	void (*list_fini)(Msc__V1__ComputerList *l);
	/* Optional: the status code of an error (else msc_driver_code). */
	Msc__V1__Code (*code)(int rv);
};

/*
 * Frees the malloc'd string fields of c (leaving protobuf-c's shared empty
 * string alone) and resets it; and the same for every computer of l, with
 * the array. Backends use these as computer_fini and list_fini.
 */
void msc_computer_fini(Msc__V1__Computer *c);
void msc_computer_list_fini(Msc__V1__ComputerList *l);

/* The usual mapping of a negative errno to a status code. */
Msc__V1__Code msc_driver_code(int rv);

/* The same for a cloud provider, whose I/O errors (-EIO) are outages. */
Msc__V1__Code msc_driver_code_cloud(int rv);

/*
 * Serves msc.v1.Driver on url with `workers` pool threads. `ops` and
 * `backend` are borrowed and must outlive the service.
 */
int msc_driver_start(const char *url, const struct msc_driver_ops *ops,
    void *backend, int workers, struct msc_driver **dp);

/*
 * Stops serving and frees. Returns false when a job still runs (a long
 * command): the backend must then stay allocated, as the process ends.
 * Accepts NULL.
 */
bool msc_driver_stop(struct msc_driver *d);

#endif /* MSC_DRIVER_H */
