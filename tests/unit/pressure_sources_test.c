/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pressure_sources_test.c - the sources of lib/pressure (pressure_unit_sources).
 *
 * Each source is opened through its ops (lib/pressure/internal.h) on a fake
 * /proc and /sys tree made in a temporary directory (the config's root):
 * cgroup v2 with and without limits, v1, hybrid, a container's mount root,
 * no PSI, files and directories that vanish. The PSI window rules are
 * played through the trigger hook of <ksync/pressure_testing.h> as kernels
 * of each version and privilege; systemd's protocol with a real file, FIFO
 * and AF_UNIX socket; v1 vmpressure with the eventfds it registered. The
 * parsers are checked line by line. Last, the real machine: the PSI sources
 * open here with a 2 s window (the binary exits 77, saying why, where there
 * is no /proc/pressure).
 */
#define _GNU_SOURCE
#include "ktest.h"

#include "internal.h"

#include <ksync/pressure_testing.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- fake trees ---- */

static char root[64];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void tree_new(void)
{
	if (root[0])
		nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(root, sizeof(root), "/tmp/ksync-pressure-XXXXXX");
	KASSERT(mkdtemp(root));
}

static void tree_done(void)
{
	if (root[0])
		nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	root[0] = '\0';
}

static void mkdirs(const char *path)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	}
	mkdir(p, 0755);
}

/* Write @text to root/@rel, making its directories. */
static void put(const char *rel, const char *text)
{
	char path[1024], dir[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	mkdirs(dir);
	f = fopen(path, "w");
	KASSERT(f);
	fputs(text, f);
	fclose(f);
}

static void del(const char *rel)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s%s", root, rel);
	KASSERT(remove(path) == 0);
}

