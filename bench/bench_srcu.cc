// SPDX-License-Identifier: BSD-2-Clause
// bench_srcu - ksync SRCU beside liburcu (urcu-memb, urcu-qsbr, urcu-bp),
// ck_epoch, ck_rwlock, ck_brlock and pthread_rwlock, in one binary and one
// run. Every benchmark is registered once per module that has the operation
// and named Module/Op (Google Benchmark appends /real_time and /threads:N
// or the argument), e.g. ksync_srcu/read/real_time/threads:2.
//
//   Op                 what one item is
//   read               an empty read-side lock+unlock pair, per thread (ThreadRange)
//   deref_read         lock, dereference the published node, load a word, unlock
//   sync_never_read    a grace period where no thread has ever read (ksync: a
//                      domain nobody read; liburcu: no registered thread)
//   sync_idle          a grace period while another thread that has read sleeps
//   sync_busy          the same while that thread spins outside any section
//   sync_updaters      grace periods from N threads at once (ThreadRange)
//   update_readers     publish a new node, wait for a grace period (locks: a
//                      write lock), free the old one; readers:R threads run
//                      deref_read meanwhile (reads_per_s counts them)
//   call               one malloc'd node queued and freed by its callback;
//                      batches of kBatch then a barrier, so the figure is
//                      enqueue-to-invocation throughput; peak_outstanding is
//                      the most callbacks queued and not yet run; its CPU
//                      time is the whole process's (helper threads included)
//   call_latency       one callback queued, wait until it ran (latency_ns:
//                      enqueue to invocation)
//   hash_lookup        read-mostly: a lookup of a random key among 1024 in a hash
//                      table, or (update_permille:P per mille of them) the
//                      replacement of its entry: ksync's hashtable.h under
//                      SRCU, liburcu's cds_lfht, the table under a pthread_rwlock
//   poll_gp            (ksync) start_poll_synchronize + poll until done
//   poll_done_cookie   (ksync) poll a cookie whose grace period has completed
//
// Read rows of ksync's other read paths (fx_ksync_fast.c): ksync_srcu_fast
// (read, deref_read: ksync_srcu_read_lock_fast/unlock_fast), ksync_srcu_far
// and ksync_srcu_far_fast (read: a domain past the direct words, classic and
// fast form).
//
// Read-side loops are C (fixtures.h): an iteration is a batch of pairs, so
// Google Benchmark's own loop costs once per batch. bare_read.c measures the
// same pair with no framework at all.
//
// --bench_max_threads=N (before the Google Benchmark flags) caps ThreadRange
// and readers:R (default: the number of CPUs, at least 2).
#include "bench_main.h"
#include "fixtures.h"
#include "fx_ksync_fast.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

const bench_ops *const kModules[] = {
	&bench_ksync_srcu, &bench_ksync_srcu_fenced, &bench_urcu_memb, &bench_urcu_qsbr,
	&bench_urcu_bp,    &bench_ck_epoch,          &bench_ck_rwlock, &bench_ck_brlock,
	&bench_pthread_rwlock,
};

// call and call_latency only: ksync_srcu's callbacks on a domain that lets
// call_srcu() run them (ksync_srcu_set_cb_in_caller()).
const bench_ops *const kCallModules[] = { &bench_ksync_srcu, &bench_ksync_srcu_in_caller, &bench_urcu_memb,
					  &bench_urcu_qsbr, &bench_urcu_bp, &bench_ck_epoch,
					  &bench_ck_rwlock, &bench_ck_brlock, &bench_pthread_rwlock };

const bench_hash_ops *const kHashes[] = { &bench_hash_ksync, &bench_hash_urcu, &bench_hash_rwlock };

constexpr unsigned long kReadBatch = 1024;
constexpr int kCallBatch = 100000; // large, so a barrier's latency does not dominate

int g_max_threads = 2;

