# SPDX-License-Identifier: BSD-2-Clause
# SRCU (issue 3): unit tests (default, KSYNC_DEBUG, fenced read side), the
# torture test (quick and stress), the mutation check and the Promela model.
ksync_add_test(srcu_test SOURCES srcu_test.c LABELS quick concurrent TIMEOUT 120)
ksync_add_test(srcu_test_debug SOURCES srcu_test.c LABELS quick concurrent
               DEFINES KSYNC_DEBUG TIMEOUT 120)
ksync_add_test(srcu_test_fenced SOURCES srcu_test.c LABELS quick concurrent TIMEOUT 120)
set_tests_properties(srcu_test_fenced PROPERTIES ENVIRONMENT "KSYNC_SRCU_FENCED=1")