static char *slurp(const char *rel, char *buf, size_t cap)
{
	char path[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	f = fopen(path, "r");
	KASSERT(f);
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

#define PSI_TEXT "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"

/* A kernel: its version, CapEff, and PSI. */
static void kernel(const char *release, int cap_sys_resource, bool psi)
{
	char status[256];

	put("/proc/sys/kernel/osrelease", release);
	snprintf(status, sizeof(status), "Name:\ttest\nCapInh:\t0000000000000000\nCapEff:\t%s\n",
		 cap_sys_resource ? "000001ffffffffff" : "000001fffeffffff");
	put("/proc/self/status", status);
	if (psi)
		put("/proc/pressure/memory", PSI_TEXT);
}

/* A pure cgroup v2 host: the process in /app.slice/svc. */
static void tree_v2(const char *max, const char *high, const char *current)
{
	put("/proc/self/cgroup", "0::/app.slice/svc\n");
	put("/proc/self/mountinfo", "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
				    "30 22 0:26 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n");
	put("/sys/fs/cgroup/cgroup.procs", "");
	put("/sys/fs/cgroup/memory.pressure", PSI_TEXT);
	put("/sys/fs/cgroup/app.slice/memory.max", "max\n");
	put("/sys/fs/cgroup/app.slice/memory.high", "max\n");
	put("/sys/fs/cgroup/app.slice/memory.current", "1\n");
	put("/sys/fs/cgroup/app.slice/svc/memory.pressure", PSI_TEXT);
	put("/sys/fs/cgroup/app.slice/svc/memory.max", max);
	put("/sys/fs/cgroup/app.slice/svc/memory.high", high);
	put("/sys/fs/cgroup/app.slice/svc/memory.current", current);
}

/* A hybrid host like the test machines: v2 at unified (the process at its root), memory on v1. */
static void tree_hybrid(const char *v1_limit, const char *v1_usage)
{
	put("/proc/self/cgroup", "9:name=systemd:/\n4:memory:/grp/job\n1:cpu,cpuacct:/\n0::/\n");
	put("/proc/self/mountinfo",
	    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
	    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
	put("/sys/fs/cgroup/unified/memory.pressure", PSI_TEXT);
	put("/sys/fs/cgroup/memory/grp/job/memory.limit_in_bytes", v1_limit);
	put("/sys/fs/cgroup/memory/grp/job/memory.usage_in_bytes", v1_usage);
	put("/sys/fs/cgroup/memory/grp/job/memory.pressure_level", "");
	put("/sys/fs/cgroup/memory/grp/job/cgroup.event_control", "");
}

/* ---- sources through their ops ---- */

static struct ksync__penv env;

static void env_reset(void)
{
	memset(&env, 0, sizeof(env));
	env.cfg.root = root;
}

static int src_open(struct ksync__psrc *s, enum ksync_pressure_source kind)
{
	memset(s, 0, sizeof(*s));
	s->ops = ksync__psrc_table[kind];
	KASSERT(s->ops && s->ops->kind == kind);
	s->status = s->ops->open(s, &env);
	return s->status;
}

static void src_close(struct ksync__psrc *s)
{
	s->ops->close(s);
}

/* ---- the trigger hook: a kernel of any version and privilege ---- */

enum play { PLAY_WRITE, PLAY_ANY_500MS_10S, PLAY_2S_MULTIPLES, PLAY_EPERM, PLAY_EINVAL };

static struct {
	enum play rule;
	int writes;
	char last[64];
	size_t last_len;
	bool nul_ended;
} hook;

static long play_kernel(int fd, const char *buf, size_t len, void *arg)
{
	struct ksync_pressure_trigger t;

	(void)arg;
	hook.writes++;
	hook.last_len = len < sizeof(hook.last) ? len : sizeof(hook.last) - 1;
	memcpy(hook.last, buf, hook.last_len);
	hook.last[hook.last_len] = '\0';
	hook.nul_ended = len && buf[len - 1] == '\0';
	if (hook.rule == PLAY_WRITE)
		return write(fd, buf, len) < 0 ? -errno : (long)len;
	if (hook.rule == PLAY_EPERM)
		return -EPERM;
	if (hook.rule == PLAY_EINVAL || ksync_pressure_parse_trigger(buf, len, &t) < 0)
		return -EINVAL;
	if (t.stall_us == 0 || t.stall_us > t.window_us)
		return -EINVAL;
	if (hook.rule == PLAY_ANY_500MS_10S)
		return t.window_us >= 500000 && t.window_us <= 10000000 ? (long)len : -EINVAL;
	return t.window_us % 2000000 == 0 && t.window_us <= 10000000 ? (long)len : -EINVAL;
}

static void play(enum play rule)
{
	memset(&hook, 0, sizeof(hook));
	hook.rule = rule;
	ksync_pressure_set_write_hook(play_kernel, NULL);
}

static void unplay(void)
{
	ksync_pressure_set_write_hook(NULL, NULL);
}

/* ---- parsers ---- */

KTEST(parse_psi_lines)
{
	struct ksync_pressure_psi p;
	const char good[] = "some avg10=1.25 avg60=0.50 avg300=100.00 total=123456\n"
			    "full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n";

	KCHECK_EQ(ksync_pressure_parse_psi(good, strlen(good), &p), 0);
	KCHECK_EQ(p.some.avg10, 125);
	KCHECK_EQ(p.some.avg60, 50);
	KCHECK_EQ(p.some.avg300, 10000);
	KCHECK_EQ(p.some.total_us, 123456);
	KCHECK(p.has_full);
	KCHECK_EQ(p.full.total_us, 7);
	/* "some" alone (cpu before 5.13), and no newline at the end. */
	KCHECK_EQ(ksync_pressure_parse_psi(good, 52, &p), 0);
	KCHECK(!p.has_full);
	KCHECK_EQ(ksync_pressure_parse_psi("full avg10=0.00 avg60=0.00 avg300=0.00 total=7", 46, &p), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_psi("", 0, &p), -EINVAL);
	const char big[] = "some avg10=100.01 avg60=0.00 avg300=0.00 total=1\n";
	KCHECK_EQ(ksync_pressure_parse_psi(big, strlen(big), &p), -ERANGE);
	const char bad[] = "some avg10=1.2 avg60=0.00 avg300=0.00 total=1\n";
	KCHECK_EQ(ksync_pressure_parse_psi(bad, strlen(bad), &p), -EINVAL);
	const char twice[] = "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n"
			     "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n";
	KCHECK_EQ(ksync_pressure_parse_psi(twice, strlen(twice), &p), -EINVAL);
	const char huge[] = "some avg10=0.00 avg60=0.00 avg300=0.00 total=99999999999999999999\n";
	KCHECK_EQ(ksync_pressure_parse_psi(huge, strlen(huge), &p), -ERANGE);
}

KTEST(parse_meminfo_cgroup_values)
{
	const char mi[] = "MemTotal:       16384000 kB\nMemFree:  100 kB\nMemAvailable:    4096000 kB\n";
	uint64_t total = 0, avail = 0, v = 0;

	KCHECK_EQ(ksync_pressure_parse_meminfo(mi, strlen(mi), &total, &avail), 0);
	KCHECK_EQ(total, 16384000ull * 1024);
	KCHECK_EQ(avail, 4096000ull * 1024);
	KCHECK_EQ(ksync_pressure_parse_meminfo(mi, 44, &total, &avail), -ENOENT); /* MemTotal, MemFree */
	const char mb[] = "MemTotal: 10 MB\nMemAvailable: 1 kB\n";
	KCHECK_EQ(ksync_pressure_parse_meminfo(mb, strlen(mb), &total, &avail), -EINVAL);

	KCHECK_EQ(ksync_pressure_parse_cgroup_value("max\n", 4, &v), 0);
	KCHECK(v == KSYNC_PRESSURE_UNLIMITED);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value("9223372036854771712\n", 20, &v), 0); /* v1 unlimited */
	KCHECK(v == KSYNC_PRESSURE_UNLIMITED);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value("134217728\n", 10, &v), 0);
	KCHECK_EQ(v, 134217728);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value("12ab", 4, &v), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value("", 0, &v), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value("-1", 2, &v), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value("99999999999999999999", 20, &v), -ERANGE);

	struct ksync_pressure_memory_events ev;
	const char evt[] = "low 1\nhigh 22\nmax 333\noom 4\noom_kill 5\noom_group_kill 6\n";
	KCHECK_EQ(ksync_pressure_parse_memory_events(evt, strlen(evt), &ev), 0);
	KCHECK(ev.low == 1 && ev.high == 22 && ev.max == 333 && ev.oom == 4 && ev.oom_kill == 5);
	KCHECK_EQ(ksync_pressure_parse_memory_events("high x\n", 7, &ev), -EINVAL);

	uint64_t size = 0, res = 0, cap = 0;
	KCHECK_EQ(ksync_pressure_parse_statm("765 411 382 5 0 123 0\n", 22, &size, &res), 0);
	KCHECK(size == 765 && res == 411);
	KCHECK_EQ(ksync_pressure_parse_statm("765", 3, &size, &res), -EINVAL);

	const char st[] = "Name:\tx\nCapPrm:\t0000000000000001\nCapEff:\t000001fffeffffff\nCapBnd:\t0\n";
	KCHECK_EQ(ksync_pressure_parse_capeff(st, strlen(st), &cap), 0);
	KCHECK(cap == 0x1fffeffffffull);
	KCHECK(!(cap >> KSYNC_PRESSURE_CAP_SYS_RESOURCE & 1)); /* this machine: root without the capability */
	KCHECK_EQ(ksync_pressure_parse_capeff("Name:\tx\n", 8, &cap), -ENOENT);

	unsigned maj = 0, min = 0;
	KCHECK_EQ(ksync_pressure_parse_kernel_release("6.18.44-fc-v669\n", 16, &maj, &min), 0);
	KCHECK(maj == 6 && min == 18);
	KCHECK_EQ(ksync_pressure_parse_kernel_release("5.4", 3, &maj, &min), 0);
	KCHECK(maj == 5 && min == 4);
	KCHECK_EQ(ksync_pressure_parse_kernel_release("six", 3, &maj, &min), -EINVAL);

	const unsigned pm[KSYNC_PRESSURE_NR_LEVELS] = { 0, 800, 900, 950 };
	KCHECK_EQ(ksync_pressure_level_of(799, 1000, pm), KSYNC_PRESSURE_NONE);
	KCHECK_EQ(ksync_pressure_level_of(800, 1000, pm), KSYNC_PRESSURE_LOW);
	KCHECK_EQ(ksync_pressure_level_of(900, 1000, pm), KSYNC_PRESSURE_MEDIUM);
	KCHECK_EQ(ksync_pressure_level_of(UINT64_MAX - 1, UINT64_MAX - 2, pm), KSYNC_PRESSURE_CRITICAL);
	KCHECK_EQ(ksync_pressure_level_of(5, 0, pm), KSYNC_PRESSURE_NONE);
	KCHECK_EQ(ksync_pressure_level_of(5, KSYNC_PRESSURE_UNLIMITED, pm), KSYNC_PRESSURE_NONE);
}

