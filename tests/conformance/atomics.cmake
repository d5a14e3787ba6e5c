# atomic.h and bug.h conformance
ksync_conformance_test(atomic_kernel_test atomic_kernel_test.c)
# A port keeps its #include <linux/...> lines with -I<include>/ksync.
ktest_add_test(include_path_test SOURCES include_path_test.c LABELS quick TIMEOUT 60)
target_include_directories(include_path_test PRIVATE ${PROJECT_SOURCE_DIR}/include/ksync)
