/*
 * msc_tar.h - the tar stream computer_upload and computer_download carry
 * (issue 29): POSIX pax/ustar headers written and read, with no other
 * dependency than libc (the exec helper, a static program, compiles it
 * in as the edge links it).
 *
 * A stream is a run of entries (a file, a folder, a symlink), each a
 * header block (after a pax block when a name, a link or the size do not
 * fit ustar's fields) and the file's bytes padded to 512. Two private pax
 * keywords let one file travel in pieces, each piece a stream of its own:
 * MSC.offset (where this piece's bytes go in a file an earlier piece
 * made) and MSC.final (a folder's mode, set after its content). Readers
 * that do not know them (tar(1)) ignore them.
 */
#ifndef MSC_TAR_H
#define MSC_TAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MSC_TAR_BLOCK 512
#define MSC_TAR_NAME_MAX 4095
/* The most a header (a pax block with two long names, and the ustar
 * block) takes. */
#define MSC_TAR_HEADER_MAX (3 * MSC_TAR_BLOCK + 2 * MSC_TAR_NAME_MAX + 256)

enum msc_tar_type {
	MSC_TAR_FILE = '0',
	MSC_TAR_SYMLINK = '2',
	MSC_TAR_DIR = '5',
};

struct msc_tar_entry {
	char name[MSC_TAR_NAME_MAX + 1];        /* "." the top, "a/b" below */
	char link[MSC_TAR_NAME_MAX + 1];        /* a symlink's target */
	char type;                              /* enum msc_tar_type */
	unsigned mode;                          /* permission bits (07777) */
	uint64_t size;                          /* this piece's bytes */
	int64_t mtime;                          /* seconds */
	uint64_t offset;                        /* MSC.offset, 0: a new file */
	bool final;                             /* MSC.final */
};

/* Writes e's header into out (MSC_TAR_HEADER_MAX bytes); its length. */
size_t msc_tar_header(const struct msc_tar_entry *e, uint8_t *out);
/* The zeros that pad n bytes of a file to a block. */
size_t msc_tar_pad(uint64_t n);

/* What a reader calls: each returns 0, or a negative errno that stops it. */
struct msc_tar_cb {
	int (*entry)(void *arg, const struct msc_tar_entry *e);
	int (*data)(void *arg, const uint8_t *p, size_t n);
	int (*done)(void *arg, const struct msc_tar_entry *e); /* its end */
};

struct msc_tar_rd {
	struct msc_tar_entry e;
	uint8_t blk[MSC_TAR_BLOCK];
	size_t have;                    /* bytes in blk */
	uint64_t left;                  /* the entry's bytes to come */
	uint64_t pad;                   /* then the padding */
	bool in_pax;                    /* the bytes are a pax block's */
	char *pax;                      /* owned; the records */
	size_t pax_len, pax_size;
	bool pax_pending;               /* the next header takes them */
	int zeros;                      /* zero blocks in a row */
	bool end;                       /* the end-of-archive was read */
};

void msc_tar_rd_init(struct msc_tar_rd *r);
void msc_tar_rd_fini(struct msc_tar_rd *r);
/*
 * Feeds p[0..n): the callbacks for what completes. 0, -EBADMSG on a
 * stream that is not tar (a bad checksum, a bad number, a name too long
 * or with a NUL), -E2BIG a pax block over 64 KiB, or a callback's error.
 * Bytes after the end-of-archive are ignored.
 */
int msc_tar_feed(struct msc_tar_rd *r, const uint8_t *p, size_t n,
    const struct msc_tar_cb *cb, void *arg);
/* Whether the stream stopped cleanly: at the end-of-archive, or (when
 * `trailer_optional`) between entries. */
bool msc_tar_rd_complete(const struct msc_tar_rd *r, bool trailer_optional);

/*
 * Whether a member name is one a reader may create below its top: "."
 * or relative, no empty, "." or ".." part, no NUL, at most
 * MSC_TAR_NAME_MAX bytes.
 */
bool msc_tar_name_ok(const char *name);

#endif /* MSC_TAR_H */