KTEST(parse_cgroup_and_mountinfo)
{
	static struct ksync_pressure_cgroup cg;
	static struct ksync_pressure_mount m;
	const char hybrid[] = "9:name=systemd:/\n4:cpu,memory:/process_api/62d0\n0::/\n";
	const char v2[] = "0::/user.slice/user-0.slice/a:b\n";

	KCHECK_EQ(ksync_pressure_parse_cgroup(hybrid, strlen(hybrid), &cg), 0);
	KCHECK(cg.has_v2 && strcmp(cg.v2, "/") == 0);
	KCHECK(cg.has_v1_memory && strcmp(cg.v1_memory, "/process_api/62d0") == 0);
	KCHECK_EQ(ksync_pressure_parse_cgroup(v2, strlen(v2), &cg), 0);
	KCHECK(cg.has_v2 && strcmp(cg.v2, "/user.slice/user-0.slice/a:b") == 0 && !cg.has_v1_memory);
	KCHECK_EQ(ksync_pressure_parse_cgroup("4:memoryx:/a\n", 13, &cg), 0); /* not "memory" */
	KCHECK(!cg.has_v1_memory);
	KCHECK_EQ(ksync_pressure_parse_cgroup("0::relative\n", 12, &cg), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_cgroup("x::/\n", 5, &cg), -EINVAL);

	const char l1[] = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:7 master:2 - cgroup2 cgroup2 rw\n";
	KCHECK_EQ(ksync_pressure_parse_mountinfo_line(l1, strlen(l1), &m), 0);
	KCHECK(strcmp(m.root, "/") == 0 && strcmp(m.mountpoint, "/sys/fs/cgroup/unified") == 0);
	KCHECK(strcmp(m.fstype, "cgroup2") == 0 && strcmp(m.super_options, "rw") == 0);
	const char l2[] = "35 31 0:32 /docker/a\\040b /sys/fs/cgroup/mem\\134ory rw - cgroup cgroup rw,memory";
	KCHECK_EQ(ksync_pressure_parse_mountinfo_line(l2, strlen(l2), &m), 0);
	KCHECK(strcmp(m.root, "/docker/a b") == 0 && strcmp(m.mountpoint, "/sys/fs/cgroup/mem\\ory") == 0);
	KCHECK(ksync_pressure_option_has(m.super_options, "memory"));
	KCHECK(!ksync_pressure_option_has(m.super_options, "mem"));
	KCHECK_EQ(ksync_pressure_parse_mountinfo_line("35 31 0:32 / /x rw cgroup", 25, &m), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_mountinfo_line("", 0, &m), -EINVAL);
}

KTEST(parse_base64_and_triggers)
{
	const char *trig = "some 200000 2000000";
	char enc[64];
	unsigned char dec[64];
	size_t n = 0;
	struct ksync_pressure_trigger t;

	KCHECK_EQ(ksync_pressure_base64_encode((const unsigned char *)trig, strlen(trig), enc, sizeof(enc)), 28);
	KCHECK(strcmp(enc, "c29tZSAyMDAwMDAgMjAwMDAwMA==") == 0);
	KCHECK_EQ(ksync_pressure_base64_decode(enc, strlen(enc), dec, sizeof(dec), &n), 0);
	KCHECK(n == strlen(trig) && memcmp(dec, trig, n) == 0);
	/* Unpadded and with whitespace, as an environment may carry it. */
	const char spaced[] = "c29t\nZSAy MDAwMDAgMjAwMDAwMA";
	KCHECK_EQ(ksync_pressure_base64_decode(spaced, strlen(spaced), dec, sizeof(dec), &n), 0);
	KCHECK(n == strlen(trig) && memcmp(dec, trig, n) == 0);
	KCHECK_EQ(ksync_pressure_base64_decode("c29t*A==", 8, dec, sizeof(dec), &n), -EINVAL);
	KCHECK_EQ(ksync_pressure_base64_decode("c2=9", 4, dec, sizeof(dec), &n), -EINVAL);
	KCHECK_EQ(ksync_pressure_base64_decode("c", 1, dec, sizeof(dec), &n), -EINVAL);
	KCHECK_EQ(ksync_pressure_base64_decode("c3==", 4, dec, sizeof(dec), &n), -EINVAL); /* bits left */
	KCHECK_EQ(ksync_pressure_base64_decode(enc, strlen(enc), dec, 18, &n), -ENOSPC);
	KCHECK_EQ(ksync_pressure_base64_decode("", 0, dec, 0, &n), 0);
	KCHECK_EQ(n, 0);

	KCHECK_EQ(ksync_pressure_parse_trigger(trig, strlen(trig) + 1, &t), 0); /* with its NUL */
	KCHECK(t.full == 0 && t.stall_us == 200000 && t.window_us == 2000000);
	KCHECK_EQ(ksync_pressure_parse_trigger("full 1 2\n", 9, &t), 0);
	KCHECK(t.full == 1);
	KCHECK_EQ(ksync_pressure_parse_trigger("half 1 2", 8, &t), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_trigger("some 1 4294967296", 17, &t), -ERANGE);
	t = (struct ksync_pressure_trigger){ 1, 1, 2 };
	KCHECK_EQ(ksync_pressure_format_trigger(enc, sizeof(enc), &t), 8);
	KCHECK(strcmp(enc, "full 1 2") == 0);
}

static void check_windows(const struct ksync_pressure_trigger *asked, unsigned maj, unsigned min, int cap,
			  const uint32_t *want, int nwant)
{
	struct ksync_pressure_trigger out[KSYNC_PRESSURE_MAX_WINDOWS];
	int n = ksync_pressure_psi_windows(asked, maj, min, cap, out);

	KCHECK_EQ(n, nwant);
	for (int i = 0; i < n && i < nwant; i++) {
		KCHECK_EQ(out[i].window_us, want[i]);
		KCHECK(out[i].stall_us >= 1 && out[i].stall_us < out[i].window_us);
		KCHECK_EQ(out[i].full, asked->full);
	}
}

