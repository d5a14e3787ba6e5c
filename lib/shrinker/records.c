/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/shrinker/records.c - shrinker records: allocation, recycling, frees.
 *
 * A released record may still be held by a reader that found it in the list
 * or the id table, so it is freed by call_srcu(). Released records are
 * handed over in batches of FREE_BATCH: one callback (and at most one
 * wake-up of the SRCU helper) per batch instead of per unregister; at most
 * FREE_BATCH - 1 records wait for a later release, for
 * ksync_synchronize_shrinkers() or for ksync_shrinker_registry_destroy().
 * Records that went through their grace period are kept (about up to
 * RECORD_CACHE_MAX) for the next registration: mount/umount storms then
 * neither hit malloc's slow paths nor fault in pages that free() trimmed.
 *
 * The cache takes no lock on the callback's side: the SRCU callback that
 * fills it must never wait for reg->mutex, because writers holding the
 * mutex call ksync_call_srcu(), which may wait until that callback's helper
 * thread has worked the queue down (a deadlock). So the callback pushes its
 * batch onto a lock-free stack (record_cache: a cmpxchg per batch), and
 * registrations, one at a time under reg->mutex, take the whole stack at
 * once (an exchange) onto a list of their own (record_mine) and pop from
 * it with plain accesses. One consumer at a time makes the stack free of
 * ABA: between its load of the head and its exchange only pushes happen.
 * A registration thus allocates its record inside the critical section it
 * needs anyway (the id), with no lock of its own.
 *
 * Warm reuse. At idle (no thread but the caller has read sections of the
 * registry's domain), a grace period costs a cmpxchg:
 * ksync_try_synchronize_srcu() completes one at once, or says "a reader may
 * be inside" and does nothing. A release tries it after the record left the
 * list and the id table (in the same critical section, before the try's
 * fully ordered cmpxchg): on success no reader can hold the record, nor find
 * it again, so it goes onto record_warm, which the next registration takes
 * first (last in, first out): the line it writes is still in cache, where a
 * record that waited for its batch's grace period is cold. The try never
 * waits, so it is allowed under reg->mutex; on failure the record joins the
 * batch, as before. The bound (RECORD_WARM_MAX) keeps a burst of idle
 * unregisters from holding memory; past it, records take the batch path.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "../common/name_format.h"

#define RECORD_CACHE_MAX 4096
#define FREE_BATCH 256
#define RECORD_WARM_MAX 64

/* call_srcu callback: recycle or free a batch of records chained through free_next. */
static void free_rcu_record_batch(struct ksync_rcu_head *head)
{
	struct ksync_shrinker_record *rec = ksync_container_of(head, struct ksync_shrinker_record, rcu);
	struct ksync_shrinker_registry *reg = rec->reg;

	/* No reader can hold these any more: keep them for reuse, up to the bound. */
	if (ksync_atomic_read(&reg->record_cache_len) < RECORD_CACHE_MAX) {
		struct ksync_shrinker_record *last = rec;
		int n = 1;

		rec->magic = 0;
		for (; last->free_next; last = last->free_next, n++)
			last->free_next->magic = 0;
		ksync_atomic_add(n, &reg->record_cache_len);
		void *head = ksync_ptr_load(&reg->record_cache);
		do
			last->free_next = (struct ksync_shrinker_record *)head;
		/* Fully ordered: the records' stores before the push; pairs with the take's exchange. */
		while (!ksync_ptr_try_cmpxchg(&reg->record_cache, &head, rec));
		return;
	}
	while (rec) {
		struct ksync_shrinker_record *next = rec->free_next;

		rec->magic = 0;
		free(rec);
		rec = next;
	}
}

/* Detach the pending batch (under reg->mutex); queue it with queue_batch(). */
static struct ksync_shrinker_record *take_batch_locked(struct ksync_shrinker_registry *reg)
{
	struct ksync_shrinker_record *batch = reg->free_batch;

	reg->free_batch = NULL;
	reg->free_batch_len = 0;
	return batch;
}

static void queue_batch(struct ksync_shrinker_registry *reg, struct ksync_shrinker_record *batch)
{
	if (batch)
		ksync_call_srcu(&reg->srcu, &batch->rcu, free_rcu_record_batch);
}

/* Queue the pending batch now (synchronize, registry destroy). */
void ksync__shr_records_flush_locked_batch(struct ksync_shrinker_registry *reg)
{
	ksync__mutex_lock(&reg->mutex);
	struct ksync_shrinker_record *batch = take_batch_locked(reg);
	pthread_mutex_unlock(&reg->mutex);
	queue_batch(reg, batch);
}

/* After the registry's last grace period: free the cache. */
void ksync__shr_records_destroy(struct ksync_shrinker_registry *reg)
{
	struct ksync_shrinker_record *lists[3] = {
		(struct ksync_shrinker_record *)ksync_ptr_xchg(&reg->record_cache, NULL),
		reg->record_mine,
		reg->record_warm,
	};

	reg->record_mine = NULL;
	reg->record_warm = NULL;
	reg->record_warm_len = 0;
	for (int i = 0; i < 3; i++) {
		while (lists[i]) {
			struct ksync_shrinker_record *r = lists[i];

			lists[i] = r->free_next;
			free(r);
		}
	}
}

/* A zeroed record: the last warm one, else from the cache, else malloc. Under reg->mutex. */
struct ksync_shrinker_record *ksync__shr_record_alloc_locked(struct ksync_shrinker_registry *reg)
{
	struct ksync_shrinker_record *rec = reg->record_warm;

	if (rec) {
		reg->record_warm = rec->free_next;
		reg->record_warm_len--;
		memset(rec, 0, reg->record_size);
		return rec;
	}
	rec = reg->record_mine;
	if (!rec && ksync_ptr_load(&reg->record_cache)) {
		/*
		 * Take the whole stack (fully ordered: pairs with the pushes'
		 * cmpxchg). The count starts again from zero rather than by a
		 * walk of the list (a cache miss per record): records taken but
		 * not used yet and a push between its count and its cmpxchg go
		 * uncounted, so the bound is about twice RECORD_CACHE_MAX.
		 */
		rec = (struct ksync_shrinker_record *)ksync_ptr_xchg(&reg->record_cache, NULL);
		ksync_atomic_set(&reg->record_cache_len, 0);
	}
	if (rec) {
		reg->record_mine = rec->free_next;
		memset(rec, 0, reg->record_size);
	} else {
		rec = KSYNC__ALLOC(calloc(1, reg->record_size));
	}
	return rec;
}

/*
 * Retire @rec's id and put it on the pending batch (under reg->mutex).
 * Return: a full batch for ksync__shr_records_queue() after the unlock, or NULL.
 */
struct ksync_shrinker_record *ksync__shr_record_release_locked(struct ksync_shrinker_record *rec)
{
	struct ksync_shrinker_registry *reg = rec->reg;

	if (rec->id >= 0)
		id_free_locked(reg, rec->id);
	reg->nr_records_alive--;
	yield_point(KSYNC_SHRINKER_YP_BEFORE_FREE);
	/*
	 * Unlinked from the list and the id table above (by the caller, in
	 * this critical section): if no reader can be inside now, none holds
	 * @rec nor can find it again. See "Warm reuse".
	 */
	if (reg->record_warm_len < RECORD_WARM_MAX &&
	    (KSYNC_PLANT(RECORD_REUSE_NO_GP) /* the regression test's plant: no grace period */ ||
	     ksync_try_synchronize_srcu(&reg->srcu))) {
		rec->magic = 0;
		rec->free_next = reg->record_warm;
		reg->record_warm = rec;
		reg->record_warm_len++;
		return NULL;
	}
	rec->free_next = reg->free_batch;
	reg->free_batch = rec;
	if (++reg->free_batch_len >= FREE_BATCH)
		return take_batch_locked(reg);
	return NULL;
}

/* Queue a batch from ksync__shr_record_release_locked() (mutex not held). */
void ksync__shr_records_queue(struct ksync_shrinker_registry *reg, struct ksync_shrinker_record *batch)
{
	queue_batch(reg, batch);
}

/* Retire @rec's id and global counters and queue its memory (mutex not held). */
void ksync__shr_record_release(struct ksync_shrinker_record *rec)
{
	struct ksync_shrinker_registry *reg = rec->reg;

	ksync__mutex_lock(&reg->mutex);
	/*
	 * Unregistered records were unlinked and retired at unregister;
	 * prepared ones (linked since prepare, refcount 0: no walker holds
	 * them) are unlinked and retired here.
	 */
	if (ksync_atomic_read(&rec->state) == RECORD_PREPARED) {
		ksync_list_del_rcu(&rec->list);
		retire_deferred_locked(rec);
	}
	struct ksync_shrinker_record *batch = ksync__shr_record_release_locked(rec);
	pthread_mutex_unlock(&reg->mutex);
	queue_batch(reg, batch);
}

/* ------------------------------------------------------------------------ */
/* Names                                                                    */

/*
 * A shrinker's name is for the debug interface only (as the kernel's, which
 * exists only with CONFIG_SHRINKER_DEBUG), yet every ksync_shrinker_alloc()
 * passes a format: formatting it cost about as much as the rest of a
 * register + unregister. So a simple format - literal text and up to
 * NAME_ARGS conversions %d %i %u %x (optionally with l), %% - is kept as
 * it is, with its arguments, and formatted the first time the name is read;
 * any other format (%s: its string may not outlive the call; a width; more
 * arguments; a format longer than the buffer) is formatted at once, as
 * before. The output is ksync__name_vformat()'s either way, which is
 * vsnprintf()'s.
 *
 * N1/N2: the first reader formats under reg->mutex (readers may race with
 * each other; the writer of a lazy record is the prepare that made it, long
 * done) and clears @name_lazy with release after writing @name; a reader
 * that sees it clear (acquire) reads the finished @name, which nothing
 * writes again while the record lives.
 */

/*
 * Capture @fmt (with @ap) into @n: kept lazily if simple, else formatted now.
 * One pass copies the format and takes the arguments of its conversions.
 */
void ksync__shr_name_capture(struct record_name *n, const char *fmt, va_list ap)
{
	char *const t = n->text;
	const size_t size = sizeof(n->text);
	size_t i = 0;
	int nargs = 0;
	va_list aq;

	va_copy(aq, ap);
	for (;;) {
		char c;
		bool is_long;

		/* Format and text share the index: a load, a store, a test per letter. */
		do {
			if (i == size)
				goto eager; /* the format does not fit, with its NUL */
			c = fmt[i];
			t[i++] = c;
		} while ((unsigned char)c > '%'); /* letters, digits, '-', '_', '.', '/' */
		if (c == '\0')
			break;
		if (c != '%')
			continue;
		if (size - i < 2)
			goto eager; /* no room for "l?" */
		is_long = fmt[i] == 'l';
		if (is_long) {
			t[i] = 'l';
			i++;
		}
		c = fmt[i];
		t[i++] = c;
		switch (c) {
		case 'd':
		case 'i':
			if (nargs == NAME_ARGS)
				goto eager;
			n->args[nargs++] = is_long ? va_arg(aq, long) : (long)va_arg(aq, int);
			break;
		case 'u':
		case 'x':
			if (nargs == NAME_ARGS)
				goto eager;
			n->args[nargs++] = (long)(is_long ? va_arg(aq, unsigned long)
							  : (unsigned long)va_arg(aq, unsigned));
			break;
		case '%':
			if (is_long)
				goto eager;
			break;
		default: /* anything else, the end of the format included */
			goto eager;
		}
	}
	va_end(aq);
	n->lazy = true;
	return;
eager:
	va_end(aq);
	n->lazy = false;
	ksync__name_vformat(n->text, sizeof(n->text), fmt, ap);
}

/* Give @rec the name @n (under reg->mutex, before the record is published). */
void ksync__shr_name_set(struct ksync_shrinker_record *rec, const struct record_name *n)
{
	memcpy(rec->name, n->text, sizeof(rec->name));
	if (n->lazy) {
		memcpy(rec->name_args, n->args, sizeof(rec->name_args));
		ksync_atomic_set(&rec->name_lazy, 1);
	}
}

/* Format @rec's kept format into @buf (what ksync__name_vformat() would write). */
static void name_format_kept(const struct ksync_shrinker_record *rec, char *buf, size_t size)
{
	struct ksync__name_out o = { buf, size, 0 };
	const char *f = rec->name;
	int arg = 0;

	while (*f) {
		char c = *f++;
		bool is_long = false;

		if (c != '%') {
			ksync__name_put(&o, c);
			continue;
		}
		if (*f == 'l') {
			is_long = true;
			f++;
		}
		c = *f++;
		if (c == '%') {
			ksync__name_put(&o, '%');
		} else if (c == 'd' || c == 'i') {
			long v = rec->name_args[arg++];
			unsigned long mag = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;

			ksync__name_put_ulong(&o, mag, 10, v < 0);
		} else { /* u, x: captured as unsigned (long), kept in a long */
			unsigned long v = (unsigned long)rec->name_args[arg++];

			if (!is_long)
				v = (unsigned)v;
			ksync__name_put_ulong(&o, v, c == 'x' ? 16 : 10, false);
		}
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
}

/* @rec's name, formatted now if it was kept lazily. Inside a read section (or owning @rec). */
const char *ksync__shr_name_get(struct ksync_shrinker_record *rec)
{
	/* N2: acquire; pairs with N1. */
	if (ksync_atomic_read_acquire(&rec->name_lazy)) {
		struct ksync_shrinker_registry *reg = rec->reg;

		ksync__mutex_lock(&reg->mutex);
		if (ksync_atomic_read(&rec->name_lazy)) {
			char buf[sizeof(rec->name)];

			name_format_kept(rec, buf, sizeof(buf));
			memcpy(rec->name, buf, sizeof(buf));
			/* N1: release; the formatted name before the flag. */
			ksync_atomic_set_release(&rec->name_lazy, 0);
		}
		pthread_mutex_unlock(&reg->mutex);
	}
	return rec->name;
}
