/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/replay_main.c - a plain main() for the fuzz targets, so that their
 * checked-in corpora (fuzz/corpus/<target>/) are replayed by every build
 * with tests, gcc included, and not only by clang builds with libFuzzer.
 *
 *   replay_<target> FILE|DIR...
 *
 * Each FILE is read and passed to LLVMFuzzerTestOneInput once; a DIR stands
 * for every regular file in it (not recursively), in name order so that two
 * runs replay the same sequence. LLVMFuzzerInitialize runs first when the
 * target defines one. A failed check aborts, as under libFuzzer; the name of
 * the input goes to stderr before it runs, so the crash points at it.
 * Exit status: 0 when every input ran, 1 when one could not be read (or no
 * argument was given, or a directory was empty: a corpus that vanished must
 * not pass silently).
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Optional in a target: weak, so that a target without one still links. */
extern int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			uint8_t *nb;

			cap = cap ? 2 * cap : 4096;
			nb = realloc(buf, cap);
			if (!nb) {
				fprintf(stderr, "replay: %s: out of memory\n", path);
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	/*
	 * An exact-size copy: ASan then sees a read past the input, as it does
	 * under libFuzzer (the buffer above has slack).
	 */
	{
		uint8_t *exact = malloc(len ? len : 1);

		if (!exact) {
			fprintf(stderr, "replay: %s: out of memory\n", path);
			free(buf);
			return -1;
		}
		if (len)
			memcpy(exact, buf, len);
		free(buf);
		LLVMFuzzerTestOneInput(exact, len);
		free(exact);
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of @dir, in name order; the number run, or -1. */
static long run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	long ran = 0;

	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue; /* ".", "..", and hidden files (editors' leftovers) */
		if (n == cap) {
			char **nn;

			cap = cap ? 2 * cap : 64;
			nn = realloc(names, cap * sizeof(*names));
			if (!nn) {
				ran = -1;
				break;
			}
			names = nn;
		}
		names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
		if (!names[n]) {
			ran = -1;
			break;
		}
		sprintf(names[n], "%s/%s", dir, e->d_name);
		n++;
	}
	closedir(d);
	if (ran == 0 && n)
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (ran >= 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(names[i]) < 0)
				ran = -1;
			else
				ran++;
		}
		free(names[i]);
	}
	free(names);
	if (ran < 0)
		fprintf(stderr, "replay: %s: could not be read in full\n", dir);
	else if (ran == 0) {
		fprintf(stderr, "replay: %s: no input in it\n", dir);
		ran = -1;
	}
	return ran;
}

int main(int argc, char **argv)
{
	long total = 0;
	int failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 1;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			failed = 1;
		} else if (S_ISDIR(st.st_mode)) {
			long n = run_dir(argv[i]);

			if (n < 0)
				failed = 1;
			else
				total += n;
		} else if (run_file(argv[i]) < 0) {
			failed = 1;
		} else {
			total++;
		}
	}
	printf("replay: %ld inputs ran%s\n", total, failed ? ", some could not be read" : "");
	return failed;
}
