# SPDX-License-Identifier: BSD-2-Clause
# Smoke check of group_churn (cmake -P; run by the group_churn_example test,
# examples/group_churn.cmake): a short run (still at least 2,000
# create/offline cycles), then the JSON must hold exactly the documented keys,
# and the targets must be met: no object lost, statistics conserved, the
# dying groups gone at the end.
# Variables: CHURN (the binary), OUT (the JSON file to write).
execute_process(
  COMMAND ${CHURN} --seconds 0.5 --groups 32 --threads 2 --json ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "group_churn exited with ${rc}: ${err}")
endif()
file(READ ${OUT} json)
set(keys groups_created groups_destroyed dying_peak dying_end objects_charged objects_freed
    objects_lost stats_conserved rss_start_kb rss_end_kb reclaim_walks_per_s)
string(JSON n LENGTH "${json}")
list(LENGTH keys nkeys)
if(NOT n EQUAL nkeys)
  message(FATAL_ERROR "${n} keys, expected ${nkeys}")
endif()
foreach(k IN LISTS keys)
  string(JSON v ERROR_VARIABLE e GET "${json}" ${k})
  if(e)
    message(FATAL_ERROR "${k} missing: ${e}")
  endif()
  set(${k} ${v})
endforeach()
if(NOT objects_lost EQUAL 0)
  message(FATAL_ERROR "objects_lost = ${objects_lost}")
endif()
if(NOT stats_conserved STREQUAL "ON" AND NOT stats_conserved STREQUAL "true")
  message(FATAL_ERROR "stats_conserved = ${stats_conserved}")
endif()
if(groups_destroyed LESS 2000)
  message(FATAL_ERROR "only ${groups_destroyed} create/offline cycles")
endif()
if(dying_end GREATER 2)
  message(FATAL_ERROR "dying_end = ${dying_end}: dead groups pinned")
endif()
if(NOT objects_charged EQUAL objects_freed)
  message(FATAL_ERROR "charged ${objects_charged} != freed ${objects_freed}")
endif()
