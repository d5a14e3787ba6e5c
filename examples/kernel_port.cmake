# SPDX-License-Identifier: BSD-2-Clause
# kernel_port - kernel code, unchanged but for the include, on <ksync/kernel.h>.
ksync_add_executable(kernel_port SOURCES kernel_port.c)
if(KSYNC_BUILD_TESTS)
  add_test(NAME example_kernel_port COMMAND kernel_port)
  set_tests_properties(example_kernel_port PROPERTIES LABELS "quick;concurrent")
endif()
