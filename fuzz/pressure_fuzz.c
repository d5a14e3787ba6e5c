/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/pressure_fuzz.c - every parser of the pressure sources
 * (<ksync/pressure_testing.h>, lib/pressure/parse.c) on any bytes.
 *
 * The input's first byte picks the parser (modulo the number of them), the
 * rest is its text, in a heap block of exactly its length (ASan sees a read
 * past it; no NUL follows). Beyond "no crash, no read or write out of
 * bounds", each parser's result is checked for consistency:
 *  - PSI: averages at most 100.00 %; formatted again and parsed, the same;
 *  - meminfo: MemAvailable <= MemTotal, both whole KiB;
 *  - /proc/self/cgroup: the paths are absolute, NUL-terminated in their
 *    fields, and appear in the text;
 *  - mountinfo: root and mount point absolute; fstype and super options
 *    appear in the text; the options list has what it says;
 *  - cgroup values, memory.events, statm: formatted again and parsed, the
 *    same; a value is below 2^62 or unlimited;
 *  - CapEff: its hex appears in the text; the kernel release fits;
 *  - base64: a text that decodes encodes back to itself (whitespace
 *    removed, padding added); decoded again into a block of exactly its
 *    length, the same bytes; into one byte less, -ENOSPC (the planted bug
 *    PRESSURE_BASE64_OVERRUN writes past it: ASan); any bytes encoded
 *    decode back to themselves;
 *  - triggers: formatted and parsed again, the same; and the window rule
 *    for the kernel and privilege of two more input bytes: 1..8 candidates,
 *    the first the one asked, no window twice, every stall in 1..window-1,
 *    every fallback within 500 ms..10 s, multiples of 2 s for 6.5+ without
 *    the capability;
 *  - levels: ksync_pressure_level_of() never falls as usage rises.
 */
#define _GNU_SOURCE /* memmem */
#include <ksync/pressure_testing.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static bool appears(const char *text, size_t len, const char *s)
{
	return memmem(text, len, s, strlen(s)) != NULL;
}

static void fuzz_psi(const char *t, size_t n)
{
	struct ksync_pressure_psi p, q;
	char buf[512];
	int len;

	if (ksync_pressure_parse_psi(t, n, &p) < 0)
		return;
	CHECK(p.some.avg10 <= 10000 && p.some.avg60 <= 10000 && p.some.avg300 <= 10000);
	CHECK(p.full.avg10 <= 10000 && p.full.avg60 <= 10000 && p.full.avg300 <= 10000);
	len = snprintf(buf, sizeof(buf),
		       "some avg10=%u.%02u avg60=%u.%02u avg300=%u.%02u total=%" PRIu64 "\n",
		       p.some.avg10 / 100, p.some.avg10 % 100, p.some.avg60 / 100, p.some.avg60 % 100,
		       p.some.avg300 / 100, p.some.avg300 % 100, p.some.total_us);
	if (p.has_full)
		len += snprintf(buf + len, sizeof(buf) - (size_t)len,
				"full avg10=%u.%02u avg60=%u.%02u avg300=%u.%02u total=%" PRIu64 "\n",
				p.full.avg10 / 100, p.full.avg10 % 100, p.full.avg60 / 100, p.full.avg60 % 100,
				p.full.avg300 / 100, p.full.avg300 % 100, p.full.total_us);
	CHECK(ksync_pressure_parse_psi(buf, (size_t)len, &q) == 0);
	CHECK(memcmp(&p, &q, sizeof(p)) == 0);
}

static void fuzz_meminfo(const char *t, size_t n)
{
	uint64_t total, avail;

	if (ksync_pressure_parse_meminfo(t, n, &total, &avail) < 0)
		return;
	CHECK(avail <= total);
	CHECK(total % 1024 == 0 && avail % 1024 == 0);
}

static void fuzz_cgroup(const char *t, size_t n)
{
	static struct ksync_pressure_cgroup cg;

	if (ksync_pressure_parse_cgroup(t, n, &cg) < 0)
		return;
	if (cg.has_v2) {
		CHECK(memchr(cg.v2, '\0', sizeof(cg.v2)) && cg.v2[0] == '/');
		CHECK(appears(t, n, cg.v2));
	} else {
		CHECK(cg.v2[0] == '\0');
	}
	if (cg.has_v1_memory) {
		CHECK(memchr(cg.v1_memory, '\0', sizeof(cg.v1_memory)) && cg.v1_memory[0] == '/');
		CHECK(appears(t, n, cg.v1_memory));
		CHECK(appears(t, n, "memory"));
	}
}

