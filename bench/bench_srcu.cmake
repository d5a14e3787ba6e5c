# SPDX-License-Identifier: BSD-2-Clause
# bench_srcu: ksync SRCU beside liburcu (urcu-memb, urcu-qsbr, urcu-bp,
# cds_lfht), ck_epoch, ck_rwlock, ck_brlock and pthread_rwlock (Google
# Benchmark). Left out without liburcu-memb (cmake/KsyncOptional.cmake says
# so); the other two flavours ship in the same package (liburcu-dev).
if(KSYNC_HAVE_URCU)
  foreach(_flav qsbr bp cds)
    string(TOUPPER ${_flav} _FLAV)
    if(NOT TARGET PkgConfig::URCU_${_FLAV})
      pkg_check_modules(URCU_${_FLAV} QUIET IMPORTED_TARGET liburcu-${_flav})
    endif()
  endforeach()
  if(TARGET PkgConfig::URCU_QSBR AND TARGET PkgConfig::URCU_BP AND TARGET PkgConfig::URCU_CDS)
    ksync_add_executable(bench_srcu
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/bench_srcu.cc
              ${CMAKE_CURRENT_LIST_DIR}/fx_common.c
              ${CMAKE_CURRENT_LIST_DIR}/fx_ksync.c
              ${CMAKE_CURRENT_LIST_DIR}/fx_ksync_fast.c
              ${CMAKE_CURRENT_LIST_DIR}/fx_urcu_memb.c
              ${CMAKE_CURRENT_LIST_DIR}/fx_urcu_qsbr.c
              ${CMAKE_CURRENT_LIST_DIR}/fx_urcu_bp.c
              ${CMAKE_CURRENT_LIST_DIR}/fx_ck.c
              ${CMAKE_CURRENT_LIST_DIR}/fx_pthread.c
              ${CMAKE_CURRENT_LIST_DIR}/fx_hash.c
      LIBS benchmark::benchmark PkgConfig::URCU PkgConfig::URCU_QSBR PkgConfig::URCU_BP
           PkgConfig::URCU_CDS)
    # fx_hash.c draws its keys with the tests' generator (tests/common/rng.h).
    target_include_directories(bench_srcu PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
    if(KSYNC_BUILD_TESTS)
      ksync_add_command_test(srcu_bench_smoke
        COMMAND bench_srcu --bench_max_threads=2 ${KSYNC_BENCH_SMOKE_ARGS} TIMEOUT 120)
    endif()
  else()
    ksync_skip("bench_srcu" "liburcu-qsbr, liburcu-bp or liburcu-cds not found by pkg-config")
  endif()
endif()