KTEST(psi_window_rule)
{
	struct ksync_pressure_trigger one_s = { 0, 100000, 1000000 }, fast = { 1, 10000, 100000 };
	struct ksync_pressure_trigger three = { 0, 150000, 3000000 }, twelve = { 0, 600000, 12000000 };
	struct ksync_pressure_trigger out[KSYNC_PRESSURE_MAX_WINDOWS];

	/* 6.5+ without the capability: multiples of 2 s, nearest first. */
	check_windows(&one_s, 6, 18, 0, (const uint32_t[]){ 1000000, 2000000, 4000000, 6000000, 8000000, 10000000 }, 6);
	check_windows(&three, 6, 5, 0, (const uint32_t[]){ 3000000, 2000000, 4000000, 6000000, 8000000, 10000000 }, 6);
	check_windows(&twelve, 7, 0, 0, (const uint32_t[]){ 12000000, 10000000, 8000000, 6000000, 4000000, 2000000 }, 6);
	/* Before 6.5, or with the capability: 500 ms..10 s, then the multiples. */
	check_windows(&fast, 5, 15, 1, (const uint32_t[]){ 100000, 500000, 2000000, 4000000, 6000000, 8000000, 10000000 }, 7);
	check_windows(&fast, 6, 4, 0, (const uint32_t[]){ 100000, 500000, 2000000, 4000000, 6000000, 8000000, 10000000 }, 7);
	check_windows(&one_s, 6, 18, 1, (const uint32_t[]){ 1000000, 2000000, 4000000, 6000000, 8000000, 10000000 }, 6);
	check_windows(&twelve, 6, 1, 1, (const uint32_t[]){ 12000000, 10000000, 8000000, 6000000, 4000000, 2000000 }, 6);
	/* The stall scales with the window. */
	KCHECK_EQ(ksync_pressure_psi_windows(&one_s, 6, 18, 0, out), 6);
	KCHECK_EQ(out[1].stall_us, 200000);
	KCHECK_EQ(ksync_pressure_psi_windows(&fast, 5, 15, 0, out), 7);
	KCHECK_EQ(out[1].stall_us, 50000);
	/* A stall equal to the window stays below the new one. */
	struct ksync_pressure_trigger all = { 0, 1000000, 1000000 };
	KCHECK_EQ(ksync_pressure_psi_windows(&all, 6, 18, 0, out), 6);
	KCHECK_EQ(out[1].stall_us, 1999999);
}

/* ---- PSI sources on fake trees ---- */

KTEST(psi_sources_v2_and_system)
{
	struct ksync__psrc s;

	tree_new();
	env_reset();
	kernel("6.18.44\n", 0, true);
	tree_v2("max\n", "max\n", "5\n");
	play(PLAY_2S_MULTIPLES);
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_PSI_CGROUP), 0);
	KCHECK_EQ(s.nr_fds, 3);
	for (int i = 0; i < 3; i++) {
		KCHECK_EQ(s.fd_level[i], KSYNC_PRESSURE_LOW + i);
		KCHECK_EQ(s.fd_events[i], EPOLLPRI);
		KCHECK((fcntl(s.fd[i], F_GETFL) & O_ACCMODE) == O_RDWR);
		KCHECK(fcntl(s.fd[i], F_GETFL) & O_NONBLOCK);
		KCHECK(fcntl(s.fd[i], F_GETFD) & FD_CLOEXEC);
	}
	KCHECK_EQ(hook.writes, 3);
	KCHECK(hook.nul_ended);
	KCHECK(strcmp(hook.last, "full 100000 2000000") == 0); /* CRITICAL's default, last */
	KCHECK(strstr(s.desc, "/sys/fs/cgroup/app.slice/svc/memory.pressure"));
	KCHECK(strstr(s.desc, "low some 70 ms/2 s"));
	KCHECK_EQ(s.ops->ready(&s, 1, EPOLLPRI), KSYNC_PRESSURE_MEDIUM);
	KCHECK_EQ(s.ops->ready(&s, 2, EPOLLPRI), KSYNC_PRESSURE_CRITICAL);
	KCHECK_EQ(s.ops->ready(&s, 0, 0), KSYNC_PRESSURE_NONE);
	/* The cgroup removed: the kernel wakes the trigger with POLLERR. */
	KCHECK_EQ(s.ops->ready(&s, 0, EPOLLERR | EPOLLHUP | EPOLLPRI), -ENODEV);
	KCHECK(strstr(s.desc, "removed"));
	src_close(&s);

	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_PSI_SYSTEM), 0);
	KCHECK(strstr(s.desc, "/proc/pressure/memory"));
	src_close(&s);
	unplay();
}

KTEST(psi_container_mount_root_and_hybrid)
{
	struct ksync__psrc s;

	tree_new();
	env_reset();
	kernel("6.6.0\n", 0, true);
	/* A container: the mount shows the hierarchy from /docker/abc down. */
	put("/proc/self/cgroup", "0::/docker/abc/worker\n");
	put("/proc/self/mountinfo", "30 22 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n");
	put("/sys/fs/cgroup/worker/memory.pressure", PSI_TEXT);
	play(PLAY_2S_MULTIPLES);
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_PSI_CGROUP), 0);
	KCHECK(strstr(s.desc, "/sys/fs/cgroup/worker/memory.pressure"));
	src_close(&s);
	/* A path outside the mount's root is not visible through it. */
	put("/proc/self/cgroup", "0::/docker/abcd\n");
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_PSI_CGROUP), -ENOENT);
	KCHECK(strstr(s.desc, "no cgroup v2 directory"));
	src_close(&s);

	/* Hybrid, as here: the process at the v2 root of /sys/fs/cgroup/unified. */
	tree_new();
	env_reset();
	kernel("6.18.44\n", 0, true);
	tree_hybrid("1073741824\n", "5\n");
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_PSI_CGROUP), 0);
	KCHECK(strstr(s.desc, "/sys/fs/cgroup/unified/memory.pressure"));
	src_close(&s);
	unplay();
}

KTEST(psi_no_psi_no_permission)
{
	struct ksync__psrc s;

	tree_new();
	env_reset();
	kernel("6.18.44\n", 0, false); /* no /proc/pressure */
	put("/proc/self/cgroup", "0::/a\n");
	put("/proc/self/mountinfo", "30 22 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	put("/sys/fs/cgroup/a/cgroup.procs", "");
	play(PLAY_2S_MULTIPLES);
	KCHECK(src_open(&s, KSYNC_PRESSURE_SRC_PSI_SYSTEM) < 0);
	KCHECK(strcmp(s.desc, "no /proc/pressure (kernel without PSI, or psi=0)") == 0);
	src_close(&s);
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_PSI_CGROUP), -ENOENT);
	KCHECK(strstr(s.desc, "no /sys/fs/cgroup/a/memory.pressure (kernel without PSI"));
	src_close(&s);
	/* No /proc/self/cgroup at all. */
	del("/proc/self/cgroup");
	KCHECK(src_open(&s, KSYNC_PRESSURE_SRC_PSI_CGROUP) < 0);
	KCHECK(strstr(s.desc, "no cgroup v2 directory"));
	src_close(&s);
	/* A file we may not open for writing (as root: permission bits do not stop us; the hook does). */
	kernel("5.10.0\n", 0, true);
	play(PLAY_EPERM);
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_PSI_SYSTEM), -EPERM);
	KCHECK(strstr(s.desc, "no permission to write a trigger"));
	src_close(&s);
	play(PLAY_EINVAL);
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_PSI_SYSTEM), -EINVAL);
	KCHECK(strstr(s.desc, "refused every window for low"));
	KCHECK_EQ(hook.writes, 5); /* every candidate for 2 s on a 5.10 kernel: 2, 4, 6, 8, 10 s */
	src_close(&s);
	unplay();
}

