/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * name_format_test.c - lib/common/name_format.h against vsnprintf(): the
 * same string and the same return value for every format it formats
 * itself and for those it hands on, at every buffer size from 0 (nothing
 * written) to past the full length (truncation at each byte).
 */
#include "../../lib/common/name_format.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>

#include "ktest.h"

#define GUARD 'Z'

/* Format with both, at every size 0..len+2, into guarded buffers; compare. */
static void check_same(const char *fmt, ...)
{
	char want_full[256];
	va_list ap;

	va_start(ap, fmt);
	int want_len = vsnprintf(want_full, sizeof(want_full), fmt, ap);
	va_end(ap);
	KCHECK(want_len >= 0 && want_len < 200);
	for (size_t size = 0; size <= (size_t)want_len + 2; size++) {
		char want[256], got[256];
		memset(want, GUARD, sizeof(want));
		memset(got, GUARD, sizeof(got));
		va_start(ap, fmt);
		int w = vsnprintf(size ? want : NULL, size, fmt, ap);
		va_end(ap);
		va_start(ap, fmt);
		int g = ksync__name_vformat(size ? got : NULL, size, fmt, ap);
		va_end(ap);
		KCHECK_EQ(g, w);
		if (memcmp(got, want, sizeof(got)) != 0) {
			char what[400];
			snprintf(what, sizeof(what), "format \"%s\" size %zu: got \"%.*s\", want \"%.*s\"",
				 fmt, size, (int)size, got, (int)size, want);
			ktest_fail(__FILE__, __LINE__, what);
			return;
		}
	}
}

KTEST(simple_formats_match_vsnprintf)
{
	check_same("mnt-%d", 42);
	check_same("mnt-%d", 0);
	check_same("mnt-%d", -7);
	check_same("%d", INT_MIN);
	check_same("%d", INT_MAX);
	check_same("%i|%u|%x", -1, 4000000000u, 0xbeefu);
	check_same("%ld %lu %lx %li", LONG_MIN, ULONG_MAX, ULONG_MAX, LONG_MAX);
	check_same("%s-%s", "ext4", "");
	check_same("%s", (const char *)NULL);
	check_same("100%% of %s", "it");
	check_same("");
	check_same("no conversions at all, just text");
	check_same("a:%d b:%s c:%u d:%x e:%ld", 1, "two", 3u, 4u, 5L);
}

KTEST(other_formats_are_handed_to_vsnprintf)
{
	check_same("%5d|%-5d|%05d", 42, 42, 42);
	check_same("%.3s", "abcdef");
	check_same("%p", (void *)0);
	check_same("%lld %zu %hd", 1LL, (size_t)2, (short)3);
	check_same("%c%c", 'o', 'k');
	check_same("%g", 1.5);
	check_same("%X", 0xabcu);
	check_same("mnt-%d-%08x", 3, 0x1234u); /* supported first, then not: from the start */
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
