/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/shrinker/debug.c - the debug interface (the kernel's debugfs count and
 * scan files) and the nr_deferred ledger (<ksync/shrinker_debug.h>).
 *
 * A caller-owned shrinker may be unregistered (and registered again, perhaps
 * on a recycled record) while a debug call runs, so @s->record is read only
 * inside a read section of the registry: ksync_unregister_shrinker() clears
 * @s->record before the record is queued for freeing through call_srcu or
 * reused at once (warm reuse, only when ksync_try_synchronize_srcu() finds no
 * other thread with a slot, so no such section can be open), so a record
 * found inside a section is neither freed nor recycled for another shrinker
 * before that section ends. The registry itself is found through
 * @s->reg, which stays set while @s is prepared or registered (PUB).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <ksync/shrinker_debug.h>

#include <errno.h>
#include <string.h>

struct debug_ref {
	struct ksync_shrinker_registry *reg;
	struct ksync_shrinker_record *rec;
	int idx;
};

/*
 * Enter @s's registry's section and find @s's record; on error no section is
 * held. Refused from a shrinker callback unless @any_context.
 */
static int debug_enter(struct ksync_site at, const struct ksync_shrinker *s, struct ksync_memgroup *group, int nid,
		       bool any_context, struct debug_ref *d)
{
	struct ksync_shrinker_record *rec;
	int err = -ENOENT;

	d->reg = s ? ksync_smp_load_acquire(&s->reg) : NULL; /* PUB */
	if (!d->reg)
		return -ENOENT;
	if (!any_context && MISUSE(at, in_callback(), "shrinker debug: called from a shrinker callback"))
		return -EDEADLK;
	d->idx = ksync_srcu_read_lock(&d->reg->srcu);
	rec = ksync_smp_load_acquire(&s->record); /* PUB */
	if (!rec)
		goto fail; /* not (or no longer) prepared */
	if (MISUSE(at, rec->magic != RECORD_MAGIC || rec->shrinker != s || rec->reg != d->reg,
		       "shrinker debug: foreign shrinker")) {
		err = -EINVAL;
		goto fail;
	}
	if (MISUSE(at, nid < 0 || nid >= d->reg->nr_nodes, "shrinker debug: bad nid") ||
	    MISUSE(at, group && (!group_info(group) || group_info(group)->reg != d->reg),
		       "shrinker debug: group of another registry")) {
		err = -EINVAL;
		goto fail;
	}
	d->rec = rec;
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

const char *ksync__shrinker_name(KSYNC_SITE_ARGS, const struct ksync_shrinker *s)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	struct debug_ref d;
	const char *name;

	if (debug_enter(at, s, NULL, 0, true, &d))
		return "";
	name = ksync__shr_name_get(d.rec);
	debug_exit(&d);
	return name;
}

/* A count as the debug interface reports it. */
static long count_value(unsigned long c)
{
	return (c == KSYNC_SHRINK_EMPTY || c > KSYNC_SHRINKER_MAX_OBJECTS) ? 0 : (long)c;
}

long ksync__shrinker_debug_count(KSYNC_SITE_ARGS, struct ksync_shrinker *s, struct ksync_memgroup *group, int nid)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	struct debug_ref d;
	long ret = -ENOENT;
	int err = debug_enter(at, s, group, nid, false, &d);

	if (err)
		return err;
	/* A group whose offline has begun here is walked no more (D1): nor is it here. */
	if (group && !group_alive(group_info(group))) {
		debug_exit(&d);
		return -ENOENT;
	}
	if (record_try_get(d.rec)) {
		struct ksync_shrink_control sc = { .nid = nid, .group = group };

		ret = count_value(shrinker_call_count(d.rec, &sc));
		record_put(d.rec);
	}
	debug_exit(&d);
	return ret;
}

long ksync__shrinker_debug_scan(KSYNC_SITE_ARGS, struct ksync_shrinker *s, struct ksync_memgroup *group,
			       int nid, unsigned long nr_to_scan)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	struct debug_ref d;
	long ret = -ENOENT;
	int err = debug_enter(at, s, group, nid, false, &d);

	if (err)
		return err;
	if (group && !group_alive(group_info(group))) { /* as in ksync__shrinker_debug_count() */
		debug_exit(&d);
		return -ENOENT;
	}
	if (record_try_get(d.rec)) {
		struct ksync_shrink_control sc = { .nid = nid, .group = group,
						   .nr_to_scan = nr_to_scan, .nr_scanned = nr_to_scan };
		unsigned long r = shrinker_call_scan(d.rec, &sc);

		ret = (r == KSYNC_SHRINK_STOP) ? 0 : (long)ksync_min(r, nr_to_scan);
		record_put(d.rec);
	}
	debug_exit(&d);
	return ret;
}