/* One kernel of each sort, through the hook: which window each level took. */
KTEST(psi_windows_by_kernel_and_privilege)
{
	struct ksync__psrc s;

	tree_new();
	env_reset();
	for (int l = KSYNC_PRESSURE_LOW; l <= KSYNC_PRESSURE_CRITICAL; l++)
		env.cfg.trigger[l] = (struct ksync_pressure_trigger){ l == KSYNC_PRESSURE_CRITICAL, 10000, 100000 };

	/* Before 6.5 with CAP_SYS_RESOURCE: 500 ms..10 s: 100 ms -> 500 ms. */
	kernel("5.15.0-91-generic\n", 1, true);
	play(PLAY_ANY_500MS_10S);
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_PSI_SYSTEM), 0);
	KCHECK(strcmp(hook.last, "full 50000 500000") == 0);
	KCHECK(strstr(s.desc, "(window 100 ms refused, 500 ms taken)"));
	src_close(&s);
	/* Before 6.5 without the capability: the kernel says EPERM. */
	kernel("5.15.0\n", 0, true);
	play(PLAY_EPERM);
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_PSI_SYSTEM), -EPERM);
	KCHECK(strstr(s.desc, "no permission"));
	src_close(&s);
	/* 6.5+ without the capability: multiples of 2 s. */
	kernel("6.5.0\n", 0, true);
	play(PLAY_2S_MULTIPLES);
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_PSI_SYSTEM), 0);
	KCHECK(strcmp(hook.last, "full 200000 2000000") == 0);
	KCHECK(strstr(s.desc, "(window 100 ms refused, 2 s taken)"));
	KCHECK_EQ(hook.writes, 6); /* asked, then 2 s, per level */
	src_close(&s);
	/* 6.5+ with the capability: 500 ms..10 s again. */
	kernel("6.18.44\n", 1, true);
	play(PLAY_ANY_500MS_10S);
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_PSI_SYSTEM), 0);
	KCHECK(strcmp(hook.last, "full 50000 500000") == 0);
	src_close(&s);
	/* A window the kernel takes as asked: no fallback mentioned. */
	for (int l = KSYNC_PRESSURE_LOW; l <= KSYNC_PRESSURE_CRITICAL; l++)
		env.cfg.trigger[l].window_us = 1000000;
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_PSI_SYSTEM), 0);
	KCHECK(!strstr(s.desc, "refused"));
	KCHECK(strstr(s.desc, "critical full 10 ms/1 s"));
	src_close(&s);
	unplay();
}

/* ---- systemd ---- */

KTEST(systemd_unset_devnull_bad_base64)
{
	struct ksync__psrc s;

	tree_new();
	env_reset();
	KCHECK(src_open(&s, KSYNC_PRESSURE_SRC_SYSTEMD) < 0);
	KCHECK(strcmp(s.desc, "not started by systemd with MemoryPressureWatch=") == 0);
	src_close(&s);
	env.cfg.systemd_watch = "/dev/null";
	KCHECK(src_open(&s, KSYNC_PRESSURE_SRC_SYSTEMD) < 0);
	KCHECK(strstr(s.desc, "disabled by the unit"));
	src_close(&s);
	put("/psi", PSI_TEXT);
	char path[512];
	snprintf(path, sizeof(path), "%s/psi", root);
	env.cfg.systemd_watch = path;
	env.cfg.systemd_write = "c29tZSAy*DAwMDAgMjAwMDAwMA==";
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_SYSTEMD), -EINVAL);
	KCHECK(strcmp(s.desc, "MEMORY_PRESSURE_WRITE is not valid base64") == 0);
	src_close(&s);
	snprintf(path, sizeof(path), "%s/absent", root);
	env.cfg.systemd_write = NULL;
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_SYSTEMD), -ENOENT);
	KCHECK(strstr(s.desc, "MEMORY_PRESSURE_WATCH="));
	src_close(&s);
}

KTEST(systemd_psi_file)
{
	struct ksync__psrc s;
	char path[512];

	tree_new();
	env_reset();
	kernel("6.18.44\n", 0, false);
	put("/memory.pressure", PSI_TEXT);
	snprintf(path, sizeof(path), "%s/memory.pressure", root);
	env.cfg.systemd_watch = path;
	env.cfg.systemd_write = "c29tZSAyMDAwMDAgMjAwMDAwMA=="; /* "some 200000 2000000", systemd's default */
	play(PLAY_2S_MULTIPLES);
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_SYSTEMD), 0);
	KCHECK_EQ(s.nr_fds, 1);
	KCHECK_EQ(s.fd_events[0], EPOLLPRI);
	KCHECK_EQ(s.fd_level[0], KSYNC_PRESSURE_MEDIUM);
	KCHECK(strcmp(hook.last, "some 200000 2000000") == 0 && hook.nul_ended);
	KCHECK(strstr(s.desc, "some 200 ms/2 s"));
	KCHECK_EQ(s.ops->ready(&s, 0, EPOLLPRI), KSYNC_PRESSURE_MEDIUM);
	KCHECK_EQ(s.ops->ready(&s, 0, EPOLLERR), -ENODEV);
	src_close(&s);
	/* A unit's trigger with a window this kernel refuses: the fallback applies. */
	env.cfg.systemd_write = "c29tZSAxMDAwMDAgMTAwMDAwMA=="; /* "some 100000 1000000" */
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_SYSTEMD), 0);
	KCHECK(strcmp(hook.last, "some 200000 2000000") == 0);
	KCHECK(strstr(s.desc, "refused"));
	src_close(&s);
	/* systemd's own encoding carries the NUL: written once, not twice. */
	env.cfg.systemd_write = "c29tZSAyMDAwMDAgMjAwMDAwMAA="; /* "some 200000 2000000\0" */
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_SYSTEMD), 0);
	KCHECK(strcmp(hook.last, "some 200000 2000000") == 0);
	KCHECK_EQ(hook.last_len, 20);
	src_close(&s);
	/* A WRITE that is no trigger we parse goes to the kernel as it is, with one NUL. */
	env.cfg.systemd_write = "c29tZSBzb29u"; /* "some soon" */
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_SYSTEMD), -EINVAL); /* the played kernel refuses it */
	KCHECK_EQ(hook.last_len, 10);
	KCHECK(strstr(s.desc, "refused the trigger"));
	src_close(&s);
	/* No MEMORY_PRESSURE_WRITE: the medium trigger of the config. */
	env.cfg.systemd_write = NULL;
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_SYSTEMD), 0);
	KCHECK(strcmp(hook.last, "some 100000 2000000") == 0);
	src_close(&s);
	unplay();
}

