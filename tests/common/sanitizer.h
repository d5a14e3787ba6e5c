/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sanitizer.h - which sanitizer a test is built with, for the cases that
 * cannot run under one: ThreadSanitizer cannot start threads in the child
 * of a multi-threaded fork, and ASan's shadow memory would eat a cgroup's
 * memory limit.
 *
 *   KT_TSAN       1 under ThreadSanitizer, else 0
 *   KT_SANITIZED  1 under AddressSanitizer or ThreadSanitizer, else 0
 *
 * gcc says so with __SANITIZE_*__, clang with __has_feature().
 */
#ifndef KT_SANITIZER_H
#define KT_SANITIZER_H

#if defined(__SANITIZE_THREAD__)
#define KT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KT_TSAN 1
#endif
#endif
#ifndef KT_TSAN
#define KT_TSAN 0
#endif

#if defined(__SANITIZE_ADDRESS__)
#define KT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KT_SANITIZED 1
#endif
#endif
#ifndef KT_SANITIZED
#define KT_SANITIZED KT_TSAN
#endif

#endif /* KT_SANITIZER_H */
