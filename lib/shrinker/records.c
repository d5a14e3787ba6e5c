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
 *
 * Polled reuse. A thread that walked once and is alive makes the try fail
 * for good (it may enter again with no barrier the try could pair with), so
 * in a program whose reclaim threads have run, the warm path above never
 * applies. A release the try refuses appends the record to record_polled,
 * a FIFO (at most RECORD_POLLED_MAX), with no cookie yet. When
 * KSYNC_SHRINKER_REUSE_BATCH records wait unstamped, the release takes one
 * ksync_get_state_synchronize_srcu() cookie for all of them (in the
 * critical section of the last unlink, after every one of theirs: the
 * cookie's full barrier orders the unlinks before its grace period), closes
 * them into a group of polled_grp, and asks the domain's helper for that
 * grace period after the unlock (ksync_start_poll_synchronize_srcu(), whose
 * own cookie is taken later, so satisfies the group's; it is not called
 * under reg->mutex because it waits for the grace period itself when the
 * helper cannot start, and readers may wait for that mutex). A registration
 * takes the FIFO's oldest record once ksync_poll_state_synchronize_srcu()
 * says its group's cookie is done: every reader that could have found the
 * record has left its section. Cookies never decrease along the groups
 * (stamped in mutex order), so the newest one seen done (poll_done) spares
 * the later polls of that group. So a grace period, its cookie's barrier
 * and its wake-up are paid once per group, not per record; and the records
 * never leave this thread's caches (the batch path's callback writes them
 * on the helper's CPU). Unstamped records wait for more releases: at most a
 * group's worth of memory held, as the pending batch holds. When the ring
 * of groups is full, records take the batch path.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "../common/name_format.h"

#define RECORD_CACHE_MAX 4096
#define FREE_BATCH 256
#define RECORD_WARM_MAX 64
#define POLLED_GROUPS KSYNC_SHRINKER_REUSE_GROUPS
#define RECORD_POLLED_MAX (POLLED_GROUPS * KSYNC_SHRINKER_REUSE_BATCH)

/* Wrap-safe: is cookie @a at or past cookie @b? */
static inline bool cookie_ge(unsigned long a, unsigned long b)
{
	return (long)(a - b) >= 0;
}

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
	reg_lock(reg);
	struct ksync_shrinker_record *batch = take_batch_locked(reg);
	reg_unlock(reg);
	queue_batch(reg, batch);
}

/* After the registry's last grace period: free the cache. */
void ksync__shr_records_destroy(struct ksync_shrinker_registry *reg)
{
	struct ksync_shrinker_record *lists[4] = {
		(struct ksync_shrinker_record *)ksync_ptr_xchg(&reg->record_cache, NULL),
		reg->record_mine,
		reg->record_warm,
	};

	reg->record_mine = NULL;
	reg->record_warm = NULL;
	reg->record_warm_len = 0;
	lists[3] = reg->record_polled;
	reg->record_polled = reg->record_polled_tail = NULL;
	reg->record_polled_len = 0;
	reg->polled_unstamped = 0;
	reg->polled_grp_len = 0;
	for (int i = 0; i < 4; i++) {
		while (lists[i]) {
			struct ksync_shrinker_record *r = lists[i];

			lists[i] = r->free_next;
			free(r);
		}
	}
}

/* Has the grace period of @cookie ended (see "Polled reuse")? Under reg->mutex. */
static bool polled_done_locked(struct ksync_shrinker_registry *reg, unsigned long cookie)
{
	if (reg->poll_done_valid && cookie_ge(reg->poll_done, cookie))
		return true; /* a poll under the mutex saw a later cookie done */
	if (KSYNC_PLANT(RECORD_POLL_NO_GP)) /* the regression test's plant: no grace period */
		return true;
	/* Acquire and full barrier when true: the reuse follows every reader it waited for. */
	if (!ksync_poll_state_synchronize_srcu(&reg->srcu, cookie))
		return false;
	reg->poll_done = cookie;
	reg->poll_done_valid = true;
	return true;
}

/*
 * A zeroed record: the last warm one, else the oldest polled one whose
 * grace period ended, else from the cache, else malloc. Under reg->mutex.
 */
struct ksync_shrinker_record *ksync__shr_record_alloc_locked(struct ksync_shrinker_registry *reg)
{
	struct ksync_shrinker_record *rec = reg->record_warm;

