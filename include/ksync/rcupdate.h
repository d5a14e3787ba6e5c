/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/rcupdate.h - RCU-protected pointers and callback heads
 *
 * The pointer helpers every RCU flavour shares (ksync's SRCU, the RCU lists):
 * publish with ksync_rcu_assign_pointer() (release), read with the flavour's
 * dereference (ksync_srcu_dereference() for SRCU), or with
 * ksync_rcu_dereference_raw() where the caller proves protection itself.
 *
 * KSYNC_RCU marks a pointer as RCU-protected, like the kernel's __rcu. It is
 * an empty annotation here (no sparse), kept so that ported code reads the same.
 *
 * Ordering. ksync_rcu_assign_pointer() is a store-release: everything the
 * updater wrote to the new object before publishing it is visible to a reader
 * that loads the new pointer through a dereference helper. The dereference
 * helpers are address-dependency ordered loads (a plain KSYNC_READ_ONCE: every
 * architecture ksync supports orders dependent loads); in KSYNC_ATOMIC_BUILTINS
 * builds they are acquire loads so that ThreadSanitizer sees the edge.
 */
#ifndef KSYNC_RCUPDATE_H
#define KSYNC_RCUPDATE_H

#include <ksync/atomic.h>
#include <ksync/bug.h>
#include <ksync/compiler.h>

KSYNC_EXTERN_C_BEGIN

/** KSYNC_RCU - annotation of an RCU-protected pointer (the kernel's __rcu); expands to nothing. */
#define KSYNC_RCU

/**
 * struct ksync_rcu_head - link and callback of a deferred free (call_srcu()).
 * @next: queue link, owned by the RCU flavour while the head is queued
 * @func: the callback, called once with the head after a grace period
 *
 * Embed it in the object to be freed and recover the object in @func with
 * ksync_container_of(). The head must stay valid until @func runs.
 */
struct ksync_rcu_head {
	struct ksync_rcu_head *next;
	void (*func)(struct ksync_rcu_head *head);
};

/**
 * ksync_rcu_dereference_raw() - load an RCU-protected pointer, no checking.
 * @p: the pointer (an lvalue)
 *
 * Return: the value of @p, ordered so that accesses through it see what the
 * publisher wrote before ksync_rcu_assign_pointer(). The caller proves that the
 * object stays alive (a read section, the update-side lock, ...).
 */
#ifdef KSYNC_ATOMIC_BUILTINS
#define ksync_rcu_dereference_raw(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#else
#define ksync_rcu_dereference_raw(p) KSYNC_READ_ONCE(p)
#endif

/**
 * ksync_rcu_access_pointer() - the value of an RCU-protected pointer, for
 * comparison (NULL tests) only, never to dereference.
 * @p: the pointer (an lvalue)
 */
#define ksync_rcu_access_pointer(p) KSYNC_READ_ONCE(p)

/**
 * ksync_rcu_assign_pointer() - publish @v in the RCU-protected pointer @p.
 * @p: the pointer (an lvalue)
 * @v: the new value
 *
 * A store-release: initialisation of *@v before this call is visible to any
 * reader that gets @v from a dereference helper. Pairs with
 * ksync_rcu_dereference_raw() / ksync_srcu_dereference().
 */
#define ksync_rcu_assign_pointer(p, v) ksync_smp_store_release(&(p), (v))

/**
 * KSYNC_RCU_INIT_POINTER() - set an RCU-protected pointer without ordering.
 * @p: the pointer (an lvalue)
 * @v: NULL, or an object already published to readers
 *
 * Use only when no reader can see uninitialised data through @v (NULL, or a
 * pointer readers could already reach).
 */
#define KSYNC_RCU_INIT_POINTER(p, v) KSYNC_WRITE_ONCE(p, v)

/**
 * ksync_rcu_replace_pointer() - publish @v in @p and return the old value.
 * @p: the pointer (an lvalue)
 * @v: the new value
 * @cond: the caller's proof that it may update @p (its lock is held); checked
 *        with KSYNC_DEBUG_WARN_ON_ONCE in KSYNC_DEBUG builds
 *
 * Return: the previous value of @p, which the caller retires after a grace
 * period. Updaters are serialised by the caller, so this is a load and a
 * store-release, not an exchange.
 */
#define ksync_rcu_replace_pointer(p, v, cond)                                  \
	__extension__({                                                        \
		(void)KSYNC_DEBUG_WARN_ON_ONCE(!(cond));                          \
		__typeof__(p) ksync__rp_old = KSYNC_READ_ONCE(p);              \
		ksync_rcu_assign_pointer(p, v);                                \
		ksync__rp_old;                                                 \
	})

KSYNC_EXTERN_C_END

#endif /* KSYNC_RCUPDATE_H */
