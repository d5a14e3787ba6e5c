/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/fuzz.h - what ksync's fuzz targets share: a check that aborts (so
 * libFuzzer saves the input as a crash) and a reader of the input bytes
 * that returns 0 once they run out.
 */
#ifndef KSYNC_FUZZ_H
#define KSYNC_FUZZ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <ksync/fuzzing.h>

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			abort();                                               \
		}                                                              \
	} while (0)

struct input {
	const uint8_t *p, *end;
};

static inline unsigned int take(struct input *in)
{
	return in->p < in->end ? *in->p++ : 0;
}

static inline unsigned int take16(struct input *in)
{
	unsigned int lo = take(in);

	return lo | take(in) << 8;
}

static inline bool more(const struct input *in)
{
	return in->p < in->end;
}

/*
 * An allocation failed where the input asked for one (ksync_fail_nth_alloc()):
 * it must be the one armed, and the only one (the injection fires once).
 * @seen counts them, atomically: several threads may report.
 */
static inline void fuzz_injected_failure(int *seen)
{
	CHECK(ksync_fail_nth_alloc_fired());
	CHECK(__atomic_add_fetch(seen, 1, __ATOMIC_ACQ_REL) == 1);
	if (getenv("KSYNC_FUZZ_TRACE"))
		fprintf(stderr, "  the injected allocation failure, as documented\n");
}

/*
 * The single-threaded targets' rule: the input's last byte, when below 64,
 * picks the allocation to fail (byte % 32; 0: none). The last byte, so that
 * the layout of the rest stays as the checked-in seeds have it.
 */
static inline unsigned long fuzz_fail_nth_of_last_byte(const uint8_t *data, size_t size)
{
	return size >= 2 && data[size - 1] < 64 ? data[size - 1] % 32 : 0;
}

/* A report hook for targets that misuse on purpose and check results instead. */
static inline void fuzz_quiet_reports(const char *file, int line, const char *what)
{
	(void)file, (void)line, (void)what;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* KSYNC_FUZZ_H */