static void fuzz_mountinfo(const char *t, size_t n)
{
	static struct ksync_pressure_mount m;

	if (ksync_pressure_parse_mountinfo_line(t, n, &m) < 0)
		return;
	CHECK(m.root[0] == '/' && m.mountpoint[0] == '/');
	CHECK(memchr(m.root, '\0', sizeof(m.root)) && memchr(m.mountpoint, '\0', sizeof(m.mountpoint)));
	CHECK(m.fstype[0] && appears(t, n, m.fstype));
	CHECK(m.super_options[0] && appears(t, n, m.super_options));
	CHECK(appears(t, n, " - "));
	/* Every comma-separated word of the options is found, and a longer one not. */
	char word[sizeof(m.super_options) + 1];
	const char *p = m.super_options;
	while (*p) {
		size_t w = strcspn(p, ",");

		memcpy(word, p, w);
		word[w] = '\0';
		CHECK(ksync_pressure_option_has(m.super_options, word));
		word[w] = ','; /* never inside a word */
		word[w + 1] = '\0';
		CHECK(!ksync_pressure_option_has(m.super_options, word));
		p += w + (p[w] == ',');
	}
}

static void fuzz_values(const char *t, size_t n)
{
	uint64_t v, w, size, res, size2, res2;
	struct ksync_pressure_memory_events e, f;
	char buf[256];
	int len;

	if (ksync_pressure_parse_cgroup_value(t, n, &v) == 0) {
		CHECK(v < (UINT64_C(1) << 62) || v == KSYNC_PRESSURE_UNLIMITED);
		len = v == KSYNC_PRESSURE_UNLIMITED ? snprintf(buf, sizeof(buf), "max\n")
						    : snprintf(buf, sizeof(buf), "%" PRIu64 "\n", v);
		CHECK(ksync_pressure_parse_cgroup_value(buf, (size_t)len, &w) == 0 && w == v);
	}
	if (ksync_pressure_parse_memory_events(t, n, &e) == 0) {
		len = snprintf(buf, sizeof(buf),
			       "low %" PRIu64 "\nhigh %" PRIu64 "\nmax %" PRIu64 "\noom %" PRIu64
			       "\noom_kill %" PRIu64 "\n",
			       e.low, e.high, e.max, e.oom, e.oom_kill);
		CHECK(ksync_pressure_parse_memory_events(buf, (size_t)len, &f) == 0);
		CHECK(memcmp(&e, &f, sizeof(e)) == 0);
	}
	if (ksync_pressure_parse_statm(t, n, &size, &res) == 0) {
		len = snprintf(buf, sizeof(buf), "%" PRIu64 " %" PRIu64 " 0 0 0 0 0\n", size, res);
		CHECK(ksync_pressure_parse_statm(buf, (size_t)len, &size2, &res2) == 0);
		CHECK(size == size2 && res == res2);
	}
}

static void fuzz_status(const char *t, size_t n)
{
	uint64_t cap;
	unsigned maj, min;

	if (ksync_pressure_parse_capeff(t, n, &cap) == 0) {
		CHECK(appears(t, n, "CapEff:"));
	}
	if (ksync_pressure_parse_kernel_release(t, n, &maj, &min) == 0)
		CHECK(maj <= 0xffff && min <= 0xffff);
}

static bool is_b64_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static void fuzz_base64(const char *t, size_t n)
{
	size_t cap = n, got = 0, got2 = 0;
	unsigned char *out = malloc(cap ? cap : 1), *exact, *short1;
	char *enc, *canon;
	size_t need, c = 0;
	int r;

	CHECK(out);
	r = ksync_pressure_base64_decode(t, n, out, cap, &got);
	if (r == 0) {
		CHECK(got <= n / 4 * 3 + 2);
		/* The canonical text: no whitespace, padded to quads. */
		canon = malloc(n + 4);
		CHECK(canon);
		for (size_t i = 0; i < n; i++)
			if (!is_b64_space(t[i]))
				canon[c++] = t[i];
		while (c % 4)
			canon[c++] = '=';
		need = ksync_pressure_base64_encode(out, got, NULL, 0);
		CHECK(need == c);
		enc = malloc(need + 1);
		CHECK(enc);
		CHECK(ksync_pressure_base64_encode(out, got, enc, need + 1) == need);
		CHECK(enc[need] == '\0' && memcmp(enc, canon, need) == 0);
		/* Exactly the room it needs: the same bytes. */
		exact = malloc(got ? got : 1);
		CHECK(exact);
		CHECK(ksync_pressure_base64_decode(t, n, exact, got, &got2) == 0);
		CHECK(got2 == got && memcmp(exact, out, got) == 0);
		free(exact);
		/* One byte less: refused, nothing written past it. */
		if (got) {
			short1 = malloc(got - 1 ? got - 1 : 1);
			CHECK(short1);
			CHECK(ksync_pressure_base64_decode(t, n, short1, got - 1, &got2) == -ENOSPC);
			free(short1);
		}
		free(enc);
		free(canon);
	} else {
		CHECK(r == -EINVAL);
	}
	/* The input's bytes, encoded and decoded back. */
	need = ksync_pressure_base64_encode((const unsigned char *)t, n, NULL, 0);
	enc = malloc(need + 1);
	CHECK(enc);
	CHECK(ksync_pressure_base64_encode((const unsigned char *)t, n, enc, need + 1) == need);
	CHECK(ksync_pressure_base64_decode(enc, need, out, cap, &got) == 0);
	CHECK(got == n && memcmp(out, t, n) == 0);
	free(enc);
	free(out);
}

