// SPDX-License-Identifier: BSD-2-Clause
// Memory groups: the statistics fast path (no read section while the group is
// online) against a version that always enters the read section (the seed's
// patch 2 before patch 3), in a tight loop and in a loop that does some work
// per update; charging through a handle; and the cost of taking a group
// offline with N charge handles (objects) pointing at it.
#include <benchmark/benchmark.h>

extern "C" {
#include <ksync/memgroup.h>
#include <ksync/objcg.h>
}

namespace {

struct Fixture {
	ksync_memgroup_set *set = ksync_memgroup_set_create();
	ksync_memgroup *root = ksync_memgroup_create(set, nullptr);
	ksync_memgroup *g = ksync_memgroup_create(set, root);
	~Fixture()
	{
		ksync_memgroup_offline(g);
		ksync_memgroup_offline(root);
		ksync_memgroup_set_destroy(set);
	}
};

void BM_stat_add_fast_path(benchmark::State &state)
{
	Fixture f;
	for (auto _ : state)
		ksync_memgroup_stat_add(f.g, 0, KSYNC_MEMGROUP_STAT_USER0, 1);
}
BENCHMARK(BM_stat_add_fast_path);

void BM_stat_add_always_section(benchmark::State &state)
{
	Fixture f;
	for (auto _ : state)
		ksync_memgroup_stat_add_always_locked(f.g, 0, KSYNC_MEMGROUP_STAT_USER0, 1);
}
BENCHMARK(BM_stat_add_always_section);

// A "realistic" loop: each update accompanies some work on a small buffer.
template <bool Fast> void realistic(benchmark::State &state)
{
	Fixture f;
	unsigned char buf[256] = {};
	unsigned x = 1;
	for (auto _ : state) {
		for (unsigned i = 0; i < sizeof(buf); i++)
			buf[i] = (unsigned char)(buf[i] * 33u + (x += i));
		benchmark::DoNotOptimize(buf);
		if (Fast)
			ksync_memgroup_stat_add(f.g, 0, KSYNC_MEMGROUP_STAT_USER0, 1);
		else
			ksync_memgroup_stat_add_always_locked(f.g, 0, KSYNC_MEMGROUP_STAT_USER0, 1);
	}
}
void BM_stat_add_realistic_fast_path(benchmark::State &state) { realistic<true>(state); }
void BM_stat_add_realistic_always_section(benchmark::State &state) { realistic<false>(state); }
BENCHMARK(BM_stat_add_realistic_fast_path);
BENCHMARK(BM_stat_add_realistic_always_section);

void BM_objcg_charge(benchmark::State &state)
{
	Fixture f;
	ksync_objcg *h = ksync_memgroup_get_objcg(f.g);
	for (auto _ : state)
		ksync_objcg_charge(h, 0, 1, 64);
	ksync_objcg_put(h);
}
BENCHMARK(BM_objcg_charge);

// Offline with N objects charged: each object holds a charge handle of the
// group (the group's one handle: offline moves one pointer, whatever N is).
void BM_offline_with_objects(benchmark::State &state)
{
	ksync_memgroup_set *set = ksync_memgroup_set_create();
	ksync_memgroup *root = ksync_memgroup_create(set, nullptr);
	const long n = state.range(0);
	for (auto _ : state) {
		state.PauseTiming();
		ksync_memgroup *g = ksync_memgroup_create(set, root);
		ksync_objcg *h = ksync_memgroup_get_objcg(g);
		for (long i = 0; i < n; i++) {
			ksync_objcg_get(h);
			ksync_objcg_charge(h, 0, 1, 64);
		}
		state.ResumeTiming();
		ksync_memgroup_offline(g);
		state.PauseTiming();
		for (long i = 0; i < n; i++) {
			ksync_objcg_charge(h, 0, -1, -64);
			ksync_objcg_put(h);
		}
		ksync_objcg_put(h);
		state.ResumeTiming();
	}
	ksync_memgroup_offline(root);
	ksync_memgroup_set_destroy(set);
}
BENCHMARK(BM_offline_with_objects)->Arg(1)->Arg(1000)->Arg(100000);

} // namespace
