/*
 * fake_driver.h - a scriptable msc.v1.Driver service for unit tests,
 * served over the wire (msc_rpc) on any URL, typically inproc://. It keeps
 * its computers in memory (Create adds, Attach finds, Stop removes a
 * temporary one and idles a permanent one, Delete removes), counts every
 * call per method, and can fail the next calls of a method with a code,
 * or hold them until the test lets them go. It can go down (no listener
 * on its URL) and come back with the same computers.
 */
#ifndef FAKE_DRIVER_H
#define FAKE_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

#include "envelope.pb-c.h"

enum fake_method {
	FD_CREATE,
	FD_ATTACH,
	FD_EXEC,
	FD_STOP,
	FD_DELETE,
	FD_RESTART,
	FD_RESET,
	FD_LIST,
	FD_N_METHODS
};

struct fake_driver;

/* Serves on url; `id` is the identity it puts in Computer.driver. */
int fake_driver_start(const char *url, const char *id,
    struct fake_driver **fdp);
/* Answers every held call, stops serving, frees. Accepts NULL. */
void fake_driver_free(struct fake_driver *fd);

/* Stops listening (held calls are answered first); keeps the computers. */
void fake_driver_down(struct fake_driver *fd);
/* Listens again on the same URL; 0 or a negative errno. */
int fake_driver_up(struct fake_driver *fd);

/* Adds a computer as if made earlier (another run, another session). */
void fake_driver_add(struct fake_driver *fd, const char *id, bool temporary);
/* Whether the driver has computer id. */
bool fake_driver_has(struct fake_driver *fd, const char *id);
size_t fake_driver_n_computers(struct fake_driver *fd);

/* Calls of method m received so far (held ones included). */
int fake_driver_calls(struct fake_driver *fd, enum fake_method m);
/* Calls of method m naming computer id (Create, Attach, Exec, Stop...). */
int fake_driver_calls_for(struct fake_driver *fd, enum fake_method m,
    const char *id);
/* Waits until calls of m reach n; false after timeout_ms. */
bool fake_driver_wait_calls(struct fake_driver *fd, enum fake_method m,
    int n, int timeout_ms);
/* The time the last call of m had left when it came (its caller's
 * deadline as the envelope carried it, or the 30 s of one without). */
int fake_driver_last_left_ms(struct fake_driver *fd, enum fake_method m);
/* Copies the owner field of the last Exec into buf. */
void fake_driver_last_owner(struct fake_driver *fd, char *buf, size_t len);

/* The next n calls of m fail with code (checked before holding). */
void fake_driver_fail_next(struct fake_driver *fd, enum fake_method m,
    int n, Msc__V1__Code code);
/* From now on calls of m wait (held) until fake_driver_let_go(). */
void fake_driver_hold(struct fake_driver *fd, enum fake_method m);
/* Calls of m held right now. */
int fake_driver_held(struct fake_driver *fd, enum fake_method m);
/* Waits until n calls of m are held; false after timeout_ms. */
bool fake_driver_wait_held(struct fake_driver *fd, enum fake_method m, int n,
    int timeout_ms);
/* Stops holding m and answers the held calls as usual. */
void fake_driver_let_go(struct fake_driver *fd, enum fake_method m);
/* Stops holding every method and answers every held call. */
void fake_driver_let_go_all(struct fake_driver *fd);
/* Stops holding m and fails the held calls with code. */
void fake_driver_let_go_fail(struct fake_driver *fd, enum fake_method m,
    Msc__V1__Code code);

#endif /* FAKE_DRIVER_H */
