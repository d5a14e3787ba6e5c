// SPDX-License-Identifier: BSD-2-Clause
// bench_registry - shrinker registration at idle and under walks: ksync's
// lockless registry (ksync::shrinker, the kernel's 6.7 design) against the
// reclaim-storm demo's rwlock registry (the kernel's earlier shrinker_rwsem),
// both from examples/reclaim_storm through the demo's registry interface.
//
//   ksync_shrinker/register_unregister/mounts:M   one mount + umount (alloc,
//   legacy_rwlock/register_unregister/mounts:M    register, unregister, free)
//                                                 with M other mounts
//                                                 registered, nothing else
//                                                 running: the idle cost
//   .../register_unregister_after_walk/mounts:M   the same with one other
//                                                 thread alive that walked
//                                                 once and now sleeps: idle,
//                                                 as in a program whose
//                                                 reclaim threads have run
//   .../register_unregister_walking/real_time     the same while one thread
//                                                 walks groups without pause
#include <benchmark/benchmark.h>

#include "bench_main.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

extern "C" {
void *bench_reg_create(int legacy, int ng, int nm);
void bench_reg_destroy(void *b);
void bench_reg_cycle(void *b);
void bench_reg_walk(void *b, unsigned i);
void bench_reg_thread_stats(void);
}

namespace {

void bm_cycle(benchmark::State &st, int legacy)
{
	void *b = bench_reg_create(legacy, 16, static_cast<int>(st.range(0)));
	for (auto _ : st)
		bench_reg_cycle(b);
	bench_reg_destroy(b);
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}

// A reclaim thread that walked once and waits, blocked, until the cycles end.
void bm_cycle_after_walk(benchmark::State &st, int legacy)
{
	void *b = bench_reg_create(legacy, 16, static_cast<int>(st.range(0)));
	std::mutex m;
	std::condition_variable cv;
	bool walked = false, stop = false;
	std::thread walker([&] {
		bench_reg_thread_stats();
		bench_reg_walk(b, 0);
		std::unique_lock<std::mutex> lk(m);
		walked = true;
		cv.notify_all();
		cv.wait(lk, [&] { return stop; });
	});
	{
		std::unique_lock<std::mutex> lk(m);
		cv.wait(lk, [&] { return walked; });
	}
	for (auto _ : st)
		bench_reg_cycle(b);
	{
		std::lock_guard<std::mutex> lk(m);
		stop = true;
	}
	cv.notify_all();
	walker.join();
	bench_reg_destroy(b);
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}

void bm_cycle_walking(benchmark::State &st, int legacy)
{
	void *b = bench_reg_create(legacy, 256, 1000);
	std::atomic<bool> stop{false};
	std::atomic<unsigned long> walks{0};
	std::thread walker([&] {
		bench_reg_thread_stats();
		unsigned i = 0;
		while (!stop.load(std::memory_order_relaxed))
			bench_reg_walk(b, i++);
		walks.store(i);
	});
	for (auto _ : st)
		bench_reg_cycle(b);
	stop = true;
	walker.join();
	bench_reg_destroy(b);
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
	st.counters["walks"] = benchmark::Counter(static_cast<double>(walks.load()));
}

} // namespace

int main(int argc, char **argv)
{
	for (int legacy = 0; legacy <= 1; legacy++) {
		const char *mod = legacy ? "legacy_rwlock" : "ksync_shrinker";
		benchmark::RegisterBenchmark((std::string(mod) + "/register_unregister").c_str(), bm_cycle, legacy)
			->ArgName("mounts")
			->Arg(64)
			->Arg(1000);
	}
	for (int legacy = 0; legacy <= 1; legacy++) {
		const char *mod = legacy ? "legacy_rwlock" : "ksync_shrinker";
		benchmark::RegisterBenchmark((std::string(mod) + "/register_unregister_after_walk").c_str(),
					     bm_cycle_after_walk, legacy)
			->ArgName("mounts")
			->Arg(64);
	}
	for (int legacy = 0; legacy <= 1; legacy++) {
		const char *mod = legacy ? "legacy_rwlock" : "ksync_shrinker";
		benchmark::RegisterBenchmark((std::string(mod) + "/register_unregister_walking").c_str(),
					     bm_cycle_walking, legacy)
			->UseRealTime();
	}
	return bench_run_registered(argc, argv);
}