KTEST(systemd_fifo)
{
	struct ksync__psrc s;
	char path[512];
	int w;

	tree_new();
	env_reset();
	snprintf(path, sizeof(path), "%s/fifo", root);
	KASSERT(mkfifo(path, 0600) == 0);
	env.cfg.systemd_watch = path;
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_SYSTEMD), 0);
	KCHECK_EQ(s.fd_events[0], EPOLLIN);
	KCHECK(strstr(s.desc, "FIFO"));
	KCHECK((fcntl(s.fd[0], F_GETFL) & O_ACCMODE) == O_RDONLY);
	w = open(path, O_WRONLY | O_NONBLOCK);
	KASSERT(w >= 0);
	KCHECK_EQ(write(w, "pressure!", 9), 9);
	KCHECK_EQ(s.ops->ready(&s, 0, EPOLLIN), KSYNC_PRESSURE_MEDIUM);
	KCHECK_EQ(s.ops->ready(&s, 0, EPOLLIN), KSYNC_PRESSURE_NONE); /* drained */
	close(w);
	/* The writer gone: no POLLHUP (the source keeps a writer of its own). */
	struct pollfd pfd = { s.fd[0], POLLIN, 0 };
	KCHECK_EQ(poll(&pfd, 1, 0), 0);
	KCHECK_EQ(s.ops->ready(&s, 0, EPOLLIN), KSYNC_PRESSURE_NONE);
	src_close(&s);
}

KTEST(systemd_socket)
{
	struct ksync__psrc s;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[64] = "";
	int srv, conn;
	ssize_t n;

	tree_new();
	env_reset();
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", root);
	srv = socket(AF_UNIX, SOCK_STREAM, 0);
	KASSERT(srv >= 0);
	KASSERT(bind(srv, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	KASSERT(listen(srv, 4) == 0);
	env.cfg.systemd_watch = sa.sun_path;
	env.cfg.systemd_write = "c29tZSAyMDAwMDAgMjAwMDAwMA==";
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_SYSTEMD), 0);
	KCHECK(strstr(s.desc, "socket"));
	KCHECK_EQ(s.fd_events[0], EPOLLIN);
	conn = accept(srv, NULL, NULL);
	KASSERT(conn >= 0);
	n = read(conn, buf, sizeof(buf) - 1);
	KCHECK_EQ(n, 19);
	KCHECK(memcmp(buf, "some 200000 2000000", 19) == 0);
	KCHECK_EQ(s.ops->ready(&s, 0, EPOLLIN), KSYNC_PRESSURE_NONE); /* nothing yet */
	KCHECK_EQ(write(conn, "x", 1), 1);
	KCHECK_EQ(s.ops->ready(&s, 0, EPOLLIN), KSYNC_PRESSURE_MEDIUM);
	close(conn); /* the server goes away */
	KCHECK_EQ(s.ops->ready(&s, 0, EPOLLIN | EPOLLHUP), -EPIPE);
	KCHECK(strstr(s.desc, "socket closed"));
	src_close(&s);
	/* Nobody listening. */
	close(srv);
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_SYSTEMD), -ECONNREFUSED);
	KCHECK(strstr(s.desc, "cannot connect"));
	src_close(&s);
}

/* A server that accepts nobody: the second connection finds the backlog full and is refused, not blocked. */
KTEST(systemd_socket_backlog_full)
{
	struct ksync__psrc a, b;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int srv;

	tree_new();
	env_reset();
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", root);
	srv = socket(AF_UNIX, SOCK_STREAM, 0);
	KASSERT(srv >= 0);
	KASSERT(bind(srv, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	KASSERT(listen(srv, 0) == 0);
	env.cfg.systemd_watch = sa.sun_path;
	KCHECK_EQ(src_open(&a, KSYNC_PRESSURE_SRC_SYSTEMD), 0);
	KCHECK_EQ(src_open(&b, KSYNC_PRESSURE_SRC_SYSTEMD), -EAGAIN);
	KCHECK(strstr(b.desc, "cannot connect"));
	src_close(&b);
	src_close(&a);
	close(srv);
}

/* ---- cgroup v1 vmpressure ---- */

KTEST(vmpressure_eventfds)
{
	struct ksync__psrc s;
	char text[512], want[512];
	uint64_t one = 1;

	tree_new();
	env_reset();
	tree_hybrid("1073741824\n", "5\n");
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_VMPRESSURE), 0);
	KCHECK(strstr(s.desc, "/sys/fs/cgroup/memory/grp/job/memory.pressure_level"));
	KCHECK_EQ(s.nr_fds, 3);
	/* The registrations: "<eventfd> <pressure_level fd> <level>", one a line. */
	slurp("/sys/fs/cgroup/memory/grp/job/cgroup.event_control", text, sizeof(text));
	int pfd = -1;
	KCHECK_EQ(sscanf(text, "%*d %d", &pfd), 1);
	snprintf(want, sizeof(want), "%d %d low\n%d %d medium\n%d %d critical\n", s.fd[0], pfd, s.fd[1], pfd,
		 s.fd[2], pfd);
	KCHECK(strcmp(text, want) == 0);
	for (int i = 0; i < 3; i++) {
		KCHECK_EQ(s.fd_events[i], EPOLLIN);
		KCHECK_EQ(s.ops->ready(&s, i, EPOLLIN), KSYNC_PRESSURE_NONE); /* nothing yet */
		KCHECK_EQ(write(s.fd[i], &one, sizeof(one)), 8);
		KCHECK_EQ(s.ops->ready(&s, i, EPOLLIN), KSYNC_PRESSURE_LOW + i);
		KCHECK_EQ(s.ops->ready(&s, i, EPOLLIN), KSYNC_PRESSURE_NONE); /* the counter was read */
	}
	/* The group removed: its last signal is not an event. */
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/sys/fs/cgroup/memory/grp/job", root);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	KCHECK_EQ(write(s.fd[1], &one, sizeof(one)), 8);
	KCHECK_EQ(s.ops->ready(&s, 1, EPOLLIN), -ENODEV);
	KCHECK(strstr(s.desc, "the memory cgroup was removed"));
	src_close(&s);

	/* A pure v2 host has no v1 memory controller. */
	tree_new();
	env_reset();
	tree_v2("max\n", "max\n", "1\n");
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_VMPRESSURE), -ENOENT);
	KCHECK(strcmp(s.desc, "no cgroup v1 memory controller") == 0);
	src_close(&s);
}

