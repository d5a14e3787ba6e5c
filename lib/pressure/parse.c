/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/parse.c - the text the kernel and systemd write, read without I/O.
 *
 * Theory of operation. Every source reads a file into a buffer (paths.c) and
 * hands the buffer here; nothing here opens, allocates or keeps state, so
 * the fuzzer (fuzz/pressure_fuzz.c) can drive every parser with any bytes
 * and the unit tests can check them line by line. Each parser walks
 * [buf, buf + len) through a cursor that never passes the end (no NUL is
 * needed, embedded NULs are text like any other), keeps numbers in 64 bits
 * with overflow checked, and fails with a negative errno instead of guessing:
 * a source that cannot read its file says so in its description and stays
 * off. The rules of each format are at its parser.
 *
 * The PSI window rule lives here too (ksync_pressure_psi_windows()): which
 * triggers to try for one level, given the kernel's version and privilege.
 * It decides nothing alone: psi.c writes each candidate in turn and takes
 * the first the kernel accepts.
 */
#include <ksync/impl/seams.h>
#include <ksync/pressure_testing.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A cursor over [p, end). */
struct cur {
	const char *p, *end;
};

static bool at_end(const struct cur *c)
{
	return c->p >= c->end;
}

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* Skip spaces and tabs (not newlines). Return how many. */
static size_t skip_blanks(struct cur *c)
{
	size_t n = 0;

	while (!at_end(c) && (*c->p == ' ' || *c->p == '\t')) {
		c->p++;
		n++;
	}
	return n;
}

/* Consume @word if the cursor starts with it. */
static bool take_word(struct cur *c, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
		return false;
	c->p += n;
	return true;
}

/*
 * read_u64() - a decimal number at the cursor.
 * Return: 0; -EINVAL without a digit; -ERANGE past 2^64 - 1.
 */
