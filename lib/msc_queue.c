#include "msc_queue.h"

void
msc_queue_init(struct msc_queue *q)
{
	q->head = q->tail = NULL;
}

bool
msc_queue_empty(const struct msc_queue *q)
{
	return q->head == NULL;
}

void
msc_queue_push(struct msc_queue *q, struct msc_qnode *n)
{
	n->next = NULL;
	if (q->tail != NULL)
		q->tail->next = n;
	else
		q->head = n;
	q->tail = n;
}

struct msc_qnode *
msc_queue_pop(struct msc_queue *q)
{
	struct msc_qnode *n = q->head;

	if (n == NULL)
		return NULL;
	q->head = n->next;
	if (q->head == NULL)
		q->tail = NULL;
	n->next = NULL;
	return n;
}

void
msc_queue_take_all(struct msc_queue *dst, struct msc_queue *src)
{
	if (src->head == NULL)
		return;
	if (dst->tail != NULL)
		dst->tail->next = src->head;
	else
		dst->head = src->head;
	dst->tail = src->tail;
	msc_queue_init(src);
}
