/* SPDX-License-Identifier: BSD-2-Clause */
/* bench_srcu_ck.c - the ck_epoch side of bench_srcu (ck_epoch.h is C only). */
#include <ck_epoch.h>
#include <stdlib.h>

static ck_epoch_t bench_epoch;

void bench_ck_epoch_init(void);
void *bench_ck_epoch_register(void);
void bench_ck_epoch_unregister(void *rec);
void bench_ck_epoch_sections(void *rec, unsigned long n);

void bench_ck_epoch_init(void)
{
	ck_epoch_init(&bench_epoch);
}

void *bench_ck_epoch_register(void)
{
	ck_epoch_record_t *rec = ck_epoch_recycle(&bench_epoch, NULL);
	if (!rec) {
		rec = malloc(sizeof(*rec));
		ck_epoch_register(&bench_epoch, rec, NULL);
	}
	return rec;
}

void bench_ck_epoch_unregister(void *rec)
{
	ck_epoch_unregister(rec);
}

/* n begin/end pairs, the loop inlined around ck's inline fast path */
void bench_ck_epoch_sections(void *rec, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		ck_epoch_begin(rec, NULL);
		__asm__ __volatile__("" ::: "memory");
		ck_epoch_end(rec, NULL);
	}
}