static int read_u64(struct cur *c, uint64_t *out)
{
	uint64_t v = 0;
	bool any = false;

	while (!at_end(c) && is_digit(*c->p)) {
		unsigned d = (unsigned)(*c->p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
		any = true;
		c->p++;
	}
	if (!any)
		return -EINVAL;
	*out = v;
	return 0;
}

/* The next line of @c (without its newline) into @line; false at the end. */
static bool next_line(struct cur *c, struct cur *line)
{
	const char *nl;

	if (at_end(c))
		return false;
	nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	line->p = c->p;
	line->end = nl ? nl : c->end;
	c->p = nl ? nl + 1 : c->end;
	return true;
}

/* Whether the rest of @c is whitespace or NULs. */
static bool only_space(struct cur *c)
{
	for (const char *q = c->p; q < c->end; q++)
		if (!is_space(*q) && *q != '\0')
			return false;
	return true;
}

/*
 * PSI: "some avg10=0.12 avg60=0.00 avg300=0.00 total=123", then "full ...".
 * An average is a per cent with exactly two decimals, at most 100.00.
 */
static int read_avg(struct cur *c, const char *key, uint32_t *out)
{
	uint64_t whole;
	int r;

	if (!take_word(c, key))
		return -EINVAL;
	if ((r = read_u64(c, &whole)) < 0)
		return r;
	if (at_end(c) || *c->p != '.')
		return -EINVAL;
	c->p++;
	if (c->end - c->p < 2 || !is_digit(c->p[0]) || !is_digit(c->p[1]))
		return -EINVAL;
	if (whole > 100)
		return -ERANGE;
	whole = whole * 100 + (uint64_t)(c->p[0] - '0') * 10 + (uint64_t)(c->p[1] - '0');
	c->p += 2;
	if (whole > 10000)
		return -ERANGE;
	*out = (uint32_t)whole;
	return 0;
}

static int read_psi_record(struct cur *c, struct ksync_pressure_psi_record *r)
{
	int e;

	if ((e = read_avg(c, "avg10=", &r->avg10)) < 0)
		return e;
	if (!skip_blanks(c))
		return -EINVAL;
	if ((e = read_avg(c, "avg60=", &r->avg60)) < 0)
		return e;
	if (!skip_blanks(c))
		return -EINVAL;
	if ((e = read_avg(c, "avg300=", &r->avg300)) < 0)
		return e;
	if (!skip_blanks(c))
		return -EINVAL;
	if (!take_word(c, "total="))
		return -EINVAL;
	if ((e = read_u64(c, &r->total_us)) < 0)
		return e;
	return only_space(c) ? 0 : -EINVAL;
}

/**
 * ksync_pressure_parse_psi() - see <ksync/pressure_testing.h>.
 * One "some" line, at most one "full" line, in either order; blank lines
 * are ignored, any other line fails.
 */
int ksync_pressure_parse_psi(const char *buf, size_t len, struct ksync_pressure_psi *out)
{
	struct cur c = { buf, buf + len }, line;
	bool some = false;

	memset(out, 0, sizeof(*out));
	while (next_line(&c, &line)) {
		struct ksync_pressure_psi_record *r;
		int e;

		if (only_space(&line))
			continue;
		if (take_word(&line, "some")) {
			if (some)
				return -EINVAL;
			some = true;
			r = &out->some;
		} else if (take_word(&line, "full")) {
			if (out->has_full)
				return -EINVAL;
			out->has_full = 1;
			r = &out->full;
		} else {
			return -EINVAL;
		}
		if (!skip_blanks(&line))
			return -EINVAL;
		if ((e = read_psi_record(&line, r)) < 0)
			return e;
	}
	return some ? 0 : -EINVAL;
}

/*
 * /proc/meminfo: "Key:   <n> kB". Only MemTotal and MemAvailable are read;
 * a line of either that is not "<n> kB" fails, other lines are not looked at.
 */
static int meminfo_value(struct cur *line, uint64_t *bytes)
{
	uint64_t kb;
	int e;

	skip_blanks(line);
	if ((e = read_u64(line, &kb)) < 0)
		return e;
	skip_blanks(line);
	if (!take_word(line, "kB") || !only_space(line))
		return -EINVAL;
	if (kb > UINT64_MAX / 1024)
		return -ERANGE;
	*bytes = kb * 1024;
	return 0;
}

/** ksync_pressure_parse_meminfo() - see <ksync/pressure_testing.h>. */
int ksync_pressure_parse_meminfo(const char *buf, size_t len, uint64_t *total_bytes,
				 uint64_t *available_bytes)
{
	struct cur c = { buf, buf + len }, line;
	bool total = false, avail = false;
	int e;

	while (next_line(&c, &line)) {
		if (take_word(&line, "MemTotal:")) {
			if (total)
				return -EINVAL;
			if ((e = meminfo_value(&line, total_bytes)) < 0)
				return e;
			total = true;
		} else if (take_word(&line, "MemAvailable:")) {
			if (avail)
				return -EINVAL;
			if ((e = meminfo_value(&line, available_bytes)) < 0)
				return e;
			avail = true;
		}
	}
	if (!total || !avail)
		return -ENOENT;
	return *available_bytes <= *total_bytes ? 0 : -EINVAL;
}

/* Copy [p, end) into @dst of @cap bytes, NUL-terminated. */
static int copy_field(char *dst, size_t cap, const char *p, const char *end)
{
	size_t n = (size_t)(end - p);

	if (n >= cap)
		return -ENAMETOOLONG;
	if (memchr(p, '\0', n))
		return -EINVAL;
	memcpy(dst, p, n);
	dst[n] = '\0';
	return 0;
}

/* Whether the comma-separated [p, end) holds @word. */
static bool list_has(const char *p, const char *end, const char *word)
{
	size_t wl = strlen(word);

	while (p <= end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma ? comma : end;

		if ((size_t)(stop - p) == wl && memcmp(p, word, wl) == 0)
			return true;
		if (!comma)
			break;
		p = comma + 1;
	}
	return false;
}

/** ksync_pressure_option_has() - see <ksync/pressure_testing.h>. */
int ksync_pressure_option_has(const char *opts, const char *word)
{
	return list_has(opts, opts + strlen(opts), word);
}

/**
 * ksync_pressure_parse_cgroup() - see <ksync/pressure_testing.h>.
 * Each non-blank line is "<id>:<controllers>:<path>" with a decimal id and a
 * path that starts with '/' (it may hold ':'); the v2 line is id 0 with no
 * controllers. A second v2 or v1 memory line fails.
 */
int ksync_pressure_parse_cgroup(const char *buf, size_t len, struct ksync_pressure_cgroup *out)
{
	struct cur c = { buf, buf + len }, line;

	out->has_v2 = out->has_v1_memory = 0;
	out->v2[0] = out->v1_memory[0] = '\0';
	while (next_line(&c, &line)) {
		const char *ctl, *ctl_end, *path;
		uint64_t id;
		int e;

		if (only_space(&line))
			continue;
		if ((e = read_u64(&line, &id)) < 0)
			return e;
		if (at_end(&line) || *line.p != ':')
			return -EINVAL;
		ctl = ++line.p;
		ctl_end = memchr(ctl, ':', (size_t)(line.end - ctl));
		if (!ctl_end)
			return -EINVAL;
		path = ctl_end + 1;
		if (path >= line.end || *path != '/')
			return -EINVAL;
		if (id == 0 && ctl == ctl_end) {
			if (out->has_v2)
				return -EINVAL;
			if ((e = copy_field(out->v2, sizeof(out->v2), path, line.end)) < 0)
				return e;
			out->has_v2 = 1;
		} else if (list_has(ctl, ctl_end, "memory")) {
			if (out->has_v1_memory)
				return -EINVAL;
			if ((e = copy_field(out->v1_memory, sizeof(out->v1_memory), path, line.end)) < 0)
				return e;
			out->has_v1_memory = 1;
		}
	}
	return 0;
}

/* The next space-separated token of @line (empty tokens fail). */
static bool next_token(struct cur *line, struct cur *tok)
{
	const char *sp;

	if (at_end(line))
		return false;
	sp = memchr(line->p, ' ', (size_t)(line->end - line->p));
	tok->p = line->p;
	tok->end = sp ? sp : line->end;
	line->p = sp ? sp + 1 : line->end;
	return tok->end > tok->p;
}

/* A mountinfo field with its octal escapes (\040 space, \011, \012, \134) decoded. */
static int copy_unescaped(char *dst, size_t cap, const struct cur *tok)
{
	size_t n = 0;

	for (const char *q = tok->p; q < tok->end; q++) {
		char ch = *q;

		if (ch == '\\' && tok->end - q >= 4 && q[1] >= '0' && q[1] <= '3' && q[2] >= '0' &&
		    q[2] <= '7' && q[3] >= '0' && q[3] <= '7') {
			ch = (char)((q[1] - '0') * 64 + (q[2] - '0') * 8 + (q[3] - '0'));
			q += 3;
		}
		if (ch == '\0')
			return -EINVAL;
		if (n + 1 >= cap)
			return -ENAMETOOLONG;
		dst[n++] = ch;
	}
	dst[n] = '\0';
	return 0;
}

/**
 * ksync_pressure_parse_mountinfo_line() - see <ksync/pressure_testing.h>.
 * Six fields, optional fields up to a lone "-", then three more; a trailing
 * newline is allowed. The root and the mount point must be absolute.
 */
int ksync_pressure_parse_mountinfo_line(const char *line, size_t len, struct ksync_pressure_mount *out)
{
	struct cur l = { line, line + len }, tok, root, mnt;
	int e;

	if (len && line[len - 1] == '\n')
		l.end--;
	for (int i = 0; i < 3; i++) /* id, parent id, major:minor */
		if (!next_token(&l, &tok))
			return -EINVAL;
	if (!next_token(&l, &root) || !next_token(&l, &mnt))
		return -EINVAL;
	if (*root.p != '/' || *mnt.p != '/')
		return -EINVAL;
	if (!next_token(&l, &tok)) /* mount options */
		return -EINVAL;
	do { /* optional fields, up to "-" */
		if (!next_token(&l, &tok))
			return -EINVAL;
	} while (!(tok.end - tok.p == 1 && *tok.p == '-'));
	if ((e = copy_unescaped(out->root, sizeof(out->root), &root)) < 0)
		return e;
	if ((e = copy_unescaped(out->mountpoint, sizeof(out->mountpoint), &mnt)) < 0)
		return e;
	if (!next_token(&l, &tok))
		return -EINVAL;
	if ((e = copy_field(out->fstype, sizeof(out->fstype), tok.p, tok.end)) < 0)
		return e;
	if (!next_token(&l, &tok)) /* source */
		return -EINVAL;
	if (!next_token(&l, &tok))
		return -EINVAL;
	if ((e = copy_field(out->super_options, sizeof(out->super_options), tok.p, tok.end)) < 0)
		return e;
	return at_end(&l) ? 0 : -EINVAL;
}

/** ksync_pressure_parse_cgroup_value() - see <ksync/pressure_testing.h>. */
int ksync_pressure_parse_cgroup_value(const char *buf, size_t len, uint64_t *out)
{
	struct cur c = { buf, buf + len };
	int e;

	if (take_word(&c, "max")) {
		*out = KSYNC_PRESSURE_UNLIMITED;
	} else {
		if ((e = read_u64(&c, out)) < 0)
			return e;
		if (*out >= (UINT64_C(1) << 62))
			*out = KSYNC_PRESSURE_UNLIMITED;
	}
	return only_space(&c) ? 0 : -EINVAL;
}

/**
 * ksync_pressure_parse_memory_events() - see <ksync/pressure_testing.h>.
 * Lines "<key> <n>"; unknown keys (oom_group_kill, sock_throttled) are skipped.
 */
int ksync_pressure_parse_memory_events(const char *buf, size_t len,
				       struct ksync_pressure_memory_events *out)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "low ", offsetof(struct ksync_pressure_memory_events, low) },
		{ "high ", offsetof(struct ksync_pressure_memory_events, high) },
		{ "max ", offsetof(struct ksync_pressure_memory_events, max) },
		{ "oom ", offsetof(struct ksync_pressure_memory_events, oom) },
		{ "oom_kill ", offsetof(struct ksync_pressure_memory_events, oom_kill) },
	};
	struct cur c = { buf, buf + len }, line;

	memset(out, 0, sizeof(*out));
	while (next_line(&c, &line)) {
		if (only_space(&line))
			continue;
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			uint64_t v;
			int e;

			if (!take_word(&line, keys[i].key))
				continue;
			if ((e = read_u64(&line, &v)) < 0)
				return e;
			if (!only_space(&line))
				return -EINVAL;
			memcpy((char *)out + keys[i].off, &v, sizeof(v));
			break;
		}
	}
	return 0;
}