std::string name(const bench_ops *m, const char *op)
{
	return std::string(m->name) + "/" + op;
}

// ---- a thread that has read and now sleeps (or spins) outside any section

struct Bystander {
	const bench_ops *m;
	bool spin;
	std::atomic<bool> ready{false}, stop{false};
	std::thread t;

	Bystander(const bench_ops *mod, bool spinning) : m(mod), spin(spinning)
	{
		t = std::thread([this] {
			m->thread_begin();
			m->reads(1);
			if (m->offline)
				m->offline();
			ready.store(true);
			while (!stop.load(std::memory_order_relaxed)) {
				if (spin)
					benchmark::ClobberMemory();
				else
					std::this_thread::sleep_for(std::chrono::milliseconds(1));
			}
			if (m->online)
				m->online();
			m->thread_end();
		});
		while (!ready.load())
			std::this_thread::yield();
	}
	~Bystander()
	{
		stop.store(true);
		t.join();
	}
};

// ---- read side ---------------------------------------------------------

void bm_read(benchmark::State &st, const bench_ops *m)
{
	m->thread_begin();
	while (st.KeepRunningBatch(kReadBatch))
		m->reads(kReadBatch);
	m->thread_end();
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}

void bm_deref_read(benchmark::State &st, const bench_ops *m)
{
	long sum = 0;
	m->thread_begin();
	while (st.KeepRunningBatch(kReadBatch))
		sum += m->deref_reads(kReadBatch);
	m->thread_end();
	benchmark::DoNotOptimize(sum);
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}

// The read rows of ksync SRCU's fast form (ksync_srcu_fast/read, /deref_read)
// and of a domain past the direct words (ksync_srcu_far/read,
// ksync_srcu_far_fast/read), beside the modules' rows above.
void bm_plain_read(benchmark::State &st, void (*reads)(unsigned long))
{
	while (st.KeepRunningBatch(kReadBatch))
		reads(kReadBatch);
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}

void bm_fast_deref_read(benchmark::State &st)
{
	long sum = 0;
	while (st.KeepRunningBatch(kReadBatch))
		sum += bench_ksync_fast_deref_reads(kReadBatch);
	benchmark::DoNotOptimize(sum);
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}

void register_fast_reads()
{
	benchmark::RegisterBenchmark("ksync_srcu_fast/read", bm_plain_read, bench_ksync_fast_reads)
		->ThreadRange(1, g_max_threads)
		->UseRealTime();
	benchmark::RegisterBenchmark("ksync_srcu_fast/deref_read", bm_fast_deref_read)
		->ThreadRange(1, g_max_threads)
		->UseRealTime();
	benchmark::RegisterBenchmark("ksync_srcu_far/read", bm_plain_read, bench_ksync_far_reads)
		->ThreadRange(1, g_max_threads)
		->UseRealTime();
	benchmark::RegisterBenchmark("ksync_srcu_far_fast/read", bm_plain_read, bench_ksync_far_fast_reads)
		->ThreadRange(1, g_max_threads)
		->UseRealTime();
}

// ---- grace periods -------------------------------------------------------

void bm_sync_never_read(benchmark::State &st, const bench_ops *m)
{
	for (auto _ : st)
		m->sync_never_read();
}

void bm_sync_bystander(benchmark::State &st, const bench_ops *m, bool spin)
{
	Bystander b(m, spin);
	for (auto _ : st)
		m->synchronize();
}

void bm_sync_updaters(benchmark::State &st, const bench_ops *m)
{
	for (auto _ : st)
		m->synchronize();
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}

