/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fx_ksync_fast.h - the read loops of fx_ksync_fast.c (ksync SRCU's fast
 * form, and a domain past the direct words) for bench_srcu's read rows.
 */
#ifndef KSYNC_BENCH_FX_KSYNC_FAST_H
#define KSYNC_BENCH_FX_KSYNC_FAST_H
#ifdef __cplusplus
extern "C" {
#endif
/* n empty pairs of the fast form on a direct domain */
void bench_ksync_fast_reads(unsigned long n);
/* n fast-form sections that dereference a published node; returns the sum */
long bench_ksync_fast_deref_reads(unsigned long n);
/* n empty pairs on a domain past the direct words: classic, fast form */
void bench_ksync_far_reads(unsigned long n);
void bench_ksync_far_fast_reads(unsigned long n);
#ifdef __cplusplus
}
#endif
#endif /* KSYNC_BENCH_FX_KSYNC_FAST_H */
