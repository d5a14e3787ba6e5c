// SPDX-License-Identifier: BSD-2-Clause
// ksync::list_lru: add+del and count on the global list and on a group's
// list, against one plain list under one mutex (what a cache would write
// without list_lru); the same from 2 threads on lists of their own (per-list
// locks) and on the one mutex; walking a group's list among 1 or 10,000
// groups (the lookup does not depend on the number of groups); walking a
// node (every group's list) with 1 and 10,000 groups holding items.
// On a shared machine, compare within one run and interleave the cases:
//   bench_list_lru --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true
#include <benchmark/benchmark.h>

#include <pthread.h>

#include <memory>
#include <vector>

extern "C" {
#include <ksync/list_lru.h>
#include <ksync/memgroup.h>
}

namespace {

struct alignas(64) Obj { // a cache line each, on the heap, as a cache's objects are
	struct ksync_list_lru_item lru;
	struct ksync_list_head link; // for the mutex baseline
};

// The baseline: one list, one mutex, a counter read under the mutex.
struct MutexList {
	pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
	struct ksync_list_head head;
	long nr = 0;
	MutexList() { ksync_init_list_head(&head); }
	void add(Obj *o)
	{
		pthread_mutex_lock(&mutex);
		ksync_list_add_tail(&o->link, &head);
		nr++;
		pthread_mutex_unlock(&mutex);
	}
	void del(Obj *o)
	{
		pthread_mutex_lock(&mutex);
		ksync_list_del_init(&o->link);
		nr--;
		pthread_mutex_unlock(&mutex);
	}
	long count()
	{
		pthread_mutex_lock(&mutex);
		long n = nr;
		pthread_mutex_unlock(&mutex);
		return n;
	}
};

// A set with @ng top-level groups and a list_lru on it.
struct Groups {
	ksync_memgroup_set *set = ksync_memgroup_set_create();
	std::vector<ksync_memgroup *> g;
	struct ksync_list_lru lru;
	explicit Groups(int ng) // ng == 0: a list_lru without groups
	{
		ksync_list_lru_init(&lru, ng ? set : nullptr, 1, nullptr);
		for (int i = 0; i < ng; i++)
			g.push_back(ksync_memgroup_create(set, nullptr));
	}
	~Groups()
	{
		ksync_list_lru_walk(&lru, remove_all, nullptr, ~0UL);
		for (auto *x : g)
			ksync_memgroup_offline(x);
		ksync_list_lru_destroy(&lru);
		ksync_memgroup_set_destroy(set);
	}
	static enum ksync_lru_status remove_all(struct ksync_list_lru_item *item, struct ksync_list_lru_one *l, void *)
	{
		ksync_list_lru_isolate(l, item);
		return KSYNC_LRU_REMOVED;
	}
};

enum ksync_lru_status skip(struct ksync_list_lru_item *, struct ksync_list_lru_one *, void *)
{
	return KSYNC_LRU_SKIP;
}

void BM_mutex_list_add_del(benchmark::State &state)
{
	MutexList l;
	std::unique_ptr<Obj> op(new Obj);
	Obj &o = *op;
	for (auto _ : state) {
		l.add(&o);
		l.del(&o);
	}
}
BENCHMARK(BM_mutex_list_add_del);

// The global list (group NULL), of a list_lru with groups (range 1) or without (0).
void BM_list_lru_add_del_global(benchmark::State &state)
{
	std::unique_ptr<Obj> op(new Obj);
	Obj &o = *op;
	Groups f(static_cast<int>(state.range(0)));
	ksync_list_lru_item_init(&o.lru);
	for (auto _ : state) {
		ksync_list_lru_add(&f.lru, &o.lru, 0, nullptr);
		ksync_list_lru_del(&f.lru, &o.lru, 0, nullptr);
	}
}
BENCHMARK(BM_list_lru_add_del_global)->Arg(0)->Arg(1);

void BM_list_lru_add_del_group(benchmark::State &state)
{
	std::unique_ptr<Obj> op(new Obj);
	Obj &o = *op;
	Groups f(static_cast<int>(state.range(0)));
	ksync_list_lru_item_init(&o.lru);
	ksync_memgroup *g = f.g.back();
	for (auto _ : state) {
		ksync_list_lru_add(&f.lru, &o.lru, 0, g);
		ksync_list_lru_del(&f.lru, &o.lru, 0, g);
	}
}
BENCHMARK(BM_list_lru_add_del_group)->Arg(1)->Arg(10000);

void BM_mutex_list_count(benchmark::State &state)
{
	MutexList l;
	for (auto _ : state)
		benchmark::DoNotOptimize(l.count());
}
BENCHMARK(BM_mutex_list_count);

void BM_list_lru_count_one_group(benchmark::State &state)
{
	std::unique_ptr<Obj> op(new Obj);
	Obj &o = *op;
	Groups f(1);
	ksync_list_lru_item_init(&o.lru);
	ksync_list_lru_add(&f.lru, &o.lru, 0, f.g[0]);
	for (auto _ : state)
		benchmark::DoNotOptimize(ksync_list_lru_count_one(&f.lru, 0, f.g[0]));
	ksync_list_lru_del_obj(&f.lru, &o.lru);
}
BENCHMARK(BM_list_lru_count_one_group);

// Two threads adding and deleting: on the one mutex, and on a list_lru
// where each thread charges its own group (a lock per list).
MutexList shared_mutex_list;
Groups *shared_groups;
pthread_mutex_t shared_groups_mutex = PTHREAD_MUTEX_INITIALIZER;

void BM_mutex_list_add_del_threads(benchmark::State &state)
{
	std::unique_ptr<Obj> op(new Obj);
	Obj &o = *op;
	for (auto _ : state) {
		shared_mutex_list.add(&o);
		shared_mutex_list.del(&o);
	}
}
BENCHMARK(BM_mutex_list_add_del_threads)->Threads(1)->Threads(2)->UseRealTime();

void BM_list_lru_add_del_threads(benchmark::State &state)
{
	pthread_mutex_lock(&shared_groups_mutex);
	if (!shared_groups)
		shared_groups = new Groups(2); // kept for the process: threads come and go
	pthread_mutex_unlock(&shared_groups_mutex);
	ksync_memgroup *g = shared_groups->g[static_cast<size_t>(state.thread_index()) % 2];
	std::unique_ptr<Obj> op(new Obj);
	Obj &o = *op;
	ksync_list_lru_item_init(&o.lru);
	for (auto _ : state) {
		ksync_list_lru_add(&shared_groups->lru, &o.lru, 0, g);
		ksync_list_lru_del(&shared_groups->lru, &o.lru, 0, g);
	}
}
BENCHMARK(BM_list_lru_add_del_threads)->Threads(1)->Threads(2)->UseRealTime();

// One group's list of 64 items, walked (every item skipped), among N groups.
void BM_list_lru_walk_one(benchmark::State &state)
{
	std::vector<Obj> objs(64); // before the groups: outlives them
	Groups f(static_cast<int>(state.range(0)));
	ksync_memgroup *g = f.g[f.g.size() / 2];
	for (auto &o : objs) {
		ksync_list_lru_item_init(&o.lru);
		ksync_list_lru_add(&f.lru, &o.lru, 0, g);
	}
	for (auto _ : state) {
		unsigned long budget = 64;
		ksync_list_lru_walk_one(&f.lru, 0, g, skip, nullptr, &budget);
	}
	state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 64);
}
BENCHMARK(BM_list_lru_walk_one)->Arg(1)->Arg(10000);

// A node's walk over N groups holding one item each (every item skipped).
void BM_list_lru_walk_node(benchmark::State &state)
{
	int ng = static_cast<int>(state.range(0));
	std::vector<Obj> objs(static_cast<size_t>(ng)); // before the groups: outlives them
	Groups f(ng);
	for (int i = 0; i < ng; i++) {
		ksync_list_lru_item_init(&objs[static_cast<size_t>(i)].lru);
		ksync_list_lru_add(&f.lru, &objs[static_cast<size_t>(i)].lru, 0, f.g[static_cast<size_t>(i)]);
	}
	for (auto _ : state) {
		unsigned long budget = ~0UL;
		ksync_list_lru_walk_node(&f.lru, 0, skip, nullptr, &budget);
	}
	state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * ng);
}
BENCHMARK(BM_list_lru_walk_node)->Arg(1)->Arg(10000);

} // namespace