void bm_update_readers(benchmark::State &st, const bench_ops *m)
{
	const int nr = static_cast<int>(st.range(0));
	std::atomic<bool> stop{false};
	std::atomic<int> started{0};
	std::vector<unsigned long> reads(static_cast<size_t>(nr) * 8, 0); // one line each
	std::vector<std::thread> readers;
	for (int r = 0; r < nr; r++)
		readers.emplace_back([&, r] {
			unsigned long n = 0;
			long sum = 0;
			m->thread_begin();
			started.fetch_add(1);
			while (!stop.load(std::memory_order_relaxed)) {
				sum += m->deref_reads(256);
				n += 256;
			}
			m->thread_end();
			benchmark::DoNotOptimize(sum);
			reads[static_cast<size_t>(r) * 8] = n;
		});
	while (started.load() < nr)
		std::this_thread::yield();
	if (m->caller_begin)
		m->caller_begin(); // qsbr: the updater registers and stays offline
	auto t0 = std::chrono::steady_clock::now();
	for (auto _ : st)
		m->update();
	auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	stop.store(true);
	for (auto &t : readers)
		t.join();
	if (m->caller_end)
		m->caller_end();
	unsigned long total = 0;
	for (int r = 0; r < nr; r++)
		total += reads[static_cast<size_t>(r) * 8];
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
	// Reads during the timed loop, approximately: the readers start before it
	// and stop after it, by at most one thread start and one join.
	st.counters["reads_per_s"] = benchmark::Counter(secs > 0 ? static_cast<double>(total) / secs : 0);
}

// ---- callbacks -----------------------------------------------------------

std::atomic<unsigned long> g_enqueued{0};
std::atomic<unsigned long> g_peak{0};

void bm_call(benchmark::State &st, const bench_ops *m)
{
	if (st.thread_index() == 0) {
		g_enqueued.store(__atomic_load_n(&bench_cb_invoked, __ATOMIC_RELAXED));
		g_peak.store(0);
	}
	m->caller_begin();
	for (auto _ : st) {
		for (int i = 0; i < kCallBatch; i++) {
			m->call(0, nullptr);
			if ((i & 255) == 255) {
				unsigned long q = g_enqueued.fetch_add(256, std::memory_order_relaxed) + 256;
				unsigned long done = __atomic_load_n(&bench_cb_invoked, __ATOMIC_RELAXED);
				unsigned long out = q > done ? q - done : 0, peak = g_peak.load();
				while (out > peak && !g_peak.compare_exchange_weak(peak, out))
					;
			}
		}
		m->barrier();
		g_enqueued.fetch_add(kCallBatch & 255, std::memory_order_relaxed);
	}
	m->caller_end();
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations()) * kCallBatch);
	if (st.thread_index() == 0)
		st.counters["peak_outstanding"] = benchmark::Counter(static_cast<double>(g_peak.load()));
}

void bm_call_latency(benchmark::State &st, const bench_ops *m)
{
	m->caller_begin();
	uint64_t sum0 = __atomic_load_n(&bench_cb_latency_sum, __ATOMIC_RELAXED);
	for (auto _ : st) {
		int done = 0;
		m->call(bench_now_ns(), &done);
		if (m->poll) {
			while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
				m->poll();
		} else {
			bench_wait_flag(&done);
		}
	}
	uint64_t sum = __atomic_load_n(&bench_cb_latency_sum, __ATOMIC_RELAXED) - sum0;
	m->caller_end();
	st.counters["latency_ns"] =
		benchmark::Counter(st.iterations() ? static_cast<double>(sum) / static_cast<double>(st.iterations()) : 0);
}

// ---- read-mostly hash table ----------------------------------------------

void bm_hash(benchmark::State &st, const bench_hash_ops *h)
{
	const auto permille = static_cast<unsigned>(st.range(0));
	uint64_t rng = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(st.thread_index() + 1);
	long sum = 0;
	h->thread_begin();
	while (st.KeepRunningBatch(256))
		sum += h->run(256, permille, &rng);
	h->barrier(); // retired entries freed before the next run, untimed
	h->thread_end();
	benchmark::DoNotOptimize(sum);
	st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
}

void bm_poll_gp(benchmark::State &st)
{
	for (auto _ : st)
		bench_ksync_poll_gp();
}