/* ---- polled sources ---- */

KTEST(limit_v2_v1_hybrid)
{
	struct ksync__psrc s;

	/* v2 with memory.max 128 MiB and memory.high lower (120 MiB): the lower one binds. */
	tree_new();
	env_reset();
	tree_v2("134217728\n", "125829120\n", "100000000\n");
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_LIMIT), 0);
	KCHECK(s.polled && s.nr_fds == 0);
	KCHECK_EQ(s.limit, 125829120);
	KCHECK_EQ(s.figure, 100000000);
	KCHECK(strstr(s.desc, "/sys/fs/cgroup/app.slice/svc/memory.current"));
	KCHECK(strstr(s.desc, "120 MiB"));
	KCHECK_EQ(s.ops->sample(&s), KSYNC_PRESSURE_NONE); /* 794.7 per mille */
	put("/sys/fs/cgroup/app.slice/svc/memory.current", "113246208\n"); /* 900 per mille */
	KCHECK_EQ(s.ops->sample(&s), KSYNC_PRESSURE_MEDIUM);
	put("/sys/fs/cgroup/app.slice/svc/memory.current", "125829120\n");
	KCHECK_EQ(s.ops->sample(&s), KSYNC_PRESSURE_CRITICAL);
	put("/sys/fs/cgroup/app.slice/svc/memory.current", "1000\n");
	KCHECK_EQ(s.ops->sample(&s), KSYNC_PRESSURE_NONE);
	KCHECK_EQ(s.figure, 1000);
	/* The limit moves while the program runs (senpai lowers memory.high): read again. */
	put("/sys/fs/cgroup/app.slice/svc/memory.current", "100000000\n");
	put("/sys/fs/cgroup/app.slice/svc/memory.high", "104857600\n"); /* 953.7 per mille */
	KCHECK_EQ(s.ops->sample(&s), KSYNC_PRESSURE_CRITICAL);
	KCHECK_EQ(s.limit, 104857600);
	put("/sys/fs/cgroup/app.slice/svc/memory.high", "max\n"); /* memory.max binds again */
	KCHECK_EQ(s.ops->sample(&s), KSYNC_PRESSURE_NONE);
	KCHECK_EQ(s.limit, 134217728);
	put("/sys/fs/cgroup/app.slice/svc/memory.max", "max\n"); /* lifted: no pressure */
	KCHECK_EQ(s.ops->sample(&s), KSYNC_PRESSURE_NONE);
	put("/sys/fs/cgroup/app.slice/svc/memory.max", "134217728\n");
	put("/sys/fs/cgroup/app.slice/svc/memory.high", "125829120\n");
	/* The cgroup removed under the monitor. */
	del("/sys/fs/cgroup/app.slice/svc/memory.current");
	KCHECK_EQ(s.ops->sample(&s), -ENOENT);
	KCHECK(strstr(s.desc, "vanished"));
	src_close(&s);

	/* The parent's limit is tighter: measured at the parent. */
	tree_new();
	env_reset();
	env.cfg.limit_permille[KSYNC_PRESSURE_LOW] = 500;
	tree_v2("max\n", "max\n", "1\n");
	put("/sys/fs/cgroup/app.slice/memory.max", "1000\n");
	put("/sys/fs/cgroup/app.slice/memory.current", "600\n");
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_LIMIT), 0);
	KCHECK_EQ(s.limit, 1000);
	KCHECK(strstr(s.desc, "/sys/fs/cgroup/app.slice/memory.current"));
	KCHECK_EQ(s.ops->sample(&s), KSYNC_PRESSURE_LOW); /* 600 >= 500 per mille */
	src_close(&s);

	/* v2 without any limit, no v1: off. */
	tree_new();
	env_reset();
	tree_v2("max\n", "max\n", "1\n");
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_LIMIT), -ENOENT);
	KCHECK(strstr(s.desc, "no limit"));
	src_close(&s);

	/* Hybrid: v1 memory.limit_in_bytes. */
	tree_new();
	env_reset();
	tree_hybrid("1073741824\n", "966367642\n");
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_LIMIT), 0);
	KCHECK(strstr(s.desc, "/sys/fs/cgroup/memory/grp/job/memory.usage_in_bytes"));
	KCHECK(strstr(s.desc, "1 GiB"));
	KCHECK_EQ(s.ops->sample(&s), KSYNC_PRESSURE_MEDIUM);
	src_close(&s);
	/* A v1 parent's limit binds the group (hierarchical): measured at the parent. */
	put("/sys/fs/cgroup/memory/grp/job/memory.limit_in_bytes", "9223372036854771712\n");
	put("/sys/fs/cgroup/memory/grp/memory.limit_in_bytes", "1000000\n");
	put("/sys/fs/cgroup/memory/grp/memory.usage_in_bytes", "960000\n");
	put("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_LIMIT), 0);
	KCHECK_EQ(s.limit, 1000000);
	KCHECK(strstr(s.desc, "/sys/fs/cgroup/memory/grp/memory.usage_in_bytes against"));
	KCHECK_EQ(s.ops->sample(&s), KSYNC_PRESSURE_CRITICAL);
	src_close(&s);
	del("/sys/fs/cgroup/memory/grp/memory.limit_in_bytes");
	/* v1 unlimited (as on the test machines). */
	put("/sys/fs/cgroup/memory/grp/job/memory.limit_in_bytes", "9223372036854771712\n");
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_LIMIT), -ENOENT);
	KCHECK(strstr(s.desc, "no limit"));
	src_close(&s);
	/* No cgroup at all. */
	tree_new();
	env_reset();
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_LIMIT), -ENOENT);
	KCHECK(strcmp(s.desc, "no memory cgroup found") == 0);
	src_close(&s);
}

