// SPDX-License-Identifier: BSD-2-Clause
// bench_srcu - ksync SRCU beside liburcu (urcu-memb), pthread_rwlock and
// ck_epoch, in one run: read-side lock+unlock per thread count, idle
// synchronize, and call_srcu enqueue-to-invocation throughput.
// liburcu is used through its inline fast paths (_LGPL_SOURCE), as ksync's are
// inline too: the comparison is fast path against fast path.
#define _LGPL_SOURCE 1
#include <urcu/urcu-memb.h>

#include <ksync/srcu.h>

#include <pthread.h>

#include <benchmark/benchmark.h>

#include <vector>

extern "C" {
void bench_ck_epoch_init(void);
void *bench_ck_epoch_register(void);
void bench_ck_epoch_unregister(void *rec);
void bench_ck_epoch_sections(void *rec, unsigned long n);
}

namespace {

KSYNC_DEFINE_SRCU(g_srcu);
KSYNC_DEFINE_SRCU(g_srcu2);
struct ksync_srcu_struct g_fenced; // initialised with KSYNC_SRCU_FENCED in main()
pthread_rwlock_t g_rwlock = PTHREAD_RWLOCK_INITIALIZER;

// ---- read side -----------------------------------------------------------

void BM_read_ksync_srcu(benchmark::State &st)
{
	for (auto _ : st) {
		int idx = ksync_srcu_read_lock(&g_srcu);
		benchmark::ClobberMemory();
		ksync_srcu_read_unlock(&g_srcu, idx);
	}
}
BENCHMARK(BM_read_ksync_srcu)->ThreadRange(1, 8)->UseRealTime();

// one thread inside two domains at once, alternating (the TLS cache holds both)
void BM_read_ksync_srcu_two_domains(benchmark::State &st)
{
	for (auto _ : st) {
		int a = ksync_srcu_read_lock(&g_srcu);
		int b = ksync_srcu_read_lock(&g_srcu2);
		benchmark::ClobberMemory();
		ksync_srcu_read_unlock(&g_srcu2, b);
		ksync_srcu_read_unlock(&g_srcu, a);
	}
	st.SetItemsProcessed(2 * st.iterations());
}
BENCHMARK(BM_read_ksync_srcu_two_domains)->ThreadRange(1, 2)->UseRealTime();

void BM_read_ksync_srcu_fenced(benchmark::State &st)
{
	for (auto _ : st) {
		int idx = ksync_srcu_read_lock(&g_fenced);
		benchmark::ClobberMemory();
		ksync_srcu_read_unlock(&g_fenced, idx);
	}
}
BENCHMARK(BM_read_ksync_srcu_fenced)->ThreadRange(1, 2)->UseRealTime();

void BM_read_urcu_memb(benchmark::State &st)
{
	urcu_memb_register_thread(); // mandatory in liburcu, outside the timed loop
	for (auto _ : st) {
		urcu_memb_read_lock();
		benchmark::ClobberMemory();
		urcu_memb_read_unlock();
	}
	urcu_memb_unregister_thread();
}
BENCHMARK(BM_read_urcu_memb)->ThreadRange(1, 8)->UseRealTime();

void BM_read_pthread_rwlock(benchmark::State &st)
{
	for (auto _ : st) {
		pthread_rwlock_rdlock(&g_rwlock);
		benchmark::ClobberMemory();
		pthread_rwlock_unlock(&g_rwlock);
	}
}
BENCHMARK(BM_read_pthread_rwlock)->ThreadRange(1, 8)->UseRealTime();

void BM_read_ck_epoch(benchmark::State &st)
{
	void *rec = bench_ck_epoch_register();
	while (st.KeepRunningBatch(1000))
		bench_ck_epoch_sections(rec, 1000);
	bench_ck_epoch_unregister(rec); // the record stays with the epoch (recycled)
}
BENCHMARK(BM_read_ck_epoch)->ThreadRange(1, 8)->UseRealTime();

// ---- grace periods ------------------------------------------------------

void BM_sync_idle_ksync_srcu(benchmark::State &st)
{
	for (auto _ : st)
		ksync_synchronize_srcu(&g_srcu);
}
BENCHMARK(BM_sync_idle_ksync_srcu)->UseRealTime();

void BM_sync_idle_ksync_srcu_fenced(benchmark::State &st)
{
	for (auto _ : st)
		ksync_synchronize_srcu(&g_fenced);
}
BENCHMARK(BM_sync_idle_ksync_srcu_fenced)->UseRealTime();

void BM_sync_idle_urcu_memb(benchmark::State &st)
{
	for (auto _ : st)
		urcu_memb_synchronize_rcu();
}
BENCHMARK(BM_sync_idle_urcu_memb)->UseRealTime();

// The same with another thread running (outside any read section) on the other
// CPU: membarrier must now interrupt it, as in a busy program.
int g_spin_stop;

void *spinner(void *)
{
	while (!__atomic_load_n(&g_spin_stop, __ATOMIC_RELAXED))
		ksync_cpu_relax();
	return nullptr;
}

template <void (*Sync)()> void sync_with_spinner(benchmark::State &st)
{
	pthread_t t;
	__atomic_store_n(&g_spin_stop, 0, __ATOMIC_RELAXED);
	pthread_create(&t, nullptr, spinner, nullptr);
	for (auto _ : st)
		Sync();
	__atomic_store_n(&g_spin_stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, nullptr);
}

void ksync_sync() { ksync_synchronize_srcu(&g_srcu); }
void urcu_sync() { urcu_memb_synchronize_rcu(); }

void BM_sync_busy_ksync_srcu(benchmark::State &st) { sync_with_spinner<ksync_sync>(st); }
BENCHMARK(BM_sync_busy_ksync_srcu)->UseRealTime();
void BM_sync_busy_urcu_memb(benchmark::State &st) { sync_with_spinner<urcu_sync>(st); }
BENCHMARK(BM_sync_busy_urcu_memb)->UseRealTime();

// ---- callbacks: enqueue to invocation ------------------------------------

constexpr int kBatch = 200000; // large, so a barrier's latency does not dominate
unsigned long g_invoked;

struct kitem {
	struct ksync_rcu_head h;
};
struct uitem {
	struct rcu_head h;
};

void kcb(struct ksync_rcu_head *) { __atomic_fetch_add(&g_invoked, 1, __ATOMIC_RELAXED); }
void ucb(struct rcu_head *) { __atomic_fetch_add(&g_invoked, 1, __ATOMIC_RELAXED); }

// Each iteration queues kBatch callbacks and waits until all have run.
void BM_call_ksync_srcu(benchmark::State &st)
{
	std::vector<kitem> items(kBatch);
	for (auto _ : st) {
		for (auto &it : items)
			ksync_call_srcu(&g_srcu, &it.h, kcb);
		ksync_srcu_barrier(&g_srcu);
	}
	st.SetItemsProcessed(st.iterations() * kBatch);
}
BENCHMARK(BM_call_ksync_srcu)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_call_urcu_memb(benchmark::State &st)
{
	std::vector<uitem> items(kBatch);
	urcu_memb_register_thread();
	for (auto _ : st) {
		for (auto &it : items)
			urcu_memb_call_rcu(&it.h, ucb);
		urcu_memb_barrier();
	}
	urcu_memb_unregister_thread();
	st.SetItemsProcessed(st.iterations() * kBatch);
}
BENCHMARK(BM_call_urcu_memb)->UseRealTime()->Unit(benchmark::kMicrosecond);

// A thread that exists, has used both libraries, and sleeps outside any read
// section: the idle grace periods below are "idle", not "single-threaded"
// (liburcu skips all work with no registered thread; the kernel skips
// membarrier in a single-threaded process).
pthread_mutex_t g_idle_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_idle_cond = PTHREAD_COND_INITIALIZER;

void *idle_thread(void *)
{
	urcu_memb_register_thread();
	int i = ksync_srcu_read_lock(&g_srcu);
	ksync_srcu_read_unlock(&g_srcu, i);
	i = ksync_srcu_read_lock(&g_fenced);
	ksync_srcu_read_unlock(&g_fenced, i);
	pthread_mutex_lock(&g_idle_lock);
	for (;;)
		pthread_cond_wait(&g_idle_cond, &g_idle_lock);
	return nullptr;
}

} // namespace

int main(int argc, char **argv)
{
	ksync_init_srcu_struct_flags(&g_fenced, KSYNC_SRCU_FENCED);
	bench_ck_epoch_init();
	pthread_t idle;
	pthread_create(&idle, nullptr, idle_thread, nullptr);
	pthread_detach(idle);
	benchmark::Initialize(&argc, argv);
	if (benchmark::ReportUnrecognizedArguments(argc, argv))
		return 1;
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	return 0;
}
