# SPDX-License-Identifier: BSD-2-Clause
# The test names and labels of tests/README.md, checked on the build's own
# list of tests (ctest --show-only=json-v1), run by the test_names_hygiene test:
#  - every test has exactly one kind label (one of KINDS);
#  - every test outside fuzz/ is named <subject>_<kind>[_<variant>], its kind
#    being its kind label: lower-case words joined by '_', the variant may
#    hold capitals (atomic_constants_unit_ck_O0);
#  - no test has a label that is neither a kind nor a tier (TIERS) nor one of
#    EXTRA (a label scripts/run-tests.sh does not know is a typo).
# Variables: CTEST (ctest), BUILD_DIR, and KINDS, TIERS, EXTRA, each a
# comma-separated list.
cmake_minimum_required(VERSION 3.20)
foreach(_v CTEST BUILD_DIR KINDS TIERS EXTRA)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "test_names.cmake: ${_v} not set")
  endif()
endforeach()
string(REPLACE "," ";" kinds "${KINDS}")
string(REPLACE "," ";" tiers "${TIERS}")
string(REPLACE "," ";" extra "${EXTRA}")

execute_process(COMMAND ${CTEST} --test-dir ${BUILD_DIR} --show-only=json-v1
                RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ctest --show-only=json-v1 failed (${rc}): ${err}")
endif()

set(bad 0)
string(JSON ntests LENGTH "${json}" tests)
math(EXPR last "${ntests} - 1")
foreach(i RANGE ${last})
  string(JSON name GET "${json}" tests ${i} name)
  set(labels "")
  string(JSON nprops ERROR_VARIABLE e LENGTH "${json}" tests ${i} properties)
  if(NOT e AND nprops GREATER 0)
    math(EXPR plast "${nprops} - 1")
    foreach(j RANGE ${plast})
      string(JSON pname GET "${json}" tests ${i} properties ${j} name)
      if(pname STREQUAL "LABELS")
        string(JSON nl LENGTH "${json}" tests ${i} properties ${j} value)
        math(EXPR llast "${nl} - 1")
        foreach(k RANGE ${llast})
          string(JSON l GET "${json}" tests ${i} properties ${j} value ${k})
          list(APPEND labels ${l})
        endforeach()
      endif()
    endforeach()
  endif()

  set(kind "")
  set(nkinds 0)
  foreach(l IN LISTS labels)
    if(l IN_LIST kinds)
      set(kind ${l})
      math(EXPR nkinds "${nkinds} + 1")
    elseif(NOT l IN_LIST tiers AND NOT l IN_LIST extra)
      message("FAIL: ${name}: label '${l}' is no kind (${KINDS}), tier (${TIERS}) or other known label (${EXTRA})")
      math(EXPR bad "${bad} + 1")
    endif()
  endforeach()
  if(NOT nkinds EQUAL 1)
    message("FAIL: ${name}: ${nkinds} kind labels (${labels}), expected one of ${KINDS}")
    math(EXPR bad "${bad} + 1")
  elseif(NOT kind STREQUAL "fuzz"
         AND NOT name MATCHES "^[a-z][a-z0-9]*(_[a-z0-9]+)*_${kind}(_[A-Za-z0-9]+)*$")
    message("FAIL: ${name}: not <subject>_${kind}[_<variant>] (tests/README.md)")
    math(EXPR bad "${bad} + 1")
  endif()
endforeach()
message("test names: ${ntests} tests checked, ${bad} problems")
if(bad GREATER 0)
  message(FATAL_ERROR "test names and labels: ${bad} problems")
endif()
