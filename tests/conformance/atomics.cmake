# atomic.h and bug.h conformance
ksync_conformance_test(atomic_kernel_test atomic_kernel_test.c)
