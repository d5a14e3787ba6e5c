// SPDX-License-Identifier: BSD-2-Clause
// bench_main.h - the end of main() in a benchmark binary that registers its
// benchmarks at run time (RegisterBenchmark) and so cannot use
// benchmark_main: hand argv to Google Benchmark, refuse a flag it does not
// know (a typo must not silently run everything), run, shut down.
#ifndef KSYNC_BENCH_MAIN_H
#define KSYNC_BENCH_MAIN_H

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

// The benchmarks' own flag --bench_max_threads=N, taken out of argv before
// Google Benchmark sees it: returns N (at least 1), or the CPUs (at least 2)
// when the flag is absent.
inline int bench_take_max_threads(int *argc, char **argv)
{
	const char *flag = "--bench_max_threads=";
	int max = std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		if (std::strncmp(argv[i], flag, std::strlen(flag)) == 0)
			max = std::max(1, std::atoi(argv[i] + std::strlen(flag)));
		else
			argv[out++] = argv[i];
	}
	*argc = out;
	return max;
}

inline int bench_run_registered(int argc, char **argv)
{
	benchmark::Initialize(&argc, argv);
	if (benchmark::ReportUnrecognizedArguments(argc, argv))
		return 1;
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	return 0;
}

#endif
