/* SPDX-License-Identifier: BSD-2-Clause */
/* compiler.h and math.h: warnings, access-once helpers, container_of, math. */
#include <ksync/bug.h>
#include <ksync/compiler.h>
#include <ksync/math.h>

#include "ktest.h"

static const char *hook_file;
static int hook_line;
static int hook_calls;

static void record(const char *file, int line, const char *what)
{
	(void)what;
	hook_file = file;
	hook_line = line;
	hook_calls++;
}

static int warn_once_site(int cond)
{
	return KSYNC_WARN_ON_ONCE(cond);
}

KTEST(warn_on_reports_file_line_and_returns_condition)
{
	unsigned long before = ksync_warn_count;

	ksync_warn_hook = record;
	KCHECK_EQ(KSYNC_WARN_ON(0), 0);
	KCHECK_EQ(ksync_warn_count, before);
	int line = __LINE__ + 1;
	KCHECK_EQ(KSYNC_WARN_ON(1 + 1 == 2), 1);
	KCHECK_EQ(ksync_warn_count, before + 1);
	KCHECK_EQ(hook_calls, 1);
	KCHECK_EQ(hook_line, line);
	KCHECK(hook_file && strstr(hook_file, "compiler_math_test.c"));
	/* KSYNC_WARN_ON reports every time. */
	KCHECK_EQ(KSYNC_WARN_ON(5), 1);
	KCHECK_EQ(ksync_warn_count, before + 2);
	ksync_warn_hook = NULL;
}

KTEST(warn_on_once_reports_once_per_call_site)
{
	unsigned long before = ksync_warn_count;

	KCHECK_EQ(warn_once_site(0), 0);
	KCHECK_EQ(warn_once_site(1), 1);
	KCHECK_EQ(warn_once_site(1), 1); /* still returns the condition... */
	KCHECK_EQ(warn_once_site(2), 1);
	KCHECK_EQ(ksync_warn_count, before + 1); /* ...but printed once */
	/* A different call site has its own flag. */
	KCHECK_EQ(KSYNC_WARN_ON_ONCE(1), 1);
	KCHECK_EQ(ksync_warn_count, before + 2);
	KCHECK_EQ(KSYNC_WARN_ONCE(1, "custom message"), 1);
	KCHECK_EQ(ksync_warn_count, before + 3);
}

KTEST(warn_macros_evaluate_the_condition_once)
{
	unsigned long before = ksync_warn_count;
	int n = 0;

	KCHECK_EQ(KSYNC_WARN_ON(n++ == 0), 1);
	KCHECK_EQ(n, 1);
	KCHECK_EQ(KSYNC_WARN_ON_ONCE(n++ == 1), 1);
	KCHECK_EQ(n, 2);
	KCHECK_EQ(KSYNC_WARN_ONCE(n++ == 99, "never"), 0);
	KCHECK_EQ(n, 3);
	KCHECK_EQ(ksync_warn_count, before + 2);
	/*
	 * Without KSYNC_DEBUG: never evaluated, value 0, and usable as a bare
	 * statement (gcc -Werror once rejected it: "statement with no effect").
	 */
	KSYNC_DEBUG_WARN_ON_ONCE(n++);
	KCHECK_EQ(KSYNC_DEBUG_WARN_ON_ONCE(n++ == 3), 0);
	KCHECK_EQ(n, 3);
	KCHECK_EQ(ksync_warn_count, before + 2);
}

struct outer {
	int a;
	long b;
	char c;
};

KTEST(access_once_and_container_of)
{
	struct outer o = { 1, 2, 3 };
	long *pb = &o.b;

	KCHECK(ksync_container_of(pb, struct outer, b) == &o);
	KCHECK(ksync_container_of(&o.c, struct outer, c) == &o);
	KSYNC_WRITE_ONCE(o.b, 42);
	KCHECK_EQ(KSYNC_READ_ONCE(o.b), 42);
	KSYNC_BUILD_BUG_ON(sizeof(long) < 4);
	KCHECK(ksync_likely(1) && !ksync_unlikely(0));
}

/* Kernel code tests the word size in the preprocessor: it must work there. */
#if KSYNC_BITS_PER_LONG != 32 && KSYNC_BITS_PER_LONG != 64
#error "KSYNC_BITS_PER_LONG is not usable in #if"
#endif

KTEST(math_helpers)
{
	KCHECK_EQ(KSYNC_BITS_PER_LONG, (int)(8 * sizeof(long)));
	KCHECK_EQ(KSYNC_BITS_TO_LONGS(0), 0);
	KCHECK_EQ(KSYNC_BITS_TO_LONGS(1), 1);
	KCHECK_EQ(KSYNC_BITS_TO_LONGS(KSYNC_BITS_PER_LONG), 1);
	KCHECK_EQ(KSYNC_BITS_TO_LONGS(KSYNC_BITS_PER_LONG + 1), 2);
	KCHECK_EQ(KSYNC_DIV_ROUND_UP(7, 3), 3);
	KCHECK_EQ(KSYNC_DIV_ROUND_UP(6, 3), 2);
	KCHECK_EQ(ksync_round_up(13, 8), 16);
	KCHECK_EQ(ksync_round_up(16, 8), 16);
	KCHECK_EQ(ksync_round_down(13UL, 8), 8);
	int i = 0;
	KCHECK_EQ(ksync_min(i++, 10), 0);
	KCHECK_EQ(i, 1); /* each argument evaluated once */
	KCHECK_EQ(ksync_max(-3, 2), 2);
	KCHECK_EQ(ksync_min_t(long, -1, 5U), -1);
	KCHECK_EQ(ksync_max_t(unsigned, 3, 4), 4);
	KCHECK_EQ(ksync_clamp(15, 0, 10), 10);
	KCHECK_EQ(ksync_clamp(-5, 0, 10), 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