static void fuzz_trigger(const char *t, size_t n, unsigned a, unsigned b)
{
	struct ksync_pressure_trigger tr, back, out[KSYNC_PRESSURE_MAX_WINDOWS];
	char buf[64];
	size_t len;
	unsigned maj = 4 + a % 4, min = b % 20;
	int cap = (int)(a >> 2 & 1), cnt;
	bool unpriv = (maj > 6 || (maj == 6 && min >= 5)) && !cap;

	if (ksync_pressure_parse_trigger(t, n, &tr) < 0)
		return;
	len = ksync_pressure_format_trigger(buf, sizeof(buf), &tr);
	CHECK(len < sizeof(buf));
	CHECK(ksync_pressure_parse_trigger(buf, len, &back) == 0);
	CHECK(back.full == tr.full && back.stall_us == tr.stall_us && back.window_us == tr.window_us);
	if (tr.window_us == 0 || tr.stall_us == 0 || tr.stall_us > tr.window_us)
		return; /* the monitor refuses such a trigger */
	cnt = ksync_pressure_psi_windows(&tr, maj, min, cap, out);
	CHECK(cnt >= 1 && cnt <= KSYNC_PRESSURE_MAX_WINDOWS);
	CHECK(memcmp(&out[0], &tr, sizeof(tr)) == 0);
	for (int i = 1; i < cnt; i++) {
		CHECK(out[i].full == tr.full);
		CHECK(out[i].stall_us >= 1 && out[i].stall_us < out[i].window_us);
		CHECK(out[i].window_us >= 500000 && out[i].window_us <= 10000000);
		if (unpriv)
			CHECK(out[i].window_us % 2000000 == 0);
		for (int j = 0; j < i; j++)
			CHECK(out[j].window_us != out[i].window_us);
	}
	/* Every window the kernel may take is offered. */
	for (uint32_t w = 2000000; w <= 10000000; w += 2000000) {
		bool found = false;

		for (int i = 0; i < cnt; i++)
			found |= out[i].window_us == w;
		CHECK(found);
	}
}

static void fuzz_levels(const uint8_t *d, size_t n)
{
	uint64_t u = 0, l = 0;
	unsigned pm[KSYNC_PRESSURE_NR_LEVELS] = { 0, 800, 900, 950 };

	for (size_t i = 0; i < n && i < 8; i++)
		u = u << 8 | d[i];
	for (size_t i = 8; i < n && i < 16; i++)
		l = l << 8 | d[i];
	if (n > 16)
		pm[1] = d[16] * 4u, pm[2] = pm[1] + (n > 17 ? d[17] : 0), pm[3] = pm[2] + (n > 18 ? d[18] : 0);
	enum ksync_pressure_level a = ksync_pressure_level_of(u, l, pm);
	enum ksync_pressure_level b = ksync_pressure_level_of(u == UINT64_MAX ? u : u + 1, l, pm);
	CHECK(a >= KSYNC_PRESSURE_NONE && a <= KSYNC_PRESSURE_CRITICAL);
	CHECK(b >= a);
	if (l == 0 || l == KSYNC_PRESSURE_UNLIMITED)
		CHECK(a == KSYNC_PRESSURE_NONE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned pick, a, b;
	char *t;
	size_t n;

	if (size < 1)
		return 0;
	pick = data[0] % 10;
	n = size - 1;
	/* The text in a block of exactly its length: a read past it is ASan's. */
	t = malloc(n ? n : 1);
	CHECK(t);
	memcpy(t, data + 1, n);
	switch (pick) {
	case 0: fuzz_psi(t, n); break;
	case 1: fuzz_meminfo(t, n); break;
	case 2: fuzz_cgroup(t, n); break;
	case 3: fuzz_mountinfo(t, n); break;
	case 4: fuzz_values(t, n); break;
	case 5: fuzz_status(t, n); break;
	case 6: fuzz_base64(t, n); break;
	case 7: /* the last two bytes pick the kernel and privilege */
		a = n >= 2 ? (uint8_t)t[n - 2] : 0;
		b = n >= 1 ? (uint8_t)t[n - 1] : 0;
		fuzz_trigger(t, n >= 2 ? n - 2 : 0, a, b);
		break;
	case 8: fuzz_levels(data + 1, n); break;
	default: /* every text parser on the same bytes */
		fuzz_psi(t, n);
		fuzz_meminfo(t, n);
		fuzz_cgroup(t, n);
		fuzz_mountinfo(t, n);
		fuzz_values(t, n);
		fuzz_status(t, n);
		break;
	}
	free(t);
	return 0;
}
