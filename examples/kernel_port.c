/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kernel_port: kernel code, unchanged but for the include, running in
 * userspace. A reference-counted object lives on a list; two threads take
 * and drop references with atomic_long_inc_not_zero()/atomic_long_dec_and_test(),
 * exactly as kernel code does, and the last put frees it.
 *
 * Build alone: cc -std=c11 kernel_port.c -Iinclude $(pkg-config --cflags --libs ck) -lpthread
 */
#include <ksync/kernel.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct cache_obj {
	atomic_long_t refs;
	long hits;
	struct list_head node;
};

static LIST_HEAD(cache);
static atomic_long_t freed = ATOMIC_LONG_INIT(0);

static void obj_put(struct cache_obj *obj)
{
	if (atomic_long_dec_and_test(&obj->refs)) {
		WARN_ON_ONCE(obj->hits < 0);
		atomic_long_inc(&freed);
		free(obj);
	}
}

static void *user(void *arg)
{
	struct cache_obj *obj = arg;

	for (int i = 0; i < 100000; i++) {
		if (!atomic_long_inc_not_zero(&obj->refs))
			break;
		WRITE_ONCE(obj->hits, READ_ONCE(obj->hits) + 0); /* a read-mostly use */
		obj_put(obj);
	}
	obj_put(obj); /* the reference this thread was given */
	return NULL;
}

int main(void)
{
	struct cache_obj *obj = calloc(1, sizeof(*obj));
	pthread_t t[2];

	if (!obj)
		return 1;
	atomic_long_set(&obj->refs, 3); /* the list's, and one per thread */
	list_add_tail(&obj->node, &cache);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, user, obj);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);

	struct cache_obj *pos, *tmp;
	list_for_each_entry_safe(pos, tmp, &cache, node) {
		list_del(&pos->node);
		obj_put(pos); /* the list's reference: the last one */
	}
	printf("objects freed: %ld (expected 1), list empty: %s\n", atomic_long_read(&freed),
	       list_empty(&cache) ? "yes" : "no");
	return atomic_long_read(&freed) == 1 && list_empty(&cache) ? 0 : 1;
}