/** ksync_pressure_parse_statm() - see <ksync/pressure_testing.h>. */
int ksync_pressure_parse_statm(const char *buf, size_t len, uint64_t *size_pages,
			       uint64_t *resident_pages)
{
	struct cur c = { buf, buf + len };
	int e;

	if ((e = read_u64(&c, size_pages)) < 0)
		return e;
	if (!skip_blanks(&c))
		return -EINVAL;
	if ((e = read_u64(&c, resident_pages)) < 0)
		return e;
	if (!at_end(&c) && !is_space(*c.p))
		return -EINVAL;
	return 0;
}

/** ksync_pressure_parse_capeff() - see <ksync/pressure_testing.h>. */
int ksync_pressure_parse_capeff(const char *buf, size_t len, uint64_t *capeff)
{
	struct cur c = { buf, buf + len }, line;

	while (next_line(&c, &line)) {
		uint64_t v = 0;
		int digits = 0;

		if (!take_word(&line, "CapEff:"))
			continue;
		skip_blanks(&line);
		for (; !at_end(&line); line.p++) {
			char ch = *line.p;
			unsigned d;

			if (is_digit(ch))
				d = (unsigned)(ch - '0');
			else if (ch >= 'a' && ch <= 'f')
				d = (unsigned)(ch - 'a' + 10);
			else if (ch >= 'A' && ch <= 'F')
				d = (unsigned)(ch - 'A' + 10);
			else
				break;
			if (++digits > 16)
				return -ERANGE;
			v = v << 4 | d;
		}
		if (!digits || !only_space(&line))
			return -EINVAL;
		*capeff = v;
		return 0;
	}
	return -ENOENT;
}