	if (rec) {
		reg->record_warm = rec->free_next;
		reg->record_warm_len--;
		memset(rec, 0, reg->record_size);
		return rec;
	}
	rec = reg->record_polled;
	if (reg->polled_grp_len && polled_done_locked(reg, reg->polled_grp[reg->polled_grp_head].cookie)) {
		/* The head record is the oldest of the head group (the groups come first). */
		reg->record_polled = rec->free_next;
		if (!rec->free_next)
			reg->record_polled_tail = NULL;
		reg->record_polled_len--;
		if (--reg->polled_grp[reg->polled_grp_head].n == 0) {
			reg->polled_grp_head = (reg->polled_grp_head + 1) % POLLED_GROUPS;
			reg->polled_grp_len--;
		}
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
 * Retire @rec's id and offer its memory for reuse: warm, polled, or on the
 * pending batch (under reg->mutex).
 * Return: what ksync__shr_records_queue() does after the unlock (a full
 * batch to queue, a grace period to ask for).
 */
struct record_release ksync__shr_record_release_locked(struct ksync_shrinker_record *rec)
{
	struct ksync_shrinker_registry *reg = rec->reg;
	struct record_release r = { NULL, false };

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
		return r;
	}
	if (reg->record_polled_len < RECORD_POLLED_MAX) {
		/*
		 * See "Polled reuse". The magic stays: a reader may still
		 * check it (a debug call that found @rec through
		 * @s->record); the reuse's memset clears it, after the grace
		 * period.
		 */
		rec->free_next = NULL;
		if (reg->record_polled_tail)
			reg->record_polled_tail->free_next = rec;
		else
			reg->record_polled = rec;
		reg->record_polled_tail = rec;
		reg->record_polled_len++;
		if (++reg->polled_unstamped >= KSYNC_SHRINKER_REUSE_BATCH &&
		    reg->polled_grp_len < POLLED_GROUPS) {
			int g = (reg->polled_grp_head + reg->polled_grp_len) % POLLED_GROUPS;

			/* Full barrier: every unlink of the group precedes its grace period. */
			reg->polled_grp[g].cookie = ksync_get_state_synchronize_srcu(&reg->srcu);
			reg->polled_grp[g].n = reg->polled_unstamped;
			reg->polled_grp_len++;
			reg->polled_unstamped = 0;
			r.start_poll = true;
		}
		return r;
	}
	rec->free_next = reg->free_batch;
	reg->free_batch = rec;
	if (++reg->free_batch_len >= FREE_BATCH)
		r.batch = take_batch_locked(reg);
	return r;
}

/* Do what ksync__shr_record_release_locked() left for after the unlock (mutex not held). */
void ksync__shr_records_queue_slow(struct ksync_shrinker_registry *reg, struct record_release r)
{
	/* Its cookie satisfies the released records' (it is taken later). */
	if (r.start_poll)
		(void)ksync_start_poll_synchronize_srcu(&reg->srcu);
	queue_batch(reg, r.batch);
}

/* Retire @rec's id and global counters and queue its memory (mutex not held). */
void ksync__shr_record_release(struct ksync_shrinker_record *rec)
{
	struct ksync_shrinker_registry *reg = rec->reg;

	reg_lock(reg);
	/*
	 * Unregistered records were unlinked and retired at unregister;
	 * prepared ones (linked since prepare, refcount 0: no walker holds
	 * them) are unlinked and retired here.
	 */
	if (ksync_atomic_read(&rec->state) == RECORD_PREPARED) {
		ksync_list_del_rcu(&rec->list);
		retire_deferred_locked(rec);
	}
	struct record_release r = ksync__shr_record_release_locked(rec);
	reg_unlock(reg);
	ksync__shr_records_queue(reg, r);
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

		reg_lock(reg);
		if (ksync_atomic_read(&rec->name_lazy)) {
			char buf[sizeof(rec->name)];

			name_format_kept(rec, buf, sizeof(buf));
			memcpy(rec->name, buf, sizeof(buf));
			/* N1: release; the formatted name before the flag. */
			ksync_atomic_set_release(&rec->name_lazy, 0);
		}
		reg_unlock(reg);
	}
	return rec->name;
}
