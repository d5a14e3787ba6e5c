# bits.h, bitops.h, find.h, bitmap.h conformance
ksync_conformance_test(bitops_kernel_test bitops_kernel_test.c)
ksync_conformance_test(find_kernel_test find_kernel_test.c)
ksync_conformance_test(bitmap_kernel_test bitmap_kernel_test.c)
