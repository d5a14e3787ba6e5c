/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/common/name_format.h - the names of registry entries ("mnt-%d"),
 * formatted without stdio when the format is simple.
 *
 * ksync_shrinker_alloc() names every shrinker from a printf-style format,
 * as the kernel's shrinker_alloc() does. glibc's vsnprintf() sets up a
 * string FILE for each call: about 700 instructions for "mnt-%d", as much as
 * the rest of a register + unregister. The kernel pays nothing here unless
 * CONFIG_SHRINKER_DEBUG is set; a name is worth keeping, so it is made
 * cheap instead: literal text and the conversions %d %i %u %x (optionally
 * with l), %s and %% are formatted here; a format with anything else
 * (flags, a width, a precision, other conversions or length modifiers) goes
 * to vsnprintf() whole. The output, truncation included, is vsnprintf()'s:
 * tests/unit/name_format_test.c compares the two.
 */
#ifndef KSYNC_LIB_COMMON_NAME_FORMAT_H
#define KSYNC_LIB_COMMON_NAME_FORMAT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct ksync__name_out {
	char *buf;
	size_t size, len; /* len: what vsnprintf() would return */
};

static inline void ksync__name_put(struct ksync__name_out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

/* @v in @base (10, or else 16), lower-case digits, after a '-' if @neg. */
static inline void ksync__name_put_ulong(struct ksync__name_out *o, unsigned long v,
					 unsigned base, bool neg)
{
	char digits[3 * sizeof(unsigned long)];
	int n = 0;

	if (base == 10) { /* constant divisors: multiplies, not a divide per digit */
		do {
			digits[n++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
	} else {
		do {
			digits[n++] = "0123456789abcdef"[v & 15];
			v >>= 4;
		} while (v);
	}
	if (neg)
		ksync__name_put(o, '-');
	while (n)
		ksync__name_put(o, digits[--n]);
}

/*
 * One conversion at *@fmtp (just after its '%'): true once done, false for
 * anything this file does not format (nothing written, nothing consumed).
 */
static inline bool ksync__name_conv(struct ksync__name_out *o, const char **fmtp, va_list *ap)
{
	const char *f = *fmtp;
	bool is_long = *f == 'l';

	if (is_long)
		f++;
	switch (*f) {
	case 'd':
	case 'i': {
		long v = is_long ? va_arg(*ap, long) : (long)va_arg(*ap, int);
		unsigned long mag = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
		ksync__name_put_ulong(o, mag, 10, v < 0);
		break;
	}
	case 'u':
	case 'x': {
		unsigned long v = is_long ? va_arg(*ap, unsigned long) : (unsigned long)va_arg(*ap, unsigned);
		ksync__name_put_ulong(o, v, *f == 'x' ? 16 : 10, false);
		break;
	}
	case 's': {
		if (is_long)
			return false; /* %ls: wide strings */
		const char *s = va_arg(*ap, const char *);
		for (s = s ? s : "(null)"; *s; s++)
			ksync__name_put(o, *s);
		break;
	}
	case '%':
		if (is_long)
			return false;
		ksync__name_put(o, '%');
		break;
	default:
		return false;
	}
	*fmtp = f + 1;
	return true;
}

/*
 * ksync__name_vformat() - vsnprintf(@buf, @size, @fmt, @ap), fast for the
 * simple formats above. @ap is left as vsnprintf() would leave it
 * (indeterminate: the caller only va_end()s it).
 * Return: what vsnprintf() returns (the full length), or its negative error.
 */
static inline int ksync__name_vformat(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct ksync__name_out o = { buf, size, 0 };
	const char *f = fmt;
	va_list aq;

	va_copy(aq, ap);
	while (*f) {
		if (*f != '%') {
			ksync__name_put(&o, *f++);
			continue;
		}
		f++;
		if (!ksync__name_conv(&o, &f, &aq)) {
			va_end(aq);
			return vsnprintf(buf, size, fmt, ap); /* the whole format, from the start */
		}
	}
	va_end(aq);
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

#endif /* KSYNC_LIB_COMMON_NAME_FORMAT_H */
