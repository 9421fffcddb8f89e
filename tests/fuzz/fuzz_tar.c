/*
 * fuzz_tar.c - the tar reader (lib/msc_tar.c) with hostile streams: what
 * a computer's helper sends the edge on computer_download, and what the
 * edge's batch is to the computer's untar. The first byte picks the size
 * of the pieces the rest is fed in (1 to 256 bytes, or all at once).
 * Checks that every entry's name and link are NUL-ended within their
 * bounds and that no entry gets more data than its size. Its replay
 * build (fuzz_replay.c) runs the files named on the command line.
 */
/* the checks are the fuzzer's oracle: kept in a release build too */
#undef NDEBUG
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_tar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	uint64_t want, got;
	unsigned sum;
};

static int
on_entry(void *arg, const struct msc_tar_entry *e)
{
	struct seen *s = arg;

	assert(memchr(e->name, '\0', sizeof(e->name)) != NULL);
	assert(memchr(e->link, '\0', sizeof(e->link)) != NULL);
	assert(e->mode <= 07777);
	s->want = e->size;
	s->got = 0;
	(void)msc_tar_name_ok(e->name);
	return 0;
}

static int
on_data(void *arg, const uint8_t *p, size_t n)
{
	struct seen *s = arg;

	s->got += n;
	assert(s->got <= s->want);
	/* every byte read, so a read past the input shows */
	for (size_t i = 0; i < n; i++)
		s->sum += p[i];
	return 0;
}

static int
on_done(void *arg, const struct msc_tar_entry *e)
{
	struct seen *s = arg;

	(void)e;
	assert(s->got == 0 || s->got == s->want);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct msc_tar_cb cb = { on_entry, on_data, on_done };
	struct msc_tar_rd rd;
	struct seen s = { 0 };
	size_t piece;
	uint8_t *copy;

	if (size < 1)
		return 0;
	piece = data[0] == 0 ? size : data[0];
	data++;
	size--;
	/* a copy of exactly the input: reads past it are ASan's to see */
	if ((copy = malloc(size ? size : 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	msc_tar_rd_init(&rd);
	for (size_t i = 0; i < size; i += piece)
		if (msc_tar_feed(&rd, copy + i, size - i < piece ? size - i :
		    piece, &cb, &s) != 0)
			break;
	(void)msc_tar_rd_complete(&rd, false);
	msc_tar_rd_fini(&rd);
	free(copy);
	return 0;
}