KTEST(meminfo_and_budget)
{
	struct ksync__psrc s;
	long page = sysconf(_SC_PAGESIZE);

	tree_new();
	env_reset();
	put("/proc/meminfo", "MemTotal: 1000000 kB\nMemFree: 1 kB\nMemAvailable: 300000 kB\n");
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_MEMINFO), 0);
	KCHECK(s.polled);
	KCHECK_EQ(s.limit, 1000000ull * 1024);
	KCHECK_EQ(s.figure, 700000ull * 1024);
	KCHECK(strstr(s.desc, "/proc/meminfo"));
	KCHECK_EQ(s.ops->sample(&s), KSYNC_PRESSURE_NONE);
	put("/proc/meminfo", "MemTotal: 1000000 kB\nMemAvailable: 40000 kB\n");
	KCHECK_EQ(s.ops->sample(&s), KSYNC_PRESSURE_CRITICAL);
	del("/proc/meminfo");
	KCHECK_EQ(s.ops->sample(&s), -ENOENT);
	KCHECK(strstr(s.desc, "/proc/meminfo vanished"));
	src_close(&s);
	put("/proc/meminfo", "MemTotal: 1000000 kB\nMemFree: 1 kB\n"); /* before 3.14 */
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_MEMINFO), -ENOENT);
	KCHECK(strstr(s.desc, "no MemTotal or MemAvailable"));
	src_close(&s);

	put("/proc/self/statm", "2000 1000 10 1 0 500 0\n");
	env.cfg.budget_bytes = 2000 * (uint64_t)page;
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_BUDGET), 0);
	KCHECK_EQ(s.figure, 1000 * (uint64_t)page);
	KCHECK_EQ(s.limit, 2000 * (uint64_t)page);
	KCHECK(strstr(s.desc, "resident set"));
	KCHECK_EQ(s.ops->sample(&s), KSYNC_PRESSURE_NONE);
	put("/proc/self/statm", "2000 1950 10 1 0 500 0\n");
	KCHECK_EQ(s.ops->sample(&s), KSYNC_PRESSURE_CRITICAL);
	put("/proc/self/statm", "garbage\n");
	KCHECK_EQ(s.ops->sample(&s), -EINVAL);
	KCHECK(strstr(s.desc, "cannot parse /proc/self/statm"));
	src_close(&s);
	/* A budget of 0 is the monitor's misuse (refused at create); here only off. */
	env.cfg.budget_bytes = 0;
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_BUDGET), -EINVAL);
	KCHECK(strcmp(s.desc, "no budget (budget_bytes is 0)") == 0);
	src_close(&s);
	/* The real process (root ""): some resident set, below a 1 TiB budget. */
	env.cfg.root = "";
	env.cfg.budget_bytes = 1ull << 40;
	KCHECK_EQ(src_open(&s, KSYNC_PRESSURE_SRC_BUDGET), 0);
	KCHECK(s.figure > 0);
	KCHECK_EQ(s.ops->sample(&s), KSYNC_PRESSURE_NONE);
	src_close(&s);
	tree_done();
}

KTEST(table_by_kind)
{
	for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++) {
		if (k == KSYNC_PRESSURE_SRC_TEST) {
			KCHECK(ksync__psrc_table[k] == NULL);
			continue;
		}
		KCHECK(ksync__psrc_table[k] != NULL);
		KCHECK_EQ(ksync__psrc_table[k]->kind, k);
		KCHECK(ksync__psrc_table[k]->open && ksync__psrc_table[k]->close && ksync__psrc_table[k]->ready);
		bool polled = k == KSYNC_PRESSURE_SRC_LIMIT || k == KSYNC_PRESSURE_SRC_MEMINFO ||
			      k == KSYNC_PRESSURE_SRC_BUDGET;
		KCHECK_EQ(ksync__psrc_table[k]->sample != NULL, polled);
	}
}

/* ---- the real machine ---- */

static const char *real_skip;
static const char *const kind_names[] = { "systemd", "psi-cgroup", "psi-system", "vmpressure", "limit", "meminfo" };

KTEST(real_psi_sources)
{
	struct stat st;
	int ep;

	if (stat("/proc/pressure/memory", &st) < 0) {
		real_skip = "no /proc/pressure/memory here (a kernel without PSI, or psi=0)";
		return;
	}
	memset(&env, 0, sizeof(env));
	env.cfg.root = "";
	ep = epoll_create1(EPOLL_CLOEXEC);
	KASSERT(ep >= 0);
	for (int k = KSYNC_PRESSURE_SRC_PSI_CGROUP; k <= KSYNC_PRESSURE_SRC_PSI_SYSTEM; k++) {
		struct ksync__psrc s;
		int r = src_open(&s, (enum ksync_pressure_source)k);

		printf("  real %s: %s: %s\n", kind_names[k], r ? "off" : "ok", s.desc);
		if (r == 0) {
			KCHECK_EQ(s.nr_fds, 3);
			/* Each trigger fd is one epoll takes for EPOLLPRI. */
			for (int i = 0; i < s.nr_fds; i++) {
				struct epoll_event ev = { .events = s.fd_events[i], .data.u32 = (uint32_t)i };

				KCHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, s.fd[i], &ev), 0);
				epoll_ctl(ep, EPOLL_CTL_DEL, s.fd[i], NULL);
			}
		} else {
			/* Only the environment may refuse: permission or no file, never EINVAL on every window. */
			KCHECK(r != -EINVAL);
		}
		src_close(&s);
	}
	close(ep);
	/* A 1 s window: taken where the kernel allows it, else the nearest it takes (here: 2 s). */
	for (int l = KSYNC_PRESSURE_LOW; l <= KSYNC_PRESSURE_CRITICAL; l++)
		env.cfg.trigger[l] = (struct ksync_pressure_trigger){ l == KSYNC_PRESSURE_CRITICAL, 50000, 1000000 };
	for (int k = KSYNC_PRESSURE_SRC_PSI_CGROUP; k <= KSYNC_PRESSURE_SRC_PSI_SYSTEM; k++) {
		struct ksync__psrc s;
		int r = src_open(&s, (enum ksync_pressure_source)k);

		printf("  real %s, 1 s asked: %s: %s\n", kind_names[k], r ? "off" : "ok", s.desc);
		KCHECK(r != -EINVAL);
		src_close(&s);
	}
	memset(env.cfg.trigger, 0, sizeof(env.cfg.trigger));
	/* Whatever else the machine has, described (not asserted: it varies). */
	for (int k = KSYNC_PRESSURE_SRC_SYSTEMD; k <= KSYNC_PRESSURE_SRC_MEMINFO; k++) {
		struct ksync__psrc s;

		if (k == KSYNC_PRESSURE_SRC_PSI_CGROUP || k == KSYNC_PRESSURE_SRC_PSI_SYSTEM)
			continue;
		int r = src_open(&s, (enum ksync_pressure_source)k);

		printf("  real %s: %s: %s\n", kind_names[k], r ? "off" : "ok", s.desc);
		src_close(&s);
	}
}

int main(int argc, char **argv)
{
	int r = ktest_run(argc, argv);

	tree_done();
	if (r == 0 && real_skip) {
		printf("SKIP: %s (every other case passed)\n", real_skip);
		return 77;
	}
	return r;
}
