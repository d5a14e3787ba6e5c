// SPDX-License-Identifier: BSD-2-Clause
// Micro-benchmarks of ksync::shrinker: register+unregister (6.7 shape) alone
// and beside group walkers, set_shrinker_bit, a group walk that finds one
// shrinker among thousands of ids, a global walk, and walk scaling.
#include <ksync/shrinker.h>

#include <benchmark/benchmark.h>

#include <atomic>
#include <thread>
#include <vector>

namespace {

unsigned long count_cb(struct ksync_shrinker *, struct ksync_shrink_control *)
{
	return 64;
}

unsigned long scan_cb(struct ksync_shrinker *, struct ksync_shrink_control *sc)
{
	return sc->nr_to_scan;
}

struct ksync_shrinker *make(ksync_shrinker_registry *reg, unsigned flags)
{
	struct ksync_shrinker *s = ksync_shrinker_alloc(reg, flags, "bench");
	s->count_objects = count_cb;
	s->scan_objects = scan_cb;
	ksync_shrinker_register(s);
	return s;
}

// A registry with @nr memcg-aware shrinkers and @ng groups; one bit per group.
struct Fixture {
	ksync_shrinker_registry *reg;
	std::vector<ksync_shrinker *> shrinkers;
	std::vector<ksync_shrinker_group *> groups;

	Fixture(int nr, int ng)
	{
		reg = ksync_shrinker_registry_create(1);
		for (int g = 0; g < ng; g++)
			groups.push_back(ksync_shrinker_group_create(reg, nullptr));
		for (int i = 0; i < nr; i++)
			shrinkers.push_back(make(reg, KSYNC_SHRINKER_MEMCG_AWARE));
		for (int g = 0; g < ng; g++)
			ksync_set_shrinker_bit(groups[g], 0, shrinkers[(g * 37) % nr]->id);
	}
	~Fixture()
	{
		for (auto *s : shrinkers)
			ksync_shrinker_free(s);
		for (auto *g : groups)
			ksync_shrinker_group_destroy(g);
		ksync_shrinker_registry_destroy(reg);
	}
};

void BM_register_unregister(benchmark::State &state)
{
	Fixture f(static_cast<int>(state.range(0)), 16);
	for (auto _ : state) {
		struct ksync_shrinker *s = make(f.reg, KSYNC_SHRINKER_MEMCG_AWARE);
		ksync_shrinker_free(s);
	}
}
BENCHMARK(BM_register_unregister)->Arg(64)->Arg(4000);

// The same with one thread walking groups meanwhile: unregister must not
// wait for walkers of other shrinkers.
void BM_register_unregister_under_walks(benchmark::State &state)
{
	Fixture f(4000, 256);
	std::atomic<bool> stop{false};
	std::thread walker([&] {
		unsigned i = 0;
		while (!stop.load(std::memory_order_relaxed))
			ksync_shrink_slab(f.reg, 0, f.groups[i++ % f.groups.size()], 0);
	});
	for (auto _ : state) {
		struct ksync_shrinker *s = make(f.reg, KSYNC_SHRINKER_MEMCG_AWARE);
		ksync_shrinker_free(s);
	}
	stop = true;
	walker.join();
}
BENCHMARK(BM_register_unregister_under_walks)->UseRealTime();

void BM_set_shrinker_bit(benchmark::State &state)
{
	Fixture f(4000, 64);
	unsigned i = 0;
	for (auto _ : state) {
		ksync_set_shrinker_bit(f.groups[i % 64], 0, f.shrinkers[i % 4000]->id);
		i++;
	}
}
BENCHMARK(BM_set_shrinker_bit);

void BM_group_walk(benchmark::State &state)
{
	Fixture f(static_cast<int>(state.range(0)), 1024);
	unsigned i = 0;
	for (auto _ : state)
		benchmark::DoNotOptimize(ksync_shrink_slab(f.reg, 0, f.groups[i++ % 1024], 0));
}
BENCHMARK(BM_group_walk)->Arg(64)->Arg(4000);

void BM_global_walk(benchmark::State &state)
{
	Fixture f(static_cast<int>(state.range(0)), 1);
	for (auto _ : state)
		benchmark::DoNotOptimize(ksync_shrink_slab(f.reg, 0, nullptr, 0));
	state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_global_walk)->Arg(64)->Arg(4000);

Fixture *scaling;
void BM_group_walk_threads(benchmark::State &state)
{
	if (state.thread_index() == 0)
		scaling = new Fixture(4000, 1024);
	// benchmark synchronises threads before and after the loop
	unsigned i = static_cast<unsigned>(state.thread_index()) * 97u;
	for (auto _ : state)
		benchmark::DoNotOptimize(ksync_shrink_slab(scaling->reg, 0, scaling->groups[i++ % 1024], 0));
	if (state.thread_index() == 0) {
		delete scaling;
		scaling = nullptr;
	}
}
BENCHMARK(BM_group_walk_threads)->ThreadRange(1, 2)->UseRealTime();

} // namespace
