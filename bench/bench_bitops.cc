// SPDX-License-Identifier: BSD-2-Clause
// bench_bitops - cost of ksync's bit operations, sized-map accesses and an
// RCU list walk under SRCU. Thin C++ over the C headers.
#include <ksync/bitmap.h>
#include <ksync/sized_map.h>
#include <ksync/bitops.h>
#include <ksync/rculist.h>
#include <ksync/srcu.h>

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <vector>

namespace {

unsigned long g_word[8]; // shared by the threads of the multi-threaded cases

void BM_set_bit(benchmark::State &st)
{
	unsigned long nr = (unsigned long)st.thread_index();
	for (auto _ : st) {
		ksync_set_bit(nr, g_word);
		benchmark::ClobberMemory();
	}
}
BENCHMARK(BM_set_bit)->ThreadRange(1, 2)->UseRealTime();

void BM_nonatomic_set_bit(benchmark::State &st)
{
	unsigned long w[1] = { 0 };
	for (auto _ : st) {
		ksync___set_bit(5, w);
		benchmark::ClobberMemory();
	}
	benchmark::DoNotOptimize(w[0]);
}
BENCHMARK(BM_nonatomic_set_bit);

void BM_test_and_set_bit(benchmark::State &st)
{
	unsigned long nr = (unsigned long)st.thread_index();
	for (auto _ : st)
		benchmark::DoNotOptimize(ksync_test_and_set_bit(nr, g_word));
}
BENCHMARK(BM_test_and_set_bit)->ThreadRange(1, 2)->UseRealTime();

void BM_test_bit(benchmark::State &st)
{
	unsigned long w[1] = { 0x20 };
	for (auto _ : st)
		benchmark::DoNotOptimize(ksync_test_bit(5, w));
}
BENCHMARK(BM_test_bit);

// A sparse map of 4096 bits with 8 set: the shrinker's usual picture.
void BM_for_each_set_bit_sparse(benchmark::State &st)
{
	std::vector<unsigned long> map(KSYNC_BITS_TO_LONGS(4096));
	for (unsigned long i = 0; i < 8; i++)
		ksync_set_bit(i * 509, map.data());
	for (auto _ : st) {
		unsigned long bit, n = 0;
		ksync_for_each_set_bit(bit, map.data(), 4096UL) n += bit;
		benchmark::DoNotOptimize(n);
	}
}
BENCHMARK(BM_for_each_set_bit_sparse);

void BM_sized_map_set_bit(benchmark::State &st)
{
	struct ksync_sized_map *m = ksync_sized_map_alloc(4096, sizeof(ksync_atomic_long_t));
	for (auto _ : st)
		benchmark::DoNotOptimize(ksync_sized_map_set_bit(m, 1234U));
	ksync_sized_map_free(m);
}
BENCHMARK(BM_sized_map_set_bit);

void BM_sized_map_for_each_sparse(benchmark::State &st)
{
	struct ksync_sized_map *m = ksync_sized_map_alloc(4096, sizeof(ksync_atomic_long_t));
	for (unsigned int i = 0; i < 8; i++)
		ksync_sized_map_set_bit(m, i * 509U);
	for (auto _ : st) {
		unsigned int bit, n = 0;
		ksync_sized_map_for_each_set_bit(bit, m) n += bit;
		benchmark::DoNotOptimize(n);
	}
	ksync_sized_map_free(m);
}
BENCHMARK(BM_sized_map_for_each_sparse);

struct node {
	long v;
	struct ksync_list_head link;
};

KSYNC_DEFINE_STATIC_SRCU(bench_srcu);

// One read section and a walk of 100 entries.
void BM_list_walk_srcu_100(benchmark::State &st)
{
	struct ksync_list_head head;
	std::vector<node> nodes(100);
	ksync_init_list_head(&head);
	for (auto &n : nodes) {
		n.v = 1;
		ksync_list_add_tail_rcu(&n.link, &head);
	}
	for (auto _ : st) {
		int idx = ksync_srcu_read_lock(&bench_srcu);
		node *pos;
		long sum = 0;
		ksync_list_for_each_entry_srcu(pos, &head, link, ksync_srcu_read_lock_held(&bench_srcu))
			sum += pos->v;
		ksync_srcu_read_unlock(&bench_srcu, idx);
		benchmark::DoNotOptimize(sum);
	}
}
BENCHMARK(BM_list_walk_srcu_100);

} // namespace