void bm_poll_done_cookie(benchmark::State &st)
{
	for (auto _ : st)
		benchmark::DoNotOptimize(bench_ksync_poll_done());
}

void register_all()
{
	// First: nothing has registered with liburcu yet (urcu-bp registers a
	// thread on its first read, for the thread's lifetime).
	for (const bench_ops *m : kModules)
		if (m->sync_never_read)
			benchmark::RegisterBenchmark(name(m, "sync_never_read").c_str(), bm_sync_never_read, m)
				->UseRealTime();
	for (const bench_ops *m : kModules)
		benchmark::RegisterBenchmark(name(m, "read").c_str(), bm_read, m)
			->ThreadRange(1, g_max_threads)
			->UseRealTime();
	for (const bench_ops *m : kModules)
		benchmark::RegisterBenchmark(name(m, "deref_read").c_str(), bm_deref_read, m)
			->ThreadRange(1, g_max_threads)
			->UseRealTime();
	register_fast_reads();
	for (const bench_ops *m : kModules)
		if (m->synchronize)
			benchmark::RegisterBenchmark(name(m, "sync_idle").c_str(), bm_sync_bystander, m, false)
				->UseRealTime();
	for (const bench_ops *m : kModules)
		if (m->synchronize)
			benchmark::RegisterBenchmark(name(m, "sync_busy").c_str(), bm_sync_bystander, m, true)
				->UseRealTime();
	for (const bench_ops *m : kModules)
		if (m->synchronize)
			benchmark::RegisterBenchmark(name(m, "sync_updaters").c_str(), bm_sync_updaters, m)
				->ThreadRange(1, g_max_threads)
				->UseRealTime();
	for (const bench_ops *m : kModules)
		benchmark::RegisterBenchmark(name(m, "update_readers").c_str(), bm_update_readers, m)
			->ArgName("readers")
			->RangeMultiplier(2)
			->Range(1, g_max_threads)
			->UseRealTime()
			->Unit(benchmark::kMicrosecond);
	// CPU time of the whole process (MeasureProcessCPUTime): the helper or
	// call_rcu thread that runs the callbacks and frees the nodes is half of
	// the work, and the producers' own CPU time alone hid it (the name gets
	// "/process_time": ksync_srcu/call/process_time/real_time/threads:1).
	for (const bench_ops *m : kCallModules)
		if (m->call)
			benchmark::RegisterBenchmark(name(m, "call").c_str(), bm_call, m)
				->ThreadRange(1, g_max_threads)
				->MeasureProcessCPUTime()
				->UseRealTime()
				->Unit(benchmark::kMillisecond);
	for (const bench_ops *m : kCallModules)
		if (m->call)
			benchmark::RegisterBenchmark(name(m, "call_latency").c_str(), bm_call_latency, m)
				->UseRealTime()
				->Unit(benchmark::kMicrosecond);
	for (const bench_hash_ops *h : kHashes)
		benchmark::RegisterBenchmark((std::string(h->name) + "/hash_lookup").c_str(), bm_hash, h)
			->ArgName("update_permille")
			->Arg(1)
			->Arg(10)
			->Arg(100)
			->ThreadRange(1, g_max_threads)
			->UseRealTime();
	benchmark::RegisterBenchmark("ksync_srcu/poll_gp", bm_poll_gp)->UseRealTime();
	benchmark::RegisterBenchmark("ksync_srcu/poll_done_cookie", bm_poll_done_cookie)->UseRealTime();
}

} // namespace

int main(int argc, char **argv)
{
	g_max_threads = bench_take_max_threads(&argc, argv);
	for (const bench_ops *m : kModules)
		m->init();
	bench_ksync_srcu_in_caller.init();
	for (const bench_hash_ops *h : kHashes)
		h->init();
	register_all();
	return bench_run_registered(argc, argv);
}
