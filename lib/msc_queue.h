/*
 * msc_queue.h - an intrusive FIFO: a struct msc_qnode inside each item
 * links it, so queuing allocates nothing and cannot fail. Not
 * thread-safe: the owner locks. The queue borrows its items; an item is
 * on one queue at a time.
 */
#ifndef MSC_QUEUE_H
#define MSC_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

struct msc_qnode {
	struct msc_qnode *next;
};

struct msc_queue {
	struct msc_qnode *head, *tail;
};

#define MSC_QUEUE_INIT { NULL, NULL }

/* The item of type `type` whose member `member` is node n (not NULL). */
#define msc_queue_item(n, type, member)                                     \
	((type *)(void *)((char *)(n) - offsetof(type, member)))

void msc_queue_init(struct msc_queue *q);
bool msc_queue_empty(const struct msc_queue *q);
/* Appends n at the tail. */
void msc_queue_push(struct msc_queue *q, struct msc_qnode *n);
/* Removes and returns the head; NULL when empty. */
struct msc_qnode *msc_queue_pop(struct msc_queue *q);
/* Appends every node of src, in order, to dst; src is left empty. */
void msc_queue_take_all(struct msc_queue *dst, struct msc_queue *src);

#endif /* MSC_QUEUE_H */
