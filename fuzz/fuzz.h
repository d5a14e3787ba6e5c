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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* KSYNC_FUZZ_H */
