/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * srcu_config_reload - the classic SRCU pattern: many readers use the current
 * configuration without locks (and may sleep while holding it); a writer
 * publishes a new one and frees the old one after a grace period, either
 * waiting (synchronize_srcu) or not (call_srcu). Written with the kernel's
 * spellings through <ksync/kernel.h>.
 */
#include <ksync/kernel.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct config {
	int version;
	int timeout_ms;
	struct rcu_head rcu;
};

DEFINE_STATIC_SRCU(config_srcu);
static struct config *__rcu current_config;
static int stop;

static void *reader(void *arg)
{
	long checks = 0, bad = 0;
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int idx = srcu_read_lock(&config_srcu);
		struct config *c = srcu_dereference(current_config, &config_srcu);
		if (c->timeout_ms != c->version * 10) /* never torn, never freed */
			bad++;
		if ((checks & 1023) == 0) { /* readers may sleep inside */
			struct timespec ts = { 0, 100000 };
			nanosleep(&ts, NULL);
		}
		srcu_read_unlock(&config_srcu, idx);
		checks++;
	}
	printf("reader: %ld checks, %ld inconsistent\n", checks, bad);
	return (void *)bad;
}

static void free_config(struct rcu_head *head)
{
	free(container_of(head, struct config, rcu));
}

static void publish(int version, int wait)
{
	struct config *c = malloc(sizeof(*c));
	c->version = version;
	c->timeout_ms = version * 10;
	struct config *old = rcu_replace_pointer(current_config, c, 1);
	if (wait) {
		synchronize_srcu(&config_srcu); /* every reader of old is done */
		free(old);
	} else {
		call_srcu(&config_srcu, &old->rcu, free_config);
	}
}

int main(void)
{
	pthread_t th[3];
	struct config *first = malloc(sizeof(*first));
	first->version = 0;
	first->timeout_ms = 0;
	rcu_assign_pointer(current_config, first);
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, reader, NULL);
	for (int v = 1; v <= 2000; v++)
		publish(v, v % 2);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	long bad = 0;
	for (int i = 0; i < 3; i++) {
		void *r;
		pthread_join(th[i], &r);
		bad += (long)r;
	}
	srcu_barrier(&config_srcu); /* all call_srcu callbacks have run */
	free(rcu_dereference_raw(current_config));
	printf("2000 configurations published, %s\n", bad ? "FAILED" : "ok");
	return bad != 0;
}