/** ksync_pressure_parse_kernel_release() - see <ksync/pressure_testing.h>. */
int ksync_pressure_parse_kernel_release(const char *buf, size_t len, unsigned *major,
					unsigned *minor)
{
	struct cur c = { buf, buf + len };
	uint64_t a, b;
	int e;

	if ((e = read_u64(&c, &a)) < 0)
		return e;
	if (at_end(&c) || *c.p != '.')
		return -EINVAL;
	c.p++;
	if ((e = read_u64(&c, &b)) < 0)
		return e;
	if (a > 0xffff || b > 0xffff)
		return -ERANGE;
	*major = (unsigned)a;
	*minor = (unsigned)b;
	return 0;
}

/* Base64 (RFC 4648), the standard alphabet. */
static const char b64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_value(char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (is_digit(ch))
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

/*
 * ksync_pressure_base64_decode() - see <ksync/pressure_testing.h>.
 * Characters are gathered in quads of 6-bit values; a quad of n (2..4)
 * characters gives n - 1 bytes. '=' may only end the text (after a quad of
 * 2 or 3, padding it to 4); a quad cut short by the end is taken as padded.
 */
int ksync_pressure_base64_decode(const char *in, size_t len, unsigned char *out, size_t cap,
				 size_t *outlen)
{
	uint32_t acc = 0;
	size_t o = 0, pad = 0;
	int n = 0; /* characters in the current quad */

	for (size_t i = 0; i < len; i++) {
		char ch = in[i];
		int v;

		if (is_space(ch))
			continue;
		if (ch == '=') {
			if (n < 2 || n + (int)pad >= 4)
				return -EINVAL;
			pad++;
			continue;
		}
		if (pad)
			return -EINVAL; /* data after padding */
		if ((v = b64_value(ch)) < 0)
			return -EINVAL;
		acc = acc << 6 | (uint32_t)v;
		if (++n == 4) {
			/*
			 * Room for the quad's three bytes. The plant counts one
			 * byte more room than @out has: a buffer one byte short
			 * of a full last quad is written one byte past its end.
			 */
			size_t room = cap + (KSYNC_PLANT(PRESSURE_BASE64_OVERRUN) ? 1 : 0);

			if (o + 3 > room)
				return -ENOSPC;
			out[o++] = (unsigned char)(acc >> 16);
			out[o++] = (unsigned char)(acc >> 8);
			out[o++] = (unsigned char)acc;
			acc = 0;
			n = 0;
		}
	}
	if (pad && n + (int)pad != 4)
		return -EINVAL;
	if (n == 1)
		return -EINVAL;
	if (n == 2) { /* 12 bits: one byte, 4 bits that must be zero */
		if (acc & 0xf)
			return -EINVAL;
		if (o + 1 > cap)
			return -ENOSPC;
		out[o++] = (unsigned char)(acc >> 4);
	} else if (n == 3) { /* 18 bits: two bytes, 2 bits that must be zero */
		if (acc & 0x3)
			return -EINVAL;
		if (o + 2 > cap)
			return -ENOSPC;
		out[o++] = (unsigned char)(acc >> 10);
		out[o++] = (unsigned char)(acc >> 2);
	}
	*outlen = o;
	return 0;
}

/** ksync_pressure_base64_encode() - see <ksync/pressure_testing.h>. */
size_t ksync_pressure_base64_encode(const unsigned char *in, size_t len, char *out, size_t cap)
{
	size_t need = (len + 2) / 3 * 4, o = 0;

	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		size_t left = len - i;
		char q[4];

		if (left > 1)
			v |= (uint32_t)in[i + 1] << 8;
		if (left > 2)
			v |= in[i + 2];
		q[0] = b64_alphabet[v >> 18 & 63];
		q[1] = b64_alphabet[v >> 12 & 63];
		q[2] = left > 1 ? b64_alphabet[v >> 6 & 63] : '=';
		q[3] = left > 2 ? b64_alphabet[v & 63] : '=';
		for (int k = 0; k < 4; k++, o++)
			if (o + 1 < cap)
				out[o] = q[k];
	}
	if (cap)
		out[o < cap ? o : cap - 1] = '\0';
	return need;
}

