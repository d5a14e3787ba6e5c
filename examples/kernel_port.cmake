# SPDX-License-Identifier: BSD-2-Clause
# kernel_port - kernel code, unchanged but for the include, on <ksync/kernel.h>.
ksync_add_executable(kernel_port SOURCES kernel_port.c)
if(KSYNC_BUILD_TESTS)
  add_test(NAME kernel_port_example COMMAND kernel_port)
  set_tests_properties(kernel_port_example PROPERTIES LABELS "quick;concurrent")
endif()
