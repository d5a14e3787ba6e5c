# SPDX-License-Identifier: BSD-2-Clause
# SRCU: ksync beside liburcu urcu-memb, pthread_rwlock and ck_epoch.
# Left out without liburcu-memb (cmake/KsyncOptional.cmake says so).
if(KSYNC_HAVE_URCU)
  ksync_add_executable(bench_srcu SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_srcu.cc
                       ${CMAKE_CURRENT_LIST_DIR}/bench_srcu_ck.c
                       LIBS benchmark::benchmark PkgConfig::URCU)
endif()