/** ksync_pressure_parse_trigger() - see <ksync/pressure_testing.h>. */
int ksync_pressure_parse_trigger(const char *buf, size_t len, struct ksync_pressure_trigger *out)
{
	struct cur c = { buf, buf + len };
	uint64_t stall, window;
	int e;

	if (take_word(&c, "some"))
		out->full = 0;
	else if (take_word(&c, "full"))
		out->full = 1;
	else
		return -EINVAL;
	if (!skip_blanks(&c))
		return -EINVAL;
	if ((e = read_u64(&c, &stall)) < 0)
		return e;
	if (!skip_blanks(&c))
		return -EINVAL;
	if ((e = read_u64(&c, &window)) < 0)
		return e;
	if (stall > UINT32_MAX || window > UINT32_MAX)
		return -ERANGE;
	if (!only_space(&c))
		return -EINVAL;
	out->stall_us = (uint32_t)stall;
	out->window_us = (uint32_t)window;
	return 0;
}

/** ksync_pressure_format_trigger() - see <ksync/pressure_testing.h>. */
size_t ksync_pressure_format_trigger(char *buf, size_t cap, const struct ksync_pressure_trigger *t)
{
	int n = snprintf(buf, cap, "%s %u %u", t->full ? "full" : "some", (unsigned)t->stall_us,
			 (unsigned)t->window_us);

	return n < 0 ? 0 : (size_t)n;
}

