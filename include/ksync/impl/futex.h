/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync/impl/futex.h - the one place where ksync calls futex(2): SRCU's
 * sleeping grace period (impl/srcu_read.h, impl/srcu_gp.h) and lib/'s futex
 * words and completions (lib/common/wait.h). Private: included only where a
 * wait or a wake is compiled, so that <linux/futex.h> and the syscall()
 * prototype reach no other includer.
 */
#ifndef KSYNC_IMPL_FUTEX_H
#define KSYNC_IMPL_FUTEX_H

#include <ksync/compiler.h>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

KSYNC_EXTERN_C_BEGIN

#if !defined(__cplusplus) && !defined(__USE_MISC)
/* Strict C11 hides syscall(); it is in every glibc and musl. */
extern long syscall(long sysno, ...);
#endif

/*
 * ksync__futex_wait() - sleep while *@word holds @val, at most @timeout
 * (NULL: no limit). Returns at once if *@word differs; may return early
 * (a signal, a spurious wake): callers check their condition in a loop.
 * Process-private futex. Return: 0, or -1 with errno set (EAGAIN: the word
 * differed; ETIMEDOUT; EINTR).
 */
static inline KSYNC_UNUSED int ksync__futex_wait(int *word, int val, const struct timespec *timeout)
{
	return (int)syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, timeout, NULL, 0);
}

/*
 * ksync__futex_wake() - wake at most @nr threads sleeping on @word.
 * Return: how many were woken, or -1 with errno set.
 */
static inline KSYNC_UNUSED int ksync__futex_wake(int *word, int nr)
{
	return (int)syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, nr, NULL, NULL, 0);
}

KSYNC_EXTERN_C_END

#endif /* KSYNC_IMPL_FUTEX_H */
