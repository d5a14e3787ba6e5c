// SPDX-License-Identifier: BSD-2-Clause
// bench_objcache: alloc+free pairs of 64-byte objects, the object cache's
// fast path beside its peers (Google Benchmark, ThreadRange(1, N), real
// time, so that with N threads the time per item is 1 / the total rate):
//
//   malloc/pair             glibc malloc(64) + free (its tcache: the
//                           allocator every program already has);
//   freelist/pair           a per-thread singly linked free list, pop + push:
//                           the floor, what a hand-rolled cache costs;
//   objcache_unaccounted    ksync_objcache_alloc + free, no accounting;
//   objcache_A              ksync_objcache_alloc_group + free charged to one
//                           online group, design A (per-group child caches);
//   objcache_B              the same, design B (charge handles, per-thread
//                           stock of 5 handles).
//
// Then the charge stock (design B, one thread): pairs alternating among 8
// groups (one group per pair, g0 g1 ... g7 g0 ...) against pairs charged to
// one group, with a 1-slot and a 5-slot stock (stock/slots:S/groups:G). The
// same figures come from examples/dead_caches (stock_loss_8_groups); this
// suite puts them in Google Benchmark's JSON beside the others.
//
// Theory of operation: the caches, the groups and their set are made once
// in main() before the benchmarks run and torn down after (the A cache
// needs every group gone first); each benchmark thread uses them through
// its own magazines and stock, flushed when Google Benchmark's threads exit.
// --bench_max_threads=N (before the Google Benchmark flags) caps ThreadRange
// (default: the number of CPUs, at least 2).
#include "bench_main.h"

#include <benchmark/benchmark.h>

extern "C" {
#include <ksync/memgroup.h>
#include <ksync/objcache.h>
#include <ksync/srcu.h>
}

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

constexpr size_t kObj = 64;
int g_max_threads = 2;

struct World {
	ksync_memgroup_set *set = nullptr;
	ksync_memgroup *parent = nullptr;
	ksync_memgroup *g[8] = {};
	ksync_objcache *plain = nullptr, *a = nullptr, *b = nullptr;
} w;

ksync_objcache *make(const char *name, unsigned flags, ksync_objcache_design design)
{
	ksync_objcache_config cfg{};
	cfg.design = design;
	cfg.groups = flags ? w.set : nullptr;
	return ksync_objcache_create_config(name, kObj, 0, flags, nullptr, &cfg);
}

bool world_up()
{
	w.set = ksync_memgroup_set_create();
	if (!w.set || !(w.parent = ksync_memgroup_create(w.set, nullptr)))
		return false;
	for (auto &g : w.g)
		if (!(g = ksync_memgroup_create(w.set, w.parent)))
			return false;
	w.plain = make("bench-unaccounted", 0, KSYNC_OBJCACHE_CHARGE_HANDLES);
	w.a = make("bench-A", KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_PER_GROUP);
	w.b = make("bench-B", KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_CHARGE_HANDLES);
	return w.plain && w.a && w.b;
}

int world_down()
{
	int rc = 0;

	ksync_objcache_drain_thread();
	for (auto g : w.g)
		if (g)
			ksync_memgroup_offline(g);
	if (w.parent)
		ksync_memgroup_offline(w.parent);
	if (w.set)
		ksync_srcu_barrier(ksync_memgroup_set_srcu(w.set));
	for (ksync_objcache *c : { w.plain, w.a, w.b })
		if (c && ksync_objcache_destroy(c) != 0)
			rc = 1;
	if (w.set && ksync_memgroup_set_destroy(w.set) != 0)
		rc = 1;
	return rc;
}

// ---- peers

void bm_malloc(benchmark::State &state)
{
	for (auto _ : state) {
		void *p = std::malloc(kObj);
		benchmark::DoNotOptimize(p);
		std::free(p);
	}
	state.SetItemsProcessed(state.iterations());
}

struct Node {
	Node *next;
	char pad[kObj - sizeof(Node *)];
};

void bm_freelist(benchmark::State &state)
{
	// The thread's own list, filled once (a cache would refill it in batches).
	static thread_local Node *head;
	static thread_local Node pool[64];
	head = nullptr;
	for (Node &n : pool) {
		n.next = head;
		head = &n;
	}
	for (auto _ : state) {
		Node *n = head;
		head = n->next;
		benchmark::DoNotOptimize(n);
		n->next = head;
		head = n;
	}
	state.SetItemsProcessed(state.iterations());
}

// ---- the object cache

void bm_objcache(benchmark::State &state, ksync_objcache *const *cache, bool charged)
{
	ksync_memgroup *g = charged ? w.g[0] : nullptr;
	for (auto _ : state) {
		void *p = ksync_objcache_alloc_group(*cache, g);
		if (!p) {
			state.SkipWithError("alloc failed");
			break;
		}
		benchmark::DoNotOptimize(p);
		ksync_objcache_free(*cache, p);
	}
	state.SetItemsProcessed(state.iterations());
}

// Design B, one thread, range(0) stock slots, range(1) groups (1 or 8).
void bm_stock(benchmark::State &state)
{
	const int groups = static_cast<int>(state.range(1));
	ksync_objcache_set_stock_slots(static_cast<int>(state.range(0)));
	unsigned i = 0;
	for (auto _ : state) {
		void *p = ksync_objcache_alloc_group(w.b, w.g[i++ & (groups - 1)]);
		if (!p) {
			state.SkipWithError("alloc failed");
			break;
		}
		benchmark::DoNotOptimize(p);
		ksync_objcache_free(w.b, p);
	}
	ksync_objcache_set_stock_slots(KSYNC_OBJCACHE_STOCK_MAX);
	state.SetItemsProcessed(state.iterations());
}

void register_all()
{
	benchmark::RegisterBenchmark("malloc/pair", bm_malloc)->ThreadRange(1, g_max_threads)->UseRealTime();
	benchmark::RegisterBenchmark("freelist/pair", bm_freelist)->ThreadRange(1, g_max_threads)->UseRealTime();
	benchmark::RegisterBenchmark("objcache_unaccounted/pair", bm_objcache, &w.plain, false)
		->ThreadRange(1, g_max_threads)
		->UseRealTime();
	benchmark::RegisterBenchmark("objcache_A/pair", bm_objcache, &w.a, true)
		->ThreadRange(1, g_max_threads)
		->UseRealTime();
	benchmark::RegisterBenchmark("objcache_B/pair", bm_objcache, &w.b, true)
		->ThreadRange(1, g_max_threads)
		->UseRealTime();
	benchmark::RegisterBenchmark("stock", bm_stock)
		->ArgNames({ "slots", "groups" })
		->ArgsProduct({ { 1, 5 }, { 1, 8 } })
		->UseRealTime();
}

} // namespace

int main(int argc, char **argv)
{
	g_max_threads = bench_take_max_threads(&argc, argv);
	if (!world_up()) {
		std::fprintf(stderr, "bench_objcache: setup failed\n");
		return 1;
	}
	register_all();
	int rc = bench_run_registered(argc, argv);
	return rc ? rc : world_down();
}