#define MS 1000u
#define SEC (1000u * MS)

/* @asked with its window replaced by @window and its stall scaled to it. */
static struct ksync_pressure_trigger scaled(const struct ksync_pressure_trigger *asked, uint32_t window)
{
	struct ksync_pressure_trigger t = { asked->full, 0, window };
	uint64_t stall = (uint64_t)asked->stall_us * window / asked->window_us;

	if (stall >= window)
		stall = window - 1;
	if (stall == 0)
		stall = 1;
	t.stall_us = (uint32_t)stall;
	return t;
}

static uint32_t distance(uint32_t a, uint32_t b)
{
	return a > b ? a - b : b - a;
}

/* Append @window unless the list has it already. */
static int add_window(struct ksync_pressure_trigger *out, int n,
		      const struct ksync_pressure_trigger *asked, uint32_t window)
{
	for (int i = 0; i < n; i++)
		if (out[i].window_us == window)
			return n;
	if (n == KSYNC_PRESSURE_MAX_WINDOWS)
		return n;
	out[n] = scaled(asked, window);
	return n + 1;
}

/** ksync_pressure_psi_windows() - see <ksync/pressure_testing.h>. */
int ksync_pressure_psi_windows(const struct ksync_pressure_trigger *asked, unsigned major,
			       unsigned minor, int cap_sys_resource,
			       struct ksync_pressure_trigger out[KSYNC_PRESSURE_MAX_WINDOWS])
{
	bool unprivileged_path = (major > 6 || (major == 6 && minor >= 5)) && !cap_sys_resource;
	uint32_t multiples[5];
	int n = 0;

	out[n++] = *asked;
	if (!unprivileged_path) {
		uint32_t w = asked->window_us;

		w = w < 500 * MS ? 500 * MS : w > 10 * SEC ? 10 * SEC : w;
		n = add_window(out, n, asked, w);
	}
	/* 2, 4, 6, 8, 10 s, nearest to the window asked first (insertion sort). */
	for (int i = 0; i < 5; i++) {
		uint32_t w = (uint32_t)(i + 1) * 2 * SEC;
		int j = i;

		while (j > 0 && distance(multiples[j - 1], asked->window_us) > distance(w, asked->window_us))
			j--;
		memmove(&multiples[j + 1], &multiples[j], (size_t)(i - j) * sizeof(multiples[0]));
		multiples[j] = w;
	}
	for (int i = 0; i < 5; i++)
		n = add_window(out, n, asked, multiples[i]);
	return n;
}

/** ksync_pressure_level_of() - see <ksync/pressure_testing.h>. */
enum ksync_pressure_level ksync_pressure_level_of(uint64_t usage, uint64_t limit,
						  const unsigned permille[KSYNC_PRESSURE_NR_LEVELS])
{
	int level = KSYNC_PRESSURE_NONE;

	if (limit == 0 || limit == KSYNC_PRESSURE_UNLIMITED)
		return KSYNC_PRESSURE_NONE;
	for (int l = KSYNC_PRESSURE_LOW; l <= KSYNC_PRESSURE_CRITICAL; l++) {
		/* usage / limit >= permille / 1000, without overflow: 128-bit products. */
		unsigned __int128 u = (unsigned __int128)usage * 1000;
		unsigned __int128 t = (unsigned __int128)limit * permille[l];

		if (u >= t)
			level = l;
	}
	return (enum ksync_pressure_level)level;
}
