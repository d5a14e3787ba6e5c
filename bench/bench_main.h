// SPDX-License-Identifier: BSD-2-Clause
// bench_main.h - the end of main() in a benchmark binary that registers its
// benchmarks at run time (RegisterBenchmark) and so cannot use
// benchmark_main: hand argv to Google Benchmark, refuse a flag it does not
// know (a typo must not silently run everything), run, shut down.
#ifndef KSYNC_BENCH_MAIN_H
#define KSYNC_BENCH_MAIN_H

#include <benchmark/benchmark.h>

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
