/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/shrinker/shrinker.c - the lockless shrinker registry.
 *
 * Theory of operation
 * -------------------
 * Objects and who may touch them:
 *
 *  registry   one SRCU domain (reg->srcu), one writers' mutex (reg->mutex),
 *             an RCU list of shrinker nodes (reg->shrinkers), an RCU list of
 *             groups (reg->groups), and an id table (reg->idr: id -> node,
 *             published through an RCU pointer, grown by copy + publish +
 *             call_srcu free of the old table).
 *  node       the registry's private record of one shrinker: list link, id,
 *             a reference count, a completion word, the state, per-node
 *             nr_deferred of the global walk. The caller's struct
 *             ksync_shrinker is reached only through node->shrinker and only
 *             while a reference is held.
 *  group      per node an RCU slot holding a sized map (<ksync/bitmap.h>):
 *             one bit per shrinker id plus a companion ksync_atomic_long_t,
 *             the group's nr_deferred of that id. All maps of all groups
 *             have reg->nr_max bits; a new high id grows all of them
 *             (ksync_sized_map_grow(): shared units, so a bit or a deferred
 *             count written through an old generation is never lost).
 *
 * Readers (ksync_shrink_slab(), ksync_set_shrinker_bit(), the debug calls)
 * run inside ksync_srcu_read_lock(&reg->srcu) and never take reg->mutex.
 * Before calling into a shrinker they take a reference
 * (ksync_atomic_inc_not_zero(&node->refcount): "try_get"), and drop it after.
 * Writers hold reg->mutex while they change the lists, the id table or the
 * maps, but never while they wait.
 *
 * Lifetime of a shrinker:
 *   prepare   node allocated; a memcg-aware shrinker gets the lowest free id
 *             and its node is stored in the id table with refcount 0 (so a
 *             walker that meets the id clears the bit and moves on).
 *   register  refcount := 1 (release, label R1), then the node is linked
 *             into reg->shrinkers (ksync_list_add_tail_rcu, release). A walker
 *             whose try_get succeeds read-acquires the count (fully ordered
 *             RMW, R2 pairs with R1) and so sees every field of the caller's
 *             struct written before registration.
 *   unregister  state REGISTERED -> UNREGISTERING (cmpxchg: one winner);
 *             drop the initial reference; wait for the completion, which the
 *             thread that drops the count to zero fires. From then on try_get
 *             fails forever (the count never leaves zero), so no callback of
 *             this shrinker starts again and none is running: this is the
 *             guarantee ksync_unregister_shrinker() gives, and the ONLY wait.
 *             Then, under the mutex, unlink from the list and clear the id
 *             slot; finally call_srcu() frees the node once no reader can
 *             still hold a pointer to it. No synchronize_srcu() anywhere on
 *             this path (that was the 6.4 regression).
 *
 * The global walk (group == NULL) iterates reg->shrinkers. The group walk
 * finds set bits in the group's map and looks the ids up in the id table. A
 * walk that notices a writer waiting for a grace period of reg->srcu
 * (ksync_srcu_gp_pending()) leaves and re-enters its read section before
 * the next shrinker: with a reference held (global walk) the node stays on
 * the list, because unlinking waits for the count; the group walk
 * re-fetches the map and resumes at the next id.
 *
 * Groups: a group walk takes no reference (no atomic on the group's cache
 * line); it checks ->dead inside each read section. Destroying a group (rare,
 * the kernel's memcg offlining) sets ->dead, unlinks it, waits for one grace
 * period (every walk that may have missed ->dead is done) and for the walks
 * that were between two read sections (->parked, P1/P2: a grace period does
 * not wait for a thread outside any section), then moves its nr_deferred to
 * the parent (deferred work is never lost) and frees its maps and itself by
 * call_srcu. This is the one grace-period wait of the registry, and it is not
 * on the register/unregister path.
 *
 * Unregister from a callback (of another shrinker) publishes its wait and
 * refuses one that would close a cycle of callbacks unregistering each other
 * (see "the cycle check" below).
 *
 * The debug calls find a caller-owned shrinker's node through s->node only
 * inside a read section (see debug_enter()).
 *
 * The group walk visits only the 64-id units that the group's summary map
 * marks; see shrink_slab_group(). Released nodes are freed by call_srcu in
 * batches (FREE_BATCH).
 *
 * nr_deferred ledger: work sits in a group counter (group walk), in the
 * node's per-node counter (global walk), in reg->orphaned (work of a
 * destroyed top-level group) or in reg->retired (global counters of an
 * unregistered shrinker). Growth moves nothing (shared units), reparenting
 * moves counts with xchg + add, unregister leaves group counters in place:
 * an id reused later inherits them, as in the kernel.
 *
 * Barrier pairs used below:
 *   R1/R2  register publishes the refcount; try_get acquires it.
 *   C1/C2  completion: the last put releases, the waiter acquires.
 *   D1     group destroy: ->dead, then a grace period; walkers read ->dead
 *          inside their read section.
 *   PUB    node_prepare() publishes s->reg and s->node with release; the
 *          debug calls and unregister load them with acquire.
 *   P1/P2  a group walk leaving its section counts itself in ->parked inside
 *          it (ordered before destroy's read by the grace period), and
 *          withdraws, fully ordered, in the next; destroy reads ->parked
 *          with acquire after its grace period.
 *   G1     growth publishes a group's summary map before its bit map.
 *   S2/W2  set_shrinker_bit sets the bit, then tests the summary bit; the
 *          walk clears a summary bit, then looks at the unit again.
 *   S1/W1  set_shrinker_bit's full barrier between "objects are visible" and
 *          the bit, against the group walk's barrier between clearing the
 *          bit on SHRINK_EMPTY and counting again.
 *   Q      not a barrier: writers holding reg->mutex queue SRCU callbacks
 *          from inside a read section, so call_srcu's throttle never makes
 *          them wait for a grace period (see grow_locked()).
 *   S1/L1  the same barrier of set_shrinker_bit also orders the shrinker's
 *          publication in the id table before its bit; the group walk reads
 *          a found bit before looking its id up.
 */
#define _GNU_SOURCE
#include <ksync/shrinker.h>
#include <ksync/shrinker_testing.h>

#include <ksync/atomic.h>
#include <ksync/bitmap.h>
#include <ksync/sized_map.h>
#include <ksync/list.h>
#include <ksync/math.h>
#include <ksync/rcupdate.h>
#include <ksync/rculist.h>
#include <ksync/srcu.h>

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NODE_MAGIC 0x5348524b4e4f4445UL /* "SHRKNODE" */
#define GROUP_MAGIC 0x5348524b47525550UL

enum node_state {
	NODE_PREPARED = 1,
	NODE_REGISTERED,
	NODE_UNREGISTERING,
	NODE_UNREGISTERED,
};

struct ksync_shrinker_node {
	/*
	 * Read-mostly: walkers read it, only writers (under the mutex) write it.
	 * Unlinking a neighbour writes its list pointers here, which walkers
	 * hold shared at most, never modified.
	 */
	struct ksync_list_head list; /* reg->shrinkers, RCU */
	struct ksync_shrinker *shrinker;
	struct ksync_shrinker_registry *reg;
	unsigned long magic;
	unsigned flags;
	int id;
	bool owned; /* allocated by ksync_shrinker_alloc(): owned_s is the shrinker */
	/*
	 * Read-mostly too: the shrinker of ksync_shrinker_alloc(). No alignment
	 * attributes (list walks form container_of() of the list head, which
	 * must not be an over-aligned type); the order alone keeps the written
	 * fields below at least a line away from the list pointers.
	 */
	struct ksync_shrinker owned_s;
	char name[48];
	/*
	 * Written by every walker that calls the shrinker, and by unregister,
	 * which touches little else of the node.
	 */
	ksync_atomic_t refcount;
	ksync_atomic_t done; /* completion word: 0 open, 1 done, 2 open with a sleeper */
	ksync_atomic_t state;
	struct ksync_shrinker_node *free_next; /* reg->free_batch, under reg->mutex */
	struct ksync_rcu_head rcu;
	ksync_atomic_long_t nr_deferred[]; /* per node, global walk */
};

struct idr_table {
	unsigned int nr;
	struct ksync_rcu_head rcu;
	struct ksync_shrinker_node *KSYNC_RCU slot[];
};

struct ksync_shrinker_group {
	struct ksync_list_head list; /* reg->groups, RCU */
	struct ksync_shrinker_registry *reg;
	struct ksync_shrinker_group *parent;
	unsigned long magic;
	int id;
	int nr_children; /* writers only */
	struct ksync_list_head dying; /* reg->dying_groups while destroy waits; writers only */
	int dead;        /* set under the mutex before the grace period of destroy; walkers read it */
	/*
	 * Group walks that left their read section for a waiting writer and have
	 * not yet checked ->dead in the next one (P1/P2 in shrink_slab_group()).
	 */
	ksync_atomic_t parked;
	struct ksync_rcu_head rcu;
	/*
	 * maps[nid]: bits + nr_deferred per shrinker id; maps[nr_nodes + nid]:
	 * the summary, one bit per 64-id unit of maps[nid] that may have bits
	 * set (see shrink_slab_group()).
	 */
	struct ksync_sized_map *KSYNC_RCU maps[];
};

#define UNIT_BITS ((unsigned int)KSYNC_BITS_PER_LONG)
#define SUMMARY(g, nid) ((g)->maps[(g)->reg->nr_nodes + (nid)])

struct ksync_shrinker_registry {
	struct ksync_srcu_struct srcu; /* its reader line first, cache-line aligned */
	/*
	 * Read by every walk, written only when the maps grow: no field that
	 * register/unregister writes may share this line (each write would
	 * cost every walker a miss, and the writer one back).
	 */
	struct idr_table *KSYNC_RCU idr KSYNC_CACHELINE_ALIGNED;
	int nr_nodes;
	unsigned int nr_max; /* bits of every group map; written under mutex, read with READ_ONCE */
	size_t node_size;
	/* RCU list heads: writers link at the tail; global and debug walks read. */
	struct ksync_list_head shrinkers KSYNC_CACHELINE_ALIGNED;
	struct ksync_list_head groups;
	/*
	 * Writers only: groups unlinked by ksync_shrinker_group_destroy() whose
	 * counters are not reparented yet (the ledger still counts them).
	 */
	struct ksync_list_head dying_groups;
	/* Writers only (under the mutex). */
	pthread_mutex_t mutex KSYNC_CACHELINE_ALIGNED;
	unsigned long *ids_used;
	unsigned int ids_cap;
	int next_group_id;
	int nr_groups;
	int nr_nodes_alive; /* prepared or registered shrinkers */
	ksync_atomic_long_t orphaned;
	ksync_atomic_long_t retired;
	struct ksync_shrinker_node *free_batch; /* released nodes not yet queued */
	int free_batch_len;
	/*
	 * Freed (after a grace period) nodes for reuse, under cache_lock, NOT
	 * reg->mutex: the SRCU callback that fills the cache must never wait
	 * for reg->mutex, because writers holding it call ksync_call_srcu(),
	 * which blocks past the domain's callback limit until that callback's helper
	 * thread works the queue down (a deadlock). cache_lock is never held
	 * across a call into SRCU.
	 */
	pthread_mutex_t cache_lock;
	struct ksync_shrinker_node *node_cache;
	int node_cache_len;
};

/*
 * Nodes that went through their grace period are kept (up to NODE_CACHE_MAX)
 * for the next registration: mount/umount storms then neither hit malloc's
 * slow paths nor fault in pages that free() trimmed away.
 */
#define NODE_CACHE_MAX 4096

/*
 * Released nodes are handed to call_srcu() in batches of FREE_BATCH: one
 * callback (and at most one wake-up of the SRCU helper) per batch instead of
 * per unregister. At most FREE_BATCH - 1 nodes wait for a later release, or
 * for ksync_synchronize_shrinkers() / ksync_shrinker_registry_destroy().
 */
#define FREE_BATCH 256
static struct ksync_shrinker_node *take_batch_locked(struct ksync_shrinker_registry *reg);
static void queue_batch(struct ksync_shrinker_registry *reg, struct ksync_shrinker_node *batch);

/* ------------------------------------------------------------------------ */
/* Yield hook                                                               */

static void (*yield_hook)(int, void *);
static void *yield_arg;

void ksync_shrinker_set_yield_hook(void (*hook)(int point, void *arg), void *arg)
{
	KSYNC_WRITE_ONCE(yield_arg, arg);
	/* Y1: orders the argument before the hook; pairs with Y2 in yield_point(). */
	ksync_smp_store_release(&yield_hook, hook);
}

static KSYNC_ALWAYS_INLINE void yield_point(int point)
{
	void (*hook)(int, void *) = KSYNC_READ_ONCE(yield_hook);

	if (ksync_unlikely(hook != NULL)) {
		/* Y2: pairs with Y1. */
		hook = ksync_smp_load_acquire(&yield_hook);
		if (hook)
			hook(point, KSYNC_READ_ONCE(yield_arg));
	}
}

/* ------------------------------------------------------------------------ */
/* Completions (futex based: no lock shared with anyone)                    */

/* Sleep while *@word holds @val (returns at once if it does not). */
static void futex_wait(ksync_atomic_t *word, int val)
{
	syscall(SYS_futex, &word->counter, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake_all(ksync_atomic_t *word)
{
	syscall(SYS_futex, &word->counter, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void completion_fire(ksync_atomic_t *done)
{
	/* C1: fully ordered; everything before the last put happens before the waiter returns. */
	if (ksync_atomic_xchg(done, 1) == 2)
		futex_wake_all(done);
}

static void completion_wait(ksync_atomic_t *done)
{
	for (int spin = 0; spin < 200; spin++) {
		/* C2: acquire; pairs with C1. */
		if (ksync_atomic_read_acquire(done) == 1)
			return;
		ksync_cpu_relax();
	}
	for (;;) {
		int v = 0;

		if (ksync_atomic_try_cmpxchg(done, &v, 2) || v == 2)
			futex_wait(done, 2);
		/* C2: as above. */
		if (ksync_atomic_read_acquire(done) == 1)
			return;
	}
}

/* ------------------------------------------------------------------------ */
/* Per-thread record of the shrinkers this thread is calling into           */

#define CALL_DEPTH_MAX 8
static _Thread_local struct ksync_shrinker_node *tls_calling[CALL_DEPTH_MAX];
static _Thread_local int tls_depth;

static bool thread_is_calling(const struct ksync_shrinker_node *node)
{
	for (int i = 0; i < tls_depth && i < CALL_DEPTH_MAX; i++)
		if (tls_calling[i] == node)
			return true;
	return false;
}

static KSYNC_ALWAYS_INLINE void call_enter(struct ksync_shrinker_node *node)
{
	if (tls_depth < CALL_DEPTH_MAX)
		tls_calling[tls_depth] = node;
	tls_depth++;
}

static KSYNC_ALWAYS_INLINE void call_exit(void)
{
	tls_depth--;
}

/* ------------------------------------------------------------------------ */
/* Unregister waits from callbacks: the cycle check                         */

/*
 * A callback may unregister other shrinkers, and unregister waits until the
 * calls into its target have returned. If the callbacks of A and B run on two
 * threads and each unregisters the other, each waits for a call that waits
 * for it: the kernel hangs there. ksync refuses the wait that would close
 * such a cycle (of any length, across registries): every thread that waits
 * from inside a callback publishes, on one process-wide list under
 * waits_lock, the record it waits for and the records it is calling into
 * (its calls cannot change while it waits). Publishing and searching the
 * graph happen under that one lock, so of the threads whose waits form a
 * cycle the last to publish finds it, and backs out (-EDEADLK, reported);
 * the others then complete. A thread outside any callback holds no
 * reference a cycle could need, and skips all of this.
 *
 * The records live on the waiting threads' stacks; a thread does not exit
 * while it waits, and the fork handler empties the list in the child, where
 * those threads do not exist.
 */
struct unreg_wait {
	struct ksync_list_head link; /* on unreg_waits */
	const struct ksync_shrinker_node *waits_for;
	const struct ksync_shrinker_node *calling[CALL_DEPTH_MAX];
	int nr_calling;
	unsigned long visited; /* search generation that reached it */
};

static pthread_mutex_t waits_lock = PTHREAD_MUTEX_INITIALIZER;
static KSYNC_LIST_HEAD(unreg_waits);
static unsigned long waits_generation;
static pthread_once_t waits_atfork_once = PTHREAD_ONCE_INIT;

static void waits_atfork_prepare(void)
{
	pthread_mutex_lock(&waits_lock);
}

static void waits_atfork_parent(void)
{
	pthread_mutex_unlock(&waits_lock);
}

static void waits_atfork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	/* Only the forking thread exists here, and it was not waiting. */
	ksync_init_list_head(&unreg_waits);
	memcpy(&waits_lock, &fresh, sizeof(fresh));
}

static void waits_atfork_register(void)
{
	pthread_atfork(waits_atfork_prepare, waits_atfork_parent, waits_atfork_child);
}

static bool wait_is_calling(const struct unreg_wait *w, const struct ksync_shrinker_node *node)
{
	for (int i = 0; i < w->nr_calling; i++)
		if (w->calling[i] == node)
			return true;
	return false;
}

/* Under waits_lock: does waiting for @node lead, through waiting threads, back to @self? */
static bool wait_reaches(const struct unreg_wait *self, const struct ksync_shrinker_node *node,
			 unsigned long gen)
{
	struct unreg_wait *w;

	if (wait_is_calling(self, node))
		return true;
	ksync_list_for_each_entry(w, &unreg_waits, link) {
		if (w == self || w->visited == gen || !wait_is_calling(w, node))
			continue;
		w->visited = gen; /* each waiting thread is followed once: depth <= their number */
		if (wait_reaches(self, w->waits_for, gen))
			return true;
	}
	return false;
}

/*
 * Publish that this thread, inside a callback, waits for @node. Return false,
 * publishing nothing, if that wait would close a cycle.
 */
static bool unreg_wait_publish(struct unreg_wait *me, const struct ksync_shrinker_node *node)
{
	bool cycle;

	pthread_once(&waits_atfork_once, waits_atfork_register);
	me->waits_for = node;
	me->nr_calling = ksync_min(tls_depth, CALL_DEPTH_MAX);
	for (int i = 0; i < me->nr_calling; i++)
		me->calling[i] = tls_calling[i];
	me->visited = 0;
	pthread_mutex_lock(&waits_lock);
	cycle = wait_reaches(me, node, ++waits_generation);
	if (!cycle)
		ksync_list_add(&me->link, &unreg_waits);
	pthread_mutex_unlock(&waits_lock);
	return !cycle;
}

static void unreg_wait_done(struct unreg_wait *me)
{
	pthread_mutex_lock(&waits_lock);
	ksync_list_del(&me->link);
	pthread_mutex_unlock(&waits_lock);
}

/* ------------------------------------------------------------------------ */
/* References                                                               */

static KSYNC_ALWAYS_INLINE bool node_try_get(struct ksync_shrinker_node *node)
{
	/* R2: fully ordered RMW; reads the count published by R1. */
	return ksync_atomic_inc_not_zero(&node->refcount);
}

static KSYNC_ALWAYS_INLINE void node_put(struct ksync_shrinker_node *node)
{
	if (ksync_atomic_dec_and_test(&node->refcount))
		completion_fire(&node->done);
}

/*
 * A group walk may run only while the group is not being destroyed. Called
 * inside the read section: destroy sets ->dead and then waits for a grace
 * period, so a section that saw ->dead == 0 is waited for, and a section
 * that starts after the grace period began sees ->dead == 1 (SRCU's
 * guarantee; D1 pairs with the grace period in ksync_shrinker_group_destroy()).
 */
static KSYNC_ALWAYS_INLINE bool group_alive(const struct ksync_shrinker_group *g)
{
	return !KSYNC_READ_ONCE(g->dead); /* D1 */
}

/*
 * Leave the read section *@idx for a waiting writer and enter a new one,
 * keeping @g valid across the gap; false if @g is being destroyed (the
 * caller then ends the walk: no access to @g after that but the unlock).
 *
 * A group walk holds no reference on its group, and the grace period of
 * ksync_shrinker_group_destroy() waits only for read sections, not for a
 * walker between two of them. So the walker announces itself in ->parked
 * inside the section it leaves (P1: a plain increment; the grace period
 * that destroy waits for after setting ->dead orders it before destroy's
 * read, as it does every access of a section it waits for), and withdraws
 * inside the next section after reading ->dead (P2: fully ordered, pairs
 * with the acquire read in group_wait_parked()). Destroy waits for ->parked
 * to reach zero before it frees anything, so the walker's new section, whose
 * grace period the free waits for (call_srcu), always finds @g in memory.
 * A walker that sees ->dead == 0 in the new section began it before
 * destroy's grace period (SRCU: a later section would see ->dead), so that
 * grace period waits for it; only one that sees ->dead == 1 may be the last
 * thing destroy waits for, and it wakes destroy.
 */
static bool group_resume_after_gap(struct ksync_shrinker_group *g, int *idx)
{
	struct ksync_shrinker_registry *reg = g->reg;
	bool alive;

	ksync_atomic_inc(&g->parked); /* P1 */
	ksync_srcu_read_unlock(&reg->srcu, *idx);
	yield_point(KSYNC_SHRINKER_YP_SECTION_DROPPED);
	*idx = ksync_srcu_read_lock(&reg->srcu);
	alive = group_alive(g);
	/* P2: pairs with the acquire in group_wait_parked(). */
	if (ksync_atomic_dec_and_test(&g->parked) && !alive)
		futex_wake_all(&g->parked);
	return alive;
}

/* Destroy, after its grace period: wait until no walker of @g is between two sections. */
static void group_wait_parked(struct ksync_shrinker_group *g)
{
	for (;;) {
		/* Acquire: pairs with P2 in group_resume_after_gap(). */
		int v = ksync_atomic_read_acquire(&g->parked);

		if (!v)
			return;
		futex_wait(&g->parked, v);
	}
}

/* ------------------------------------------------------------------------ */
/* Registries                                                               */

#define INITIAL_NR_MAX ((unsigned int)KSYNC_BITS_PER_LONG)

static struct idr_table *idr_alloc_table(unsigned int nr)
{
	struct idr_table *t = calloc(1, sizeof(*t) + (size_t)nr * sizeof(t->slot[0]));

	if (t)
		t->nr = nr;
	return t;
}

static void free_rcu_idr(struct ksync_rcu_head *head)
{
	free(ksync_container_of(head, struct idr_table, rcu));
}

struct ksync_shrinker_registry *ksync_shrinker_registry_create(int nr_nodes)
{
	struct ksync_shrinker_registry *reg;

	if (KSYNC_WARN(nr_nodes < 1 || nr_nodes > KSYNC_SHRINKER_MAX_NODES,
		       "ksync_shrinker_registry_create: bad nr_nodes"))
		return NULL;
	/* The layout above is cache-line aligned: so must the memory be. */
	reg = aligned_alloc(KSYNC_CACHELINE_SIZE,
			    ksync_round_up(sizeof(*reg), (size_t)KSYNC_CACHELINE_SIZE));
	if (!reg)
		return NULL;
	memset(reg, 0, sizeof(*reg));
	if (ksync_init_srcu_struct(&reg->srcu) != 0) {
		free(reg);
		return NULL;
	}
	pthread_mutex_init(&reg->mutex, NULL);
	pthread_mutex_init(&reg->cache_lock, NULL);
	ksync_init_list_head(&reg->shrinkers);
	ksync_init_list_head(&reg->groups);
	ksync_init_list_head(&reg->dying_groups);
	reg->nr_nodes = nr_nodes;
	reg->node_size = sizeof(struct ksync_shrinker_node) +
			 (size_t)nr_nodes * sizeof(ksync_atomic_long_t);
	reg->nr_max = INITIAL_NR_MAX;
	reg->ids_cap = INITIAL_NR_MAX;
	reg->ids_used = calloc(KSYNC_BITS_TO_LONGS(reg->ids_cap), sizeof(unsigned long));
	struct idr_table *t = idr_alloc_table(INITIAL_NR_MAX);
	if (!reg->ids_used || !t) {
		free(reg->ids_used);
		free(t);
		ksync_cleanup_srcu_struct(&reg->srcu);
		free(reg);
		return NULL;
	}
	KSYNC_RCU_INIT_POINTER(reg->idr, t);
	return reg;
}

int ksync_shrinker_registry_destroy(struct ksync_shrinker_registry *reg)
{
	if (!reg)
		return -EINVAL;
	pthread_mutex_lock(&reg->mutex);
	bool busy = reg->nr_groups != 0 || reg->nr_nodes_alive != 0;
	pthread_mutex_unlock(&reg->mutex);
	if (KSYNC_WARN(busy, "ksync_shrinker_registry_destroy: shrinkers or groups remain; leaking the registry"))
		return -EBUSY;
	pthread_mutex_lock(&reg->mutex);
	struct ksync_shrinker_node *batch = take_batch_locked(reg);
	pthread_mutex_unlock(&reg->mutex);
	queue_batch(reg, batch);
	ksync_srcu_barrier(&reg->srcu);
	while (reg->node_cache) {
		struct ksync_shrinker_node *n = reg->node_cache;

		reg->node_cache = n->free_next;
		free(n);
	}
	free((void *)ksync_rcu_access_pointer(reg->idr));
	free(reg->ids_used);
	ksync_cleanup_srcu_struct(&reg->srcu);
	pthread_mutex_destroy(&reg->mutex);
	pthread_mutex_destroy(&reg->cache_lock);
	free(reg);
	return 0;
}

static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static struct ksync_shrinker_registry *default_reg;
static int default_nr_nodes = 1;
static int default_created;

static void default_init(void)
{
	struct ksync_shrinker_registry *r = ksync_shrinker_registry_create(default_nr_nodes);

	/* DR1: publishes the initialised registry; pairs with DR2 below. */
	ksync_smp_store_release(&default_reg, r);
	KSYNC_WRITE_ONCE(default_created, 1);
}

struct ksync_shrinker_registry *ksync_shrinker_registry_default(void)
{
	/* DR2: pairs with DR1 in default_init(): a non-NULL pointer is initialised. */
	struct ksync_shrinker_registry *r = ksync_smp_load_acquire(&default_reg);

	if (ksync_likely(r != NULL))
		return r;
	pthread_once(&default_once, default_init);
	return ksync_smp_load_acquire(&default_reg); /* DR2 again, after the once */
}

int ksync_shrinker_set_default_nr_nodes(int nr_nodes)
{
	if (KSYNC_WARN(nr_nodes < 1 || nr_nodes > KSYNC_SHRINKER_MAX_NODES,
		       "ksync_shrinker_set_default_nr_nodes: bad nr_nodes"))
		return -EINVAL;
	if (KSYNC_READ_ONCE(default_created))
		return -EBUSY;
	KSYNC_WRITE_ONCE(default_nr_nodes, nr_nodes);
	return 0;
}

static KSYNC_ALWAYS_INLINE struct ksync_shrinker_registry *
reg_or_default(struct ksync_shrinker_registry *reg)
{
	return reg ? reg : ksync_shrinker_registry_default();
}

int ksync_shrinker_registry_nr_nodes(struct ksync_shrinker_registry *reg)
{
	reg = reg_or_default(reg);
	return reg ? reg->nr_nodes : 0;
}

int ksync_shrinker_nr_max(struct ksync_shrinker_registry *reg)
{
	reg = reg_or_default(reg);
	return reg ? (int)KSYNC_READ_ONCE(reg->nr_max) : 0;
}

/* ------------------------------------------------------------------------ */
/* Ids and growth (writers, under reg->mutex)                               */

/* Grow every group's maps and the id table to @new_nr bits (see grow_locked()). */
static int grow_maps_locked(struct ksync_shrinker_registry *reg, unsigned int new_nr)
{
	struct ksync_shrinker_group *g;
	struct idr_table *old, *t;
	int ret;

	/*
	 * Maps first: once nr_max says "new_nr", set_shrinker_bit callers expect
	 * room. Summary before its map (G1, release by the publication): a
	 * reader that fetched the grown map, then the summary, gets a summary
	 * large enough for it (pairs with the fetch order in
	 * ksync_set_shrinker_bit()).
	 */
	ksync_list_for_each_entry(g, &reg->groups, list) {
		for (int nid = 0; nid < reg->nr_nodes; nid++) {
			ret = ksync_sized_map_grow(&SUMMARY(g, nid),
						   KSYNC_DIV_ROUND_UP(new_nr, UNIT_BITS), &reg->srcu);
			if (!ret)
				ret = ksync_sized_map_grow(&g->maps[nid], new_nr, &reg->srcu);
			if (ret)
				return ret; /* grown maps stay grown: harmless */
		}
	}
	old = (struct idr_table *)ksync_rcu_access_pointer(reg->idr);
	t = idr_alloc_table(new_nr);
	if (!t)
		return -ENOMEM;
	for (unsigned int i = 0; i < old->nr; i++)
		KSYNC_RCU_INIT_POINTER(t->slot[i], ksync_rcu_access_pointer(old->slot[i]));
	/* Publishes the copied slots; pairs with ksync_srcu_dereference() in idr_lookup(). */
	ksync_rcu_assign_pointer(reg->idr, t);
	KSYNC_WRITE_ONCE(reg->nr_max, new_nr);
	yield_point(KSYNC_SHRINKER_YP_GROW_PUBLISHED);
	ksync_call_srcu(&reg->srcu, &old->rcu, free_rcu_idr);
	return 0;
}

/*
 * Q: writers holding reg->mutex queue their SRCU callbacks from inside a
 * read section of reg->srcu. ksync_call_srcu() throttles a caller past
 * the domain's callback limit until the helper works the queue down,
 * which takes a grace period; a thread holding reg->mutex must never wait
 * for one, because a shrinker callback (inside a walk's read section) may
 * be waiting for reg->mutex (registering or freeing another shrinker), and
 * one growth queues two callbacks per group and node. call_srcu() never
 * throttles a caller inside a read section of the same domain (srcu.h).
 * The section only holds grace periods back while the writer works; nothing
 * under reg->mutex waits for a grace period.
 */
static int grow_locked(struct ksync_shrinker_registry *reg, unsigned int new_nr)
{
	int idx, ret;

	if (new_nr <= reg->nr_max)
		return 0;
	idx = ksync_srcu_read_lock(&reg->srcu);
	ret = grow_maps_locked(reg, new_nr);
	ksync_srcu_read_unlock(&reg->srcu, idx);
	return ret;
}

static int id_alloc_locked(struct ksync_shrinker_registry *reg)
{
	unsigned int id = 0, words = (unsigned int)KSYNC_BITS_TO_LONGS(reg->ids_cap);

	for (unsigned int w = 0; w < words; w++) {
		if (reg->ids_used[w] != ~0UL) {
			id = w * KSYNC_BITS_PER_LONG + (unsigned int)__builtin_ctzl(~reg->ids_used[w]);
			goto found;
		}
	}
	id = reg->ids_cap;
found:
	if (id >= (unsigned int)INT_MAX / 2)
		return -ENOSPC;
	if (id >= reg->ids_cap) {
		unsigned int cap = reg->ids_cap * 2;
		unsigned long *n = realloc(reg->ids_used, KSYNC_BITS_TO_LONGS(cap) * sizeof(long));
		if (!n)
			return -ENOMEM;
		memset(n + words, 0, (KSYNC_BITS_TO_LONGS(cap) - words) * sizeof(long));
		reg->ids_used = n;
		reg->ids_cap = cap;
	}
	if (id >= reg->nr_max) {
		int ret = grow_locked(reg, ksync_round_up(id + 1, (unsigned int)KSYNC_BITS_PER_LONG));
		if (ret)
			return ret;
	}
	reg->ids_used[id / KSYNC_BITS_PER_LONG] |= 1UL << (id % KSYNC_BITS_PER_LONG);
	return (int)id;
}

static void id_free_locked(struct ksync_shrinker_registry *reg, int id)
{
	struct idr_table *t = (struct idr_table *)ksync_rcu_access_pointer(reg->idr);

	KSYNC_RCU_INIT_POINTER(t->slot[id], NULL);
	reg->ids_used[id / KSYNC_BITS_PER_LONG] &= ~(1UL << (id % KSYNC_BITS_PER_LONG));
}

static KSYNC_ALWAYS_INLINE struct ksync_shrinker_node *
idr_lookup(struct ksync_shrinker_registry *reg, unsigned int id)
{
	struct idr_table *t = ksync_srcu_dereference(reg->idr, &reg->srcu);

	if (id >= t->nr)
		return NULL;
	return ksync_srcu_dereference(t->slot[id], &reg->srcu);
}

/* ------------------------------------------------------------------------ */
/* Allocation, registration                                                 */

/* call_srcu callback: free a batch of nodes chained through free_next. */
static void free_rcu_node_batch(struct ksync_rcu_head *head)
{
	struct ksync_shrinker_node *node = ksync_container_of(head, struct ksync_shrinker_node, rcu);
	struct ksync_shrinker_registry *reg = node->reg;

	/* No reader can hold these any more: keep some for reuse. */
	pthread_mutex_lock(&reg->cache_lock);
	while (node && reg->node_cache_len < NODE_CACHE_MAX) {
		struct ksync_shrinker_node *next = node->free_next;

		node->magic = 0;
		node->free_next = reg->node_cache;
		reg->node_cache = node;
		reg->node_cache_len++;
		node = next;
	}
	pthread_mutex_unlock(&reg->cache_lock);
	while (node) {
		struct ksync_shrinker_node *next = node->free_next;

		node->magic = 0;
		free(node);
		node = next;
	}
}

/* Detach the pending batch (under reg->mutex); queue it with queue_batch(). */
static struct ksync_shrinker_node *take_batch_locked(struct ksync_shrinker_registry *reg)
{
	struct ksync_shrinker_node *batch = reg->free_batch;

	reg->free_batch = NULL;
	reg->free_batch_len = 0;
	return batch;
}

static void queue_batch(struct ksync_shrinker_registry *reg, struct ksync_shrinker_node *batch)
{
	if (batch)
		ksync_call_srcu(&reg->srcu, &batch->rcu, free_rcu_node_batch);
}

static struct ksync_shrinker_node *node_prepare(struct ksync_shrinker_registry *reg,
						struct ksync_shrinker *s, bool owned,
						unsigned flags, const char *fmt, va_list ap)
{
	struct ksync_shrinker_node *node;

	pthread_mutex_lock(&reg->cache_lock);
	node = reg->node_cache;
	if (node) {
		reg->node_cache = node->free_next;
		reg->node_cache_len--;
	}
	pthread_mutex_unlock(&reg->cache_lock);
	if (node)
		memset(node, 0, reg->node_size);
	if (!node)
		node = calloc(1, reg->node_size);
	if (!node)
		return NULL;
	node->magic = NODE_MAGIC;
	node->reg = reg;
	node->owned = owned;
	node->flags = flags;
	node->id = -1;
	if (owned)
		s = &node->owned_s;
	node->shrinker = s;
	if (fmt)
		vsnprintf(node->name, sizeof(node->name), fmt, ap);
	ksync_atomic_set(&node->state, NODE_PREPARED);

	pthread_mutex_lock(&reg->mutex);
	if (flags & KSYNC_SHRINKER_MEMCG_AWARE) {
		int id = id_alloc_locked(reg);
		if (id < 0) {
			pthread_mutex_unlock(&reg->mutex);
			free(node);
			return NULL;
		}
		node->id = id;
		struct idr_table *t = (struct idr_table *)ksync_rcu_access_pointer(reg->idr);
		/* Publishes the node (refcount 0: walkers skip it) to id lookups. */
		ksync_rcu_assign_pointer(t->slot[id], node);
	}
	reg->nr_nodes_alive++;
	pthread_mutex_unlock(&reg->mutex);

	s->flags = flags;
	s->id = node->id;
	/*
	 * PUB: release; the node's fields, then the registry, then the node,
	 * for the debug calls and unregister, which look them up without the
	 * mutex (acquire loads in debug_enter() and ksync_unregister_shrinker()).
	 */
	ksync_smp_store_release(&s->reg, reg);
	ksync_smp_store_release(&s->node, node);
	return node;
}

struct ksync_shrinker *ksync_shrinker_alloc(struct ksync_shrinker_registry *reg, unsigned flags,
					    const char *fmt, ...)
{
	struct ksync_shrinker_node *node;
	va_list ap;

	reg = reg_or_default(reg);
	if (!reg)
		return NULL;
	if (KSYNC_WARN(flags & ~KSYNC_SHRINKER_USER_FLAGS, "ksync_shrinker_alloc: unknown flags"))
		return NULL;
	va_start(ap, fmt);
	node = node_prepare(reg, NULL, true, flags, fmt, ap);
	va_end(ap);
	if (!node)
		return NULL;
	node->owned_s.seeks = KSYNC_DEFAULT_SEEKS;
	return &node->owned_s;
}

/* The node of @s if @s is one of ours, else NULL (reported by the caller). */
static struct ksync_shrinker_node *node_of(const struct ksync_shrinker *s)
{
	struct ksync_shrinker_node *node = s ? KSYNC_READ_ONCE(s->node) : NULL;

	if (!node || node->magic != NODE_MAGIC || node->shrinker != s)
		return NULL;
	return node;
}

static int do_register(struct ksync_shrinker *s, const char *who)
{
	struct ksync_shrinker_node *node;
	int st = NODE_PREPARED;

	if (KSYNC_WARN(!s || !s->node, "register: shrinker not allocated/prepared"))
		return -EINVAL;
	node = node_of(s);
	if (KSYNC_WARN(!node, "register: foreign shrinker (not prepared by this registry)"))
		return -EINVAL;
	if (KSYNC_WARN(!s->count_objects || !s->scan_objects,
		       "register: count_objects and scan_objects are required"))
		return -EINVAL;
	if (!ksync_atomic_try_cmpxchg(&node->state, &st, NODE_REGISTERED)) {
		KSYNC_WARN(1, "register: shrinker already registered (double register)");
		(void)who;
		return -EBUSY;
	}
	struct ksync_shrinker_registry *reg = node->reg;

	pthread_mutex_lock(&reg->mutex);
	/* R1: release; the caller's fields and node fields before it; pairs with R2. */
	ksync_atomic_set_release(&node->refcount, 1);
	ksync_list_add_tail_rcu(&node->list, &reg->shrinkers);
	pthread_mutex_unlock(&reg->mutex);
	return 0;
}

int ksync_shrinker_register(struct ksync_shrinker *s)
{
	return do_register(s, "ksync_shrinker_register");
}

int ksync_prealloc_shrinker(struct ksync_shrinker_registry *reg, struct ksync_shrinker *s,
			    const char *fmt, ...)
{
	struct ksync_shrinker_node *node;
	va_list ap;

	if (KSYNC_WARN(!s, "ksync_prealloc_shrinker: NULL shrinker"))
		return -EINVAL;
	if (KSYNC_WARN(s->node != NULL, "ksync_prealloc_shrinker: shrinker already prepared or registered"))
		return -EBUSY;
	if (KSYNC_WARN(s->flags & ~KSYNC_SHRINKER_USER_FLAGS, "ksync_prealloc_shrinker: unknown flags"))
		return -EINVAL;
	reg = reg_or_default(reg);
	if (!reg)
		return -ENOMEM;
	va_start(ap, fmt);
	node = node_prepare(reg, s, false, s->flags, fmt, ap);
	va_end(ap);
	return node ? 0 : -ENOMEM;
}

int ksync_register_shrinker_prepared(struct ksync_shrinker *s)
{
	return do_register(s, "ksync_register_shrinker_prepared");
}

int ksync_register_shrinker(struct ksync_shrinker_registry *reg, struct ksync_shrinker *s,
			    const char *fmt, ...)
{
	struct ksync_shrinker_node *node;
	va_list ap;
	int ret;

	if (KSYNC_WARN(!s, "ksync_register_shrinker: NULL shrinker"))
		return -EINVAL;
	if (KSYNC_WARN(s->node != NULL, "ksync_register_shrinker: shrinker already registered"))
		return -EBUSY;
	if (KSYNC_WARN(!s->count_objects || !s->scan_objects,
		       "ksync_register_shrinker: count_objects and scan_objects are required"))
		return -EINVAL;
	if (KSYNC_WARN(s->flags & ~KSYNC_SHRINKER_USER_FLAGS, "ksync_register_shrinker: unknown flags"))
		return -EINVAL;
	reg = reg_or_default(reg);
	if (!reg)
		return -ENOMEM;
	va_start(ap, fmt);
	node = node_prepare(reg, s, false, s->flags, fmt, ap);
	va_end(ap);
	if (!node)
		return -ENOMEM;
	ret = do_register(s, "ksync_register_shrinker");
	if (ret)
		ksync_free_prealloced_shrinker(s);
	return ret;
}

/* Move @node's global counters to reg->retired (under reg->mutex). */
static void retire_deferred_locked(struct ksync_shrinker_node *node)
{
	struct ksync_shrinker_registry *reg = node->reg;
	long retired = 0;

	for (int nid = 0; nid < reg->nr_nodes; nid++)
		retired += ksync_atomic_long_xchg(&node->nr_deferred[nid], 0);
	if (retired)
		ksync_atomic_long_add(retired, &reg->retired);
}

/* Retire @node's id and global counters and queue its memory (mutex not held). */
static void node_release(struct ksync_shrinker_node *node)
{
	struct ksync_shrinker_registry *reg = node->reg;
	struct ksync_shrinker_node *batch = NULL;

	pthread_mutex_lock(&reg->mutex);
	if (node->id >= 0)
		id_free_locked(reg, node->id);
	/* Unregistered nodes were retired at unlink; prepared ones are here. */
	retire_deferred_locked(node);
	reg->nr_nodes_alive--;
	yield_point(KSYNC_SHRINKER_YP_BEFORE_FREE);
	node->free_next = reg->free_batch;
	reg->free_batch = node;
	if (++reg->free_batch_len >= FREE_BATCH)
		batch = take_batch_locked(reg);
	pthread_mutex_unlock(&reg->mutex);
	queue_batch(reg, batch);
}

/* REGISTERED -> UNREGISTERED: the only wait is for calls into this shrinker. */
/* REGISTERED -> UNREGISTERING: one winner, which then owns the record until it releases it. */
static int unregister_claim(struct ksync_shrinker_node *node)
{
	int st = NODE_REGISTERED;

	if (KSYNC_WARN(thread_is_calling(node),
		       "unregister: called from the shrinker's own callback (would deadlock)"))
		return -EDEADLK;
	if (ksync_atomic_try_cmpxchg(&node->state, &st, NODE_UNREGISTERING))
		return 0;
	if (st == NODE_PREPARED)
		return -ENOENT;
	if (KSYNC_WARN(st == NODE_UNREGISTERED, "unregister: shrinker already unregistered"))
		return -ENOENT;
	KSYNC_WARN(1, "unregister: shrinker is being unregistered by another thread");
	return -EBUSY;
}

/* UNREGISTERING -> UNREGISTERED, or back to REGISTERED with -EDEADLK (a cycle). */
static int unregister_finish(struct ksync_shrinker_node *node)
{
	struct ksync_shrinker_registry *reg = node->reg;

	node_put(node); /* the initial reference */
	yield_point(KSYNC_SHRINKER_YP_UNREG_BEFORE_WAIT);
	if (tls_depth > 0) {
		struct unreg_wait me;

		if (!unreg_wait_publish(&me, node)) {
			/*
			 * Back out. A thread of the cycle is inside a callback
			 * of @node, holding a reference, and cannot return
			 * before we do: the count is at least 1, so it has not
			 * reached zero (the completion has not fired) and
			 * taking the initial reference back is safe.
			 */
			ksync_atomic_inc(&node->refcount);
			ksync_atomic_set(&node->state, NODE_REGISTERED);
			KSYNC_WARN(1, "unregister: shrinker callbacks unregister each other in a cycle "
				      "(would deadlock); this one is refused");
			return -EDEADLK;
		}
		yield_point(KSYNC_SHRINKER_YP_UNREG_WAIT_CHECKED);
		completion_wait(&node->done);
		unreg_wait_done(&me);
	} else {
		completion_wait(&node->done);
	}
	yield_point(KSYNC_SHRINKER_YP_UNREG_AFTER_WAIT);
	pthread_mutex_lock(&reg->mutex);
	ksync_list_del_rcu(&node->list);
	/*
	 * Retire the global counters in the same critical section as the
	 * unlink: ksync_shrinker_deferred_total() (under the mutex) must find
	 * them either on the list or in reg->retired, never in neither.
	 */
	retire_deferred_locked(node);
	pthread_mutex_unlock(&reg->mutex);
	ksync_atomic_set(&node->state, NODE_UNREGISTERED);
	return 0;
}

static int do_unregister(struct ksync_shrinker_node *node)
{
	int ret = unregister_claim(node);

	return ret ? ret : unregister_finish(node);
}

int ksync_shrinker_free(struct ksync_shrinker *s)
{
	struct ksync_shrinker_node *node;
	int ret;

	if (!s)
		return 0;
	node = node_of(s);
	if (KSYNC_WARN(!node || !node->owned,
		       "ksync_shrinker_free: not a shrinker from ksync_shrinker_alloc()"))
		return -EINVAL;
	if (KSYNC_WARN(thread_is_calling(node),
		       "ksync_shrinker_free: called from the shrinker's own callback (would deadlock)"))
		return -EDEADLK;
	if (ksync_atomic_read(&node->state) != NODE_PREPARED) {
		ret = do_unregister(node);
		if (ret)
			return ret;
	}
	node_release(node);
	return 0;
}

int ksync_unregister_shrinker(struct ksync_shrinker *s)
{
	struct ksync_shrinker_registry *reg = s ? ksync_smp_load_acquire(&s->reg) : NULL; /* PUB */
	struct ksync_shrinker_node *node;
	int ret, idx;

	if (!reg) {
		/* Not prepared here; a struct with a node but no registry claims another's record. */
		if (KSYNC_WARN(s && KSYNC_READ_ONCE(s->node),
			       "ksync_unregister_shrinker: foreign shrinker (not prepared by this API)"))
			return -EINVAL;
		KSYNC_WARN(1, "ksync_unregister_shrinker: shrinker not registered");
		return -ENOENT;
	}
	/*
	 * Find and claim the record inside a read section: a thread that
	 * unregisters @s at the same time frees the record (call_srcu) once it
	 * is done, so this one sees @s->node cleared, or the record's final
	 * state, never freed memory.
	 */
	idx = ksync_srcu_read_lock(&reg->srcu);
	node = ksync_smp_load_acquire(&s->node); /* PUB */
	if (KSYNC_WARN(!node, "ksync_unregister_shrinker: shrinker not registered"))
		ret = -ENOENT;
	else if (KSYNC_WARN(node->magic != NODE_MAGIC || node->shrinker != s || node->owned,
			    "ksync_unregister_shrinker: foreign shrinker (use ksync_shrinker_free() for allocated ones)"))
		ret = -EINVAL;
	else if (KSYNC_WARN(ksync_atomic_read(&node->state) == NODE_PREPARED,
			    "ksync_unregister_shrinker: shrinker prepared but not registered"))
		ret = -ENOENT;
	else {
		yield_point(KSYNC_SHRINKER_YP_RECORD_FOUND);
		ret = unregister_claim(node);
	}
	ksync_srcu_read_unlock(&reg->srcu, idx);
	if (!ret)
		ret = unregister_finish(node);
	if (ret)
		return ret;
	/*
	 * No walker will dereference @s again: give the caller its struct back.
	 * Debug calls look @s->node up inside a read section; the node is
	 * queued for freeing (call_srcu) only after this store, so a debug call
	 * either sees NULL or a node that outlives its section.
	 */
	KSYNC_WRITE_ONCE(s->node, NULL);
	KSYNC_WRITE_ONCE(s->reg, NULL);
	s->id = -1;
	node_release(node);
	return 0;
}

void ksync_free_prealloced_shrinker(struct ksync_shrinker *s)
{
	struct ksync_shrinker_node *node;

	if (!s || !s->node)
		return;
	node = node_of(s);
	if (KSYNC_WARN(!node || node->owned, "ksync_free_prealloced_shrinker: foreign shrinker"))
		return;
	if (KSYNC_WARN(ksync_atomic_read(&node->state) != NODE_PREPARED,
		       "ksync_free_prealloced_shrinker: shrinker is registered; unregister it"))
		return;
	KSYNC_WRITE_ONCE(s->node, NULL);
	KSYNC_WRITE_ONCE(s->reg, NULL);
	s->id = -1;
	node_release(node);
}


/* ------------------------------------------------------------------------ */
/* Groups                                                                   */

static void free_rcu_group(struct ksync_rcu_head *head)
{
	struct ksync_shrinker_group *g = ksync_container_of(head, struct ksync_shrinker_group, rcu);

	g->magic = 0;
	free(g);
}

struct ksync_shrinker_group *ksync_shrinker_group_create(struct ksync_shrinker_registry *reg,
							 struct ksync_shrinker_group *parent)
{
	struct ksync_shrinker_group *g;

	if (parent)
		reg = parent->reg;
	reg = reg_or_default(reg);
	if (!reg)
		return NULL;
	if (KSYNC_WARN(parent && parent->magic != GROUP_MAGIC, "ksync_shrinker_group_create: bad parent"))
		return NULL;
	g = calloc(1, sizeof(*g) + 2 * (size_t)reg->nr_nodes * sizeof(g->maps[0]));
	if (!g)
		return NULL;
	g->magic = GROUP_MAGIC;
	g->reg = reg;
	g->parent = parent;

	pthread_mutex_lock(&reg->mutex);
	if (KSYNC_WARN(parent && parent->dead, "ksync_shrinker_group_create: parent is being destroyed"))
		goto fail;
	for (int nid = 0; nid < reg->nr_nodes; nid++) {
		struct ksync_sized_map *m = ksync_sized_map_alloc(reg->nr_max, sizeof(ksync_atomic_long_t));
		if (!m)
			goto fail;
		KSYNC_RCU_INIT_POINTER(g->maps[nid], m);
		m = ksync_sized_map_alloc(KSYNC_DIV_ROUND_UP(reg->nr_max, UNIT_BITS), 0);
		if (!m)
			goto fail;
		KSYNC_RCU_INIT_POINTER(SUMMARY(g, nid), m);
	}
	g->id = reg->next_group_id++;
	if (parent)
		parent->nr_children++;
	reg->nr_groups++;
	/* Publishes the group and its maps to debug walkers of reg->groups. */
	ksync_list_add_tail_rcu(&g->list, &reg->groups);
	pthread_mutex_unlock(&reg->mutex);
	return g;
fail:
	pthread_mutex_unlock(&reg->mutex);
	for (int i = 0; i < 2 * reg->nr_nodes; i++)
		if (ksync_rcu_access_pointer(g->maps[i]))
			ksync_sized_map_free((struct ksync_sized_map *)ksync_rcu_access_pointer(g->maps[i]));
	free(g);
	return NULL;
}

int ksync_shrinker_group_id(const struct ksync_shrinker_group *g)
{
	return g ? g->id : -1;
}

int ksync_shrinker_group_destroy(struct ksync_shrinker_group *g)
{
	struct ksync_shrinker_registry *reg;

	if (KSYNC_WARN(!g || g->magic != GROUP_MAGIC, "ksync_shrinker_group_destroy: not a group"))
		return -EINVAL;
	if (KSYNC_WARN(tls_depth > 0, "ksync_shrinker_group_destroy: called from a shrinker callback"))
		return -EDEADLK;
	reg = g->reg;
	pthread_mutex_lock(&reg->mutex);
	if (KSYNC_WARN(g->dead, "ksync_shrinker_group_destroy: group already being destroyed")) {
		pthread_mutex_unlock(&reg->mutex);
		return -EBUSY;
	}
	if (KSYNC_WARN(g->nr_children, "ksync_shrinker_group_destroy: group has children")) {
		pthread_mutex_unlock(&reg->mutex);
		return -EBUSY;
	}
	KSYNC_WRITE_ONCE(g->dead, 1);
	ksync_list_del_rcu(&g->list);
	/* Its counters stay in the ledger until they are moved below. */
	ksync_list_add_tail(&g->dying, &reg->dying_groups);
	pthread_mutex_unlock(&reg->mutex);

	/*
	 * Wait for the walks inside @g (they add to its counters): a grace
	 * period (D1). Walks take no reference on the group, so that a group
	 * walk costs no atomic on the group's line; group destruction (the
	 * kernel's memcg offlining) is rare and may wait, unlike unregister.
	 */
	yield_point(KSYNC_SHRINKER_YP_GROUP_BEFORE_WAIT);
	ksync_synchronize_srcu(&reg->srcu);
	/* And the walks that left their section for a writer: see group_resume_after_gap(). */
	yield_point(KSYNC_SHRINKER_YP_GROUP_WAIT_WALKERS);
	group_wait_parked(g);

	pthread_mutex_lock(&reg->mutex);
	ksync_list_del(&g->dying);
	/* Q (see grow_locked()): the map frees below are queued unthrottled. */
	int ridx = ksync_srcu_read_lock(&reg->srcu);
	long orphaned = 0;
	for (int nid = 0; nid < reg->nr_nodes; nid++) {
		struct ksync_sized_map *m = (struct ksync_sized_map *)ksync_rcu_access_pointer(g->maps[nid]);
		struct ksync_sized_map *pm = g->parent
			? (struct ksync_sized_map *)ksync_rcu_access_pointer(g->parent->maps[nid]) : NULL;
		unsigned int nr = ksync_sized_map_nr_max(m);

		for (unsigned int id = 0; id < nr; id++) {
			ksync_atomic_long_t *c = ksync_sized_map_data(m, id);
			if (!ksync_atomic_long_read(c))
				continue;
			long v = ksync_atomic_long_xchg(c, 0);
			if (pm) {
				/* The parent's maps are as large as ours: grown together under the mutex. */
				ksync_atomic_long_add(v, (ksync_atomic_long_t *)ksync_sized_map_data(pm, id));
				/* Its walks should visit the id that now carries work. */
				ksync_sized_map_set_bit(pm, id);
				/* S2 as in ksync_set_shrinker_bit(): the bit before the summary bit. */
				ksync_smp_mb__after_atomic();
				ksync_sized_map_set_bit(
					(struct ksync_sized_map *)ksync_rcu_access_pointer(
						SUMMARY(g->parent, nid)),
					id / UNIT_BITS);
			} else {
				orphaned += v;
			}
		}
		/* Readers (set_shrinker_bit) may still hold @m: free it after a grace period. */
		ksync_sized_map_free_srcu(m, &reg->srcu);
		ksync_sized_map_free_srcu((struct ksync_sized_map *)ksync_rcu_access_pointer(SUMMARY(g, nid)),
					  &reg->srcu);
	}
	ksync_srcu_read_unlock(&reg->srcu, ridx);
	if (orphaned)
		ksync_atomic_long_add(orphaned, &reg->orphaned);
	if (g->parent)
		g->parent->nr_children--;
	reg->nr_groups--;
	pthread_mutex_unlock(&reg->mutex);
	ksync_call_srcu(&reg->srcu, &g->rcu, free_rcu_group);
	return 0;
}

int ksync_set_shrinker_bit(struct ksync_shrinker_group *g, int nid, int id)
{
	struct ksync_shrinker_registry *reg;
	struct ksync_sized_map *m, *sm;
	int ret = 0, idx;

	if (!g)
		return 0;
	reg = g->reg;
	if (KSYNC_WARN(nid < 0 || nid >= reg->nr_nodes, "ksync_set_shrinker_bit: bad nid"))
		return -EINVAL;
	if (KSYNC_WARN(id < 0, "ksync_set_shrinker_bit: negative shrinker id"))
		return -EINVAL;
	idx = ksync_srcu_read_lock(&reg->srcu);
	/* Map, then summary: see G1 in grow_locked(). */
	m = ksync_srcu_dereference(g->maps[nid], &reg->srcu);
	sm = ksync_srcu_dereference(SUMMARY(g, nid), &reg->srcu);
	if (KSYNC_WARN((unsigned int)id >= ksync_sized_map_nr_max(m),
		       "ksync_set_shrinker_bit: id beyond the group's map (map_nr_max)")) {
		ret = -EINVAL;
	} else {
		/*
		 * S1: full barrier between the caller's new objects and the bit
		 * test/set; pairs with W1 in shrink_slab_group(). Either the
		 * walker's recount sees the objects, or we see the bit cleared
		 * and set it again.
		 */
		ksync_smp_mb__before_atomic();
		ksync_sized_map_set_bit(m, (unsigned int)id);
		/*
		 * S2: the bit before the summary test; pairs with W2 in
		 * shrink_slab_group(). Either the walker's recheck of the unit
		 * sees our bit, or we see its summary bit cleared and set it.
		 */
		ksync_smp_mb__after_atomic();
		if (!ksync_sized_map_test_bit(sm, (unsigned int)id / UNIT_BITS))
			ksync_sized_map_set_bit(sm, (unsigned int)id / UNIT_BITS);
	}
	ksync_srcu_read_unlock(&reg->srcu, idx);
	return ret;
}

/* ------------------------------------------------------------------------ */
/* Walks                                                                    */

/* Call one of the shrinker's callbacks, recorded as a call into @node (misuse checks). */
#define CALL_SHRINKER(node, sc, callback)                                      \
	__extension__({                                                        \
		struct ksync_shrinker *cs_s = (node)->shrinker;                \
		unsigned long cs_r;                                            \
		call_enter(node);                                              \
		cs_r = cs_s->callback(cs_s, (sc));                             \
		call_exit();                                                   \
		cs_r;                                                          \
	})
#define call_count(node, sc) CALL_SHRINKER(node, sc, count_objects)
#define call_scan(node, sc) CALL_SHRINKER(node, sc, scan_objects)

/*
 * One shrinker, one (group, node): count, add the carried-over work, scan in
 * batches, carry over what was not done. Returns SHRINK_EMPTY when the
 * shrinker said so, else the objects freed. Caller holds a reference.
 */
static unsigned long do_shrink(struct ksync_shrinker_node *node, struct ksync_shrink_control *sc,
			       ksync_atomic_long_t *deferred, int priority)
{
	struct ksync_shrinker *s = node->shrinker;
	unsigned long freeable, freed = 0, scanned = 0, delta, total_scan, batch;
	long nr = 0, next;

	freeable = call_count(node, sc);
	if (freeable == 0 || freeable == KSYNC_SHRINK_EMPTY)
		return freeable;
	if (KSYNC_WARN_ONCE(freeable > KSYNC_SHRINKER_MAX_OBJECTS,
			    "shrink_slab: count_objects returned an absurd value; read as 0"))
		return 0;

	if (ksync_atomic_long_read(deferred))
		nr = ksync_atomic_long_xchg(deferred, 0);
	if (KSYNC_WARN_ONCE(nr < 0, "shrink_slab: negative nr_deferred; read as 0"))
		nr = 0;

	if (s->seeks > 0)
		delta = ((freeable >> priority) * 4) / (unsigned long)s->seeks;
	else
		delta = freeable / 2;
	total_scan = ((unsigned long)nr >> priority) + delta;
	total_scan = ksync_min(total_scan, 2 * freeable);
	batch = s->batch > 0 ? (unsigned long)s->batch : KSYNC_SHRINK_BATCH;

	while (total_scan >= batch || total_scan >= freeable) {
		unsigned long n = ksync_min(batch, total_scan), ret;

		sc->nr_to_scan = n;
		sc->nr_scanned = n;
		ret = call_scan(node, sc);
		if (ret == KSYNC_SHRINK_STOP)
			break;
		if (KSYNC_WARN_ONCE(ret > n, "shrink_slab: scan_objects freed more than asked; clamped"))
			ret = n;
		if (sc->nr_scanned > n)
			sc->nr_scanned = n;
		freed += ret;
		total_scan -= sc->nr_scanned;
		scanned += sc->nr_scanned;
		if (!sc->nr_scanned)
			break; /* no progress: do not spin */
	}

	next = nr + (long)delta - (long)scanned;
	if (next < 0)
		next = 0;
	if ((unsigned long)next > 2 * freeable)
		next = (long)(2 * freeable);
	if (next)
		ksync_atomic_long_add(next, deferred);
	return freed;
}

static unsigned long shrink_slab_global(struct ksync_shrinker_registry *reg, int nid, int priority)
{
	struct ksync_shrinker_node *node;
	unsigned long freed = 0;
	int idx = ksync_srcu_read_lock(&reg->srcu);

	ksync_list_for_each_entry_srcu(node, &reg->shrinkers, list, true) {
		struct ksync_shrink_control sc = { 0 };
		unsigned long ret;

		yield_point(KSYNC_SHRINKER_YP_BEFORE_GET);
		if (!node_try_get(node))
			continue;
		yield_point(KSYNC_SHRINKER_YP_AFTER_GET);
		sc.nid = (node->flags & KSYNC_SHRINKER_NUMA_AWARE) ? nid : 0;
		ret = do_shrink(node, &sc, &node->nr_deferred[sc.nid], priority);
		if (ret != KSYNC_SHRINK_EMPTY)
			freed += ret;
		if (ksync_unlikely(ksync_srcu_gp_pending(&reg->srcu))) {
			/*
			 * A writer waits: leave the read section. Our reference
			 * keeps @node linked (unlinking waits for the count), so
			 * its ->next is valid once we are back.
			 */
			ksync_srcu_read_unlock(&reg->srcu, idx);
			idx = ksync_srcu_read_lock(&reg->srcu);
		}
		yield_point(KSYNC_SHRINKER_YP_BEFORE_PUT);
		node_put(node);
	}
	ksync_srcu_read_unlock(&reg->srcu, idx);
	return freed;
}


/*
 * The group walk. The summary map tells which 64-id units may hold set bits,
 * so a walk touches the units that matter instead of every unit of a map of
 * thousands of ids (each unit is a separate allocation: a cache miss).
 * Within a unit, ids are visited in order with the clear-then-recount
 * protocol on SHRINK_EMPTY (W1). A unit found empty has its summary bit
 * cleared, then is checked again (W2), against set_shrinker_bit(), which
 * sets the bit, then checks the summary bit (S2).
 */
static unsigned long shrink_slab_group(struct ksync_shrinker_group *g, int nid, int priority)
{
	struct ksync_shrinker_registry *reg = g->reg;
	struct ksync_sized_map *m, *sm;
	unsigned long freed = 0;
	unsigned int u;
	int idx;

	idx = ksync_srcu_read_lock(&reg->srcu);
	if (!group_alive(g))
		goto out; /* being destroyed */
	m = ksync_srcu_dereference(g->maps[nid], &reg->srcu);
	sm = ksync_srcu_dereference(SUMMARY(g, nid), &reg->srcu);
	for (u = ksync_sized_map_find_next_bit(sm, 0); u < ksync_sized_map_nr_max(sm);
	     u = ksync_sized_map_find_next_bit(sm, u + 1)) {
		unsigned int start = u * UNIT_BITS, end, id;
		bool any = false;

		if (start >= ksync_sized_map_nr_max(m))
			break; /* summary grown past our map: those ids are not ours to see yet */
		/*
		 * One unit: the bounded search loads this unit's word only (one
		 * load per set bit found), never the following units.
		 */
		end = ksync_min(start + UNIT_BITS, ksync_sized_map_nr_max(m));
		for (id = ksync_sized_map_find_next_bit_in(m, start, end); id < end;
		     id = ksync_sized_map_find_next_bit_in(m, id + 1, end)) {
			struct ksync_shrink_control sc = { .nid = nid, .group = g };
			struct ksync_shrinker_node *node;
			ksync_atomic_long_t *deferred;
			unsigned long ret;

			any = true;
			/*
			 * L1: the bit before the id lookup; pairs with S1 in
			 * ksync_set_shrinker_bit() (its owner set the bit after
			 * the shrinker was published in the id table). Else a
			 * weakly ordered CPU may read the table first, find no
			 * shrinker for a bit just set, and clear that bit. A
			 * compiler barrier on x86; no plain data rides on it, so
			 * TSan builds need no acquire load here.
			 */
			ksync_smp_rmb();
			node = idr_lookup(reg, id);
			yield_point(KSYNC_SHRINKER_YP_BEFORE_GET);
			if (!node || !(node->flags & KSYNC_SHRINKER_MEMCG_AWARE) || !node_try_get(node)) {
				/* Nobody to call for this id now: a later set_shrinker_bit() sets it again. */
				ksync_sized_map_clear_bit(m, id);
				goto next;
			}
			yield_point(KSYNC_SHRINKER_YP_AFTER_GET);
			if (!(node->flags & KSYNC_SHRINKER_NUMA_AWARE))
				sc.nid = 0;
			deferred = ksync_sized_map_data(m, id);
			ret = do_shrink(node, &sc, deferred, priority);
			if (ret == KSYNC_SHRINK_EMPTY) {
				ksync_sized_map_clear_bit(m, id);
				/*
				 * W1: the clear before the recount; pairs with S1 in
				 * ksync_set_shrinker_bit(). Objects added before a
				 * set_shrinker_bit() that saw the bit still set are
				 * seen by the recount below.
				 */
				ksync_smp_mb__after_atomic();
				yield_point(KSYNC_SHRINKER_YP_EMPTY_CLEARED);
				ret = do_shrink(node, &sc, deferred, priority);
				if (ret == KSYNC_SHRINK_EMPTY)
					ret = 0;
				else
					ksync_sized_map_set_bit(m, id);
			}
			freed += ret;
			yield_point(KSYNC_SHRINKER_YP_BEFORE_PUT);
			node_put(node);
next:
			if (ksync_unlikely(ksync_srcu_gp_pending(&reg->srcu))) {
				/* A writer waits: resume at the next id in a fresh section. */
				if (!group_resume_after_gap(g, &idx))
					goto out; /* its counters now belong to the parent */
				m = ksync_srcu_dereference(g->maps[nid], &reg->srcu);
				sm = ksync_srcu_dereference(SUMMARY(g, nid), &reg->srcu);
			}
			yield_point(KSYNC_SHRINKER_YP_BETWEEN_IDS);
		}
		if (!any) {
			/* W2: clear the summary bit, then look again; pairs with S2. */
			ksync_sized_map_clear_bit(sm, u);
			ksync_smp_mb__after_atomic();
			if (ksync_sized_map_find_next_bit_in(m, start, end) < end)
				ksync_sized_map_set_bit(sm, u);
		}
	}
out:
	ksync_srcu_read_unlock(&reg->srcu, idx);
	return freed;
}

unsigned long ksync_shrink_slab(struct ksync_shrinker_registry *reg, int nid,
				struct ksync_shrinker_group *group, int priority)
{
	if (KSYNC_WARN(tls_depth > 0, "ksync_shrink_slab: called from a shrinker callback (recursion refused)"))
		return 0;
	if (group)
		reg = group->reg;
	else
		reg = reg_or_default(reg);
	if (!reg)
		return 0;
	if (KSYNC_WARN(nid < 0 || nid >= reg->nr_nodes, "ksync_shrink_slab: bad nid"))
		return 0;
	if (priority < 0)
		priority = 0;
	if (priority > KSYNC_BITS_PER_LONG - 1)
		priority = KSYNC_BITS_PER_LONG - 1;
	return group ? shrink_slab_group(group, nid, priority)
		     : shrink_slab_global(reg, nid, priority);
}

int ksync_synchronize_shrinkers(struct ksync_shrinker_registry *reg)
{
	if (KSYNC_WARN(tls_depth > 0, "ksync_synchronize_shrinkers: called from a shrinker callback"))
		return -EDEADLK;
	reg = reg_or_default(reg);
	if (!reg)
		return -ENOMEM;
	pthread_mutex_lock(&reg->mutex);
	struct ksync_shrinker_node *batch = take_batch_locked(reg);
	pthread_mutex_unlock(&reg->mutex);
	queue_batch(reg, batch);
	ksync_synchronize_srcu(&reg->srcu);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Debug interface                                                          */

/* The counter of (@node, @group, @nid) under the caller's read section; NULL if none. */
static ksync_atomic_long_t *deferred_slot(struct ksync_shrinker_node *node,
					  struct ksync_shrinker_group *group, int nid)
{
	if (!group)
		return &node->nr_deferred[nid];
	if (node->id < 0)
		return NULL;
	struct ksync_sized_map *m = ksync_srcu_dereference(group->maps[nid], &node->reg->srcu);
	if ((unsigned int)node->id >= ksync_sized_map_nr_max(m))
		return NULL;
	return ksync_sized_map_data(m, (unsigned int)node->id);
}

/*
 * The debug calls and their record lookup. A caller-owned shrinker may be
 * unregistered (and registered again, perhaps on a recycled record) while a
 * debug call runs, so @s->node is read only inside a read section of the
 * registry: ksync_unregister_shrinker() clears @s->node before the record
 * is queued for freeing through call_srcu, so a record found inside a
 * section is neither freed nor recycled for another shrinker before that
 * section ends. The registry itself is found through @s->reg, which stays
 * set while @s is prepared or registered.
 */
struct debug_ref {
	struct ksync_shrinker_registry *reg;
	struct ksync_shrinker_node *node;
	int idx;
};

/*
 * Enter @s's registry's section and find @s's record; on error no section is
 * held. Refused from a shrinker callback unless @any_context.
 */
static int debug_enter(const struct ksync_shrinker *s, struct ksync_shrinker_group *group,
		       int nid, bool any_context, struct debug_ref *d)
{
	struct ksync_shrinker_node *node;
	int err = -ENOENT;

	d->reg = s ? ksync_smp_load_acquire(&s->reg) : NULL; /* PUB */
	if (!d->reg)
		return -ENOENT;
	if (!any_context && KSYNC_WARN(tls_depth > 0, "shrinker debug: called from a shrinker callback"))
		return -EDEADLK;
	d->idx = ksync_srcu_read_lock(&d->reg->srcu);
	node = ksync_smp_load_acquire(&s->node); /* PUB */
	if (!node)
		goto fail; /* not (or no longer) prepared */
	if (KSYNC_WARN(node->magic != NODE_MAGIC || node->shrinker != s || node->reg != d->reg,
		       "shrinker debug: foreign shrinker")) {
		err = -EINVAL;
		goto fail;
	}
	if (KSYNC_WARN(nid < 0 || nid >= d->reg->nr_nodes, "shrinker debug: bad nid") ||
	    KSYNC_WARN(group && group->reg != d->reg, "shrinker debug: group of another registry")) {
		err = -EINVAL;
		goto fail;
	}
	d->node = node;
	yield_point(KSYNC_SHRINKER_YP_RECORD_FOUND);
	return 0;
fail:
	ksync_srcu_read_unlock(&d->reg->srcu, d->idx);
	return err;
}

static void debug_exit(struct debug_ref *d)
{
	ksync_srcu_read_unlock(&d->reg->srcu, d->idx);
}

const char *ksync_shrinker_name(const struct ksync_shrinker *s)
{
	struct debug_ref d;
	const char *name;

	if (debug_enter(s, NULL, 0, true, &d))
		return "";
	name = d.node->name;
	debug_exit(&d);
	return name;
}

long ksync_shrinker_debug_count(struct ksync_shrinker *s, struct ksync_shrinker_group *group, int nid)
{
	struct debug_ref d;
	long ret = -ENOENT;
	int err = debug_enter(s, group, nid, false, &d);

	if (err)
		return err;
	if (node_try_get(d.node)) {
		struct ksync_shrink_control sc = { .nid = nid, .group = group };
		unsigned long c = call_count(d.node, &sc);

		ret = (c == KSYNC_SHRINK_EMPTY || c > KSYNC_SHRINKER_MAX_OBJECTS) ? 0 : (long)c;
		node_put(d.node);
	}
	debug_exit(&d);
	return ret;
}

long ksync_shrinker_debug_scan(struct ksync_shrinker *s, struct ksync_shrinker_group *group,
			       int nid, unsigned long nr_to_scan)
{
	struct debug_ref d;
	long ret = -ENOENT;
	int err = debug_enter(s, group, nid, false, &d);

	if (err)
		return err;
	if (node_try_get(d.node)) {
		struct ksync_shrink_control sc = { .nid = nid, .group = group,
						   .nr_to_scan = nr_to_scan, .nr_scanned = nr_to_scan };
		unsigned long r = call_scan(d.node, &sc);

		ret = (r == KSYNC_SHRINK_STOP) ? 0 : (long)ksync_min(r, nr_to_scan);
		node_put(d.node);
	}
	debug_exit(&d);
	return ret;
}

int ksync_shrinker_debug_show(struct ksync_shrinker *s, FILE *out)
{
	struct ksync_shrinker_group *g;
	struct ksync_shrinker_node *node;
	struct ksync_shrinker_registry *reg;
	struct debug_ref d;
	int lines = 0, err = debug_enter(s, NULL, 0, false, &d);

	if (err)
		return err;
	node = d.node;
	reg = d.reg;
	if (!node_try_get(node)) {
		debug_exit(&d);
		return -ENOENT;
	}
	fprintf(out, "%s %d\n", node->name, node->id);
	if (!(node->flags & KSYNC_SHRINKER_MEMCG_AWARE)) {
		fprintf(out, "global");
		for (int nid = 0; nid < reg->nr_nodes; nid++) {
			struct ksync_shrink_control sc = { .nid = nid };
			unsigned long c = call_count(node, &sc);
			fprintf(out, " %lu", c == KSYNC_SHRINK_EMPTY ? 0UL : c);
		}
		fprintf(out, "\n");
		lines++;
	} else {
		ksync_list_for_each_entry_srcu(g, &reg->groups, list, true) {
			unsigned long counts[KSYNC_SHRINKER_MAX_NODES];
			bool any = false;

			for (int nid = 0; nid < reg->nr_nodes; nid++) {
				struct ksync_shrink_control sc = { .nid = nid, .group = g };
				unsigned long c = call_count(node, &sc);
				counts[nid] = (c == KSYNC_SHRINK_EMPTY || c > KSYNC_SHRINKER_MAX_OBJECTS) ? 0 : c;
				any |= counts[nid] != 0;
			}
			if (!any)
				continue;
			fprintf(out, "%d", g->id);
			for (int nid = 0; nid < reg->nr_nodes; nid++)
				fprintf(out, " %lu", counts[nid]);
			fprintf(out, "\n");
			lines++;
		}
	}
	node_put(node);
	debug_exit(&d);
	return lines;
}

long ksync_shrinker_deferred(struct ksync_shrinker *s, struct ksync_shrinker_group *group, int nid)
{
	struct debug_ref d;
	ksync_atomic_long_t *c;
	long ret = -ENOENT;
	int err = debug_enter(s, group, nid, false, &d);

	if (err)
		return err;
	c = deferred_slot(d.node, group, nid);
	if (c)
		ret = ksync_atomic_long_read(c);
	debug_exit(&d);
	return ret;
}

int ksync_shrinker_add_deferred(struct ksync_shrinker *s, struct ksync_shrinker_group *group,
				int nid, long nr)
{
	struct debug_ref d;
	ksync_atomic_long_t *c;
	int err = debug_enter(s, group, nid, false, &d);

	if (err)
		return err;
	c = deferred_slot(d.node, group, nid);
	if (c)
		ksync_atomic_long_add(nr, c);
	debug_exit(&d);
	return c ? 0 : -ENOENT;
}

/* The sum of @g's counters (under reg->mutex). */
static long group_deferred_locked(struct ksync_shrinker_group *g)
{
	long sum = 0;

	for (int nid = 0; nid < g->reg->nr_nodes; nid++) {
		struct ksync_sized_map *m =
			(struct ksync_sized_map *)ksync_rcu_access_pointer(g->maps[nid]);
		for (unsigned int id = 0; id < ksync_sized_map_nr_max(m); id++)
			sum += ksync_atomic_long_read(
				(ksync_atomic_long_t *)ksync_sized_map_data(m, id));
	}
	return sum;
}

void ksync_shrinker_deferred_total(struct ksync_shrinker_registry *reg,
				   struct ksync_shrinker_deferred_total *out)
{
	struct ksync_shrinker_group *g;
	struct ksync_shrinker_node *node;

	memset(out, 0, sizeof(*out));
	reg = reg_or_default(reg);
	if (!reg)
		return;
	pthread_mutex_lock(&reg->mutex);
	ksync_list_for_each_entry(g, &reg->groups, list)
		out->in_groups += group_deferred_locked(g);
	/* Groups being destroyed: their work is not reparented yet. */
	ksync_list_for_each_entry(g, &reg->dying_groups, dying)
		out->in_groups += group_deferred_locked(g);
	ksync_list_for_each_entry(node, &reg->shrinkers, list)
		for (int nid = 0; nid < reg->nr_nodes; nid++)
			out->in_shrinkers += ksync_atomic_long_read(&node->nr_deferred[nid]);
	out->orphaned = ksync_atomic_long_read(&reg->orphaned);
	out->retired = ksync_atomic_long_read(&reg->retired);
	pthread_mutex_unlock(&reg->mutex);
}

struct ksync_srcu_struct *ksync_shrinker_registry_srcu(struct ksync_shrinker_registry *reg)
{
	reg = reg_or_default(reg);
	return reg ? &reg->srcu : NULL;
}