int ksync__shrinker_debug_show(KSYNC_SITE_ARGS, struct ksync_shrinker *s, FILE *out)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	struct shrinker_group_info *info;
	struct ksync_shrinker_record *rec;
	struct ksync_shrinker_registry *reg;
	struct debug_ref d;
	int lines = 0, err = debug_enter(at, s, NULL, 0, false, &d);

	if (err)
		return err;
	rec = d.rec;
	reg = d.reg;
	if (!record_try_get(rec)) {
		debug_exit(&d);
		return -ENOENT;
	}
	fprintf(out, "%s %d\n", ksync__shr_name_get(rec), rec->id);
	if (!(rec->flags & KSYNC_SHRINKER_MEMCG_AWARE)) {
		fprintf(out, "global");
		for (int nid = 0; nid < reg->nr_nodes; nid++) {
			struct ksync_shrink_control sc = { .nid = nid };
			unsigned long c = shrinker_call_count(rec, &sc);
			fprintf(out, " %lu", c == KSYNC_SHRINK_EMPTY ? 0UL : c);
		}
		fprintf(out, "\n");
		lines++;
	} else {
		ksync_list_for_each_entry_srcu(info, &reg->infos, list, true) {
			unsigned long counts[KSYNC_SHRINKER_MAX_NODES];
			bool any = false;

			for (int nid = 0; nid < reg->nr_nodes; nid++) {
				struct ksync_shrink_control sc = { .nid = nid, .group = info->group };
				counts[nid] = (unsigned long)count_value(shrinker_call_count(rec, &sc));
				any |= counts[nid] != 0;
			}
			if (!any)
				continue;
			fprintf(out, "%d", ksync_memgroup_id(info->group));
			for (int nid = 0; nid < reg->nr_nodes; nid++)
				fprintf(out, " %lu", counts[nid]);
			fprintf(out, "\n");
			lines++;
		}
	}
	record_put(rec);
	debug_exit(&d);
	return lines;
}

/* The counter of (@rec, @group, @nid) under the caller's read section; NULL if none. */
static ksync_atomic_long_t *deferred_slot(struct ksync_shrinker_record *rec,
					  struct ksync_memgroup *group, int nid)
{
	struct shrinker_group_info *info;
	struct ksync_sized_map *m;

	if (!group)
		return &rec->nr_deferred[nid];
	info = group_info(group);
	if (rec->id < 0 || !group_alive(info))
		return NULL;
	m = ksync_srcu_dereference(info->node[nid].bits, &rec->reg->srcu);
	if ((unsigned int)rec->id >= ksync_sized_map_nr_max(m))
		return NULL;
	return ksync_sized_map_data(m, (unsigned int)rec->id);
}

long ksync__shrinker_deferred(KSYNC_SITE_ARGS, struct ksync_shrinker *s, struct ksync_memgroup *group, int nid)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	struct debug_ref d;
	ksync_atomic_long_t *c;
	long ret = -ENOENT;
	int err = debug_enter(at, s, group, nid, false, &d);

	if (err)
		return err;
	if (!group) { /* see ksync__shrinker_add_deferred() */
		reg_lock(d.reg);
		if (!d.rec->deferred_retired)
			ret = ksync_atomic_long_read(&d.rec->nr_deferred[nid]);
		reg_unlock(d.reg);
		debug_exit(&d);
		return ret;
	}
	c = deferred_slot(d.rec, group, nid);
	if (c)
		ret = ksync_atomic_long_read(c);
	debug_exit(&d);
	return ret;
}

int ksync__shrinker_add_deferred(KSYNC_SITE_ARGS, struct ksync_shrinker *s, struct ksync_memgroup *group,
				int nid, long nr)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	struct debug_ref d;
	ksync_atomic_long_t *c;
	int err = debug_enter(at, s, group, nid, false, &d);

	if (err)
		return err;
	if (!group) {
		/*
		 * The record's global counter, added to under the writers' mutex
		 * and only while it is not retired: an unregister (or the free
		 * of a shrinker never registered) moves it to reg->retired under
		 * that mutex. Without it, an unregister that ran between the
		 * lookup and the add retired the counter first, and the work
		 * landed in no counter of the ledger (found by fuzz_registry_mt).
		 * A group's counters are not retired with the shrinker.
		 */
		int ret = -ENOENT;

		reg_lock(d.reg);
		if (!d.rec->deferred_retired) {
			ksync_atomic_long_add(nr, &d.rec->nr_deferred[nid]);
			ret = 0;
		}
		reg_unlock(d.reg);
		debug_exit(&d);
		return ret;
	}
	c = deferred_slot(d.rec, group, nid);
	if (c)
		ksync_atomic_long_add(nr, c);
	debug_exit(&d);
	return c ? 0 : -ENOENT;
}

/* The sum of @info's counters (under reg->mutex). */
static long group_deferred_locked(struct shrinker_group_info *info)
{
	long sum = 0;

	for (int nid = 0; nid < info->reg->nr_nodes; nid++) {
		struct ksync_sized_map *m =
			(struct ksync_sized_map *)ksync_rcu_access_pointer(info->node[nid].bits);
		for (unsigned int id = 0; id < ksync_sized_map_nr_max(m); id++)
			sum += ksync_atomic_long_read(
				(ksync_atomic_long_t *)ksync_sized_map_data(m, id));
	}
	return sum;
}

void ksync_shrinker_deferred_total(struct ksync_shrinker_registry *reg,
				   struct ksync_shrinker_deferred_total *out)
{
	struct shrinker_group_info *info;
	struct ksync_shrinker_record *rec;

	memset(out, 0, sizeof(*out));
	reg = ksync__shr_reg_or_default(reg);
	if (!reg)
		return;
	reg_lock(reg);
	ksync_list_for_each_entry(info, &reg->infos, list)
		out->in_groups += group_deferred_locked(info);
	/* Groups going offline: their work is not reparented yet. */
	ksync_list_for_each_entry(info, &reg->dying_infos, dying)
		out->in_groups += group_deferred_locked(info);
	ksync_list_for_each_entry(rec, &reg->shrinkers, list)
		for (int nid = 0; nid < reg->nr_nodes; nid++)
			out->in_shrinkers += ksync_atomic_long_read(&rec->nr_deferred[nid]);
	out->orphaned = ksync_atomic_long_read(&reg->orphaned);
	out->retired = ksync_atomic_long_read(&reg->retired);
	reg_unlock(reg);
}
