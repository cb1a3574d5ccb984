# The Perfetto protobuf conformance checks (label: perfetto; docs/testing.md,
# tests/perfetto/README.md). Included from tests/CMakeLists.txt before the
# suites, so that any of them can hand its .pftrace files to the checker.
#
#   jitscope_check_pftrace(<test> <file> [CUT] [ROTATED_PART] [SNAPSHOT] [OPTIONAL])
#
# adds the test `pftrace.<test>.<file name>`, which runs after <test> (a name
# given to add_test, or a target of jitscope_add_test, whose discovered cases
# all count) and checks <file> with check_pftrace.py. <file> is deleted
# before <test> runs, so a file the test no longer writes fails the check
# instead of passing stale. CUT: the file may be cut by a crash (--cut);
# ROTATED_PART: a rotated file other than the last (--rotated-part);
# SNAPSHOT: a flight recorder's snapshot (--snapshot);
# OPTIONAL: a missing file skips the check, for a <test> that skips itself
# (exit 77) without writing it.

set(JITSCOPE_PERFETTO_PROTO_DIR "${PROJECT_SOURCE_DIR}/../shared/perfetto"
    CACHE PATH "The folder of Perfetto's perfetto_trace.proto (shared/perfetto beside the repository)")
if(NOT EXISTS "${JITSCOPE_PERFETTO_PROTO_DIR}/perfetto_trace.proto")
  message(WARNING "jitscope: no ${JITSCOPE_PERFETTO_PROTO_DIR}/perfetto_trace.proto: the shared "
                  "folder beside the repository is missing, and the perfetto tests will fail; set "
                  "JITSCOPE_PERFETTO_PROTO_DIR to a copy of shared/perfetto")
endif()

function(jitscope_check_pftrace test file)
  cmake_parse_arguments(ARG "CUT;ROTATED_PART;SNAPSHOT;COMPRESSED;OPTIONAL" "" "" ${ARGN})
  set(flags)
  if(ARG_SNAPSHOT)
    list(APPEND flags --snapshot)
  endif()
  if(ARG_CUT)
    list(APPEND flags --cut)
  endif()
  if(ARG_ROTATED_PART)
    list(APPEND flags --rotated-part)
  endif()
  if(ARG_COMPRESSED)
    list(APPEND flags --compressed)
  endif()
  # with_protobuf.sh finds or installs protoc and python3-protobuf, or skips.
  set(run bash "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/with_protobuf.sh" "${CMAKE_BINARY_DIR}/perfetto-work")
  # One generated schema module for every check (protoc only when the schema
  # file changed): generating it was about half a second a check.
  set(gen --gen-dir "${CMAKE_BINARY_DIR}/perfetto-work/pb2")
  get_filename_component(base "${file}" NAME)
  set(check "pftrace.${test}.${base}")
  set(clean "pftrace_clean.${test}.${base}")
  set(written "pftrace_written.${test}")   # <test> sets it up: the check runs after it
  set(cleaned "pftrace_cleaned.${test}")   # <test> requires it: the file goes first
  if(TEST "${test}")
    set_property(TEST "${test}" APPEND PROPERTY FIXTURES_SETUP "${written}")
    set_property(TEST "${test}" APPEND PROPERTY FIXTURES_REQUIRED "${cleaned}")
  elseif(TARGET "${test}")
    # gtest cases are discovered when ctest starts (PRE_TEST): a script that
    # ctest reads after them (as jitscope_add_test's labels) wires them up.
    set(script "${CMAKE_CURRENT_BINARY_DIR}/${test}_pftrace_${base}.cmake")
    file(WRITE "${script}"
         "if(${test}_TESTS)\n"
         "  set_tests_properties(\${${test}_TESTS} PROPERTIES FIXTURES_SETUP \"${written}\"\n"
         "                       FIXTURES_REQUIRED \"${cleaned}\")\n"
         "endif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
  else()
    message(FATAL_ERROR "jitscope_check_pftrace: no test or target named ${test}")
  endif()
  add_test(NAME "${clean}" COMMAND "${CMAKE_COMMAND}" -E rm -f "${file}")
  set_tests_properties("${clean}" PROPERTIES LABELS perfetto FIXTURES_SETUP "${cleaned}")
  if(ARG_OPTIONAL)
    add_test(NAME "${check}"
             COMMAND bash -c "[ -e \"$1\" ] || { echo \"pftrace check SKIPPED: $1 was not written\"; exit 77; }; shift; exec \"$@\""
                     _ "${file}" ${run} "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/check_pftrace.py"
                     --proto-dir "${JITSCOPE_PERFETTO_PROTO_DIR}" ${gen} ${flags} "${file}")
  else()
    add_test(NAME "${check}"
             COMMAND ${run} "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/check_pftrace.py"
                     --proto-dir "${JITSCOPE_PERFETTO_PROTO_DIR}" ${gen} ${flags} "${file}")
  endif()
  set_tests_properties("${check}" PROPERTIES LABELS perfetto SKIP_RETURN_CODE 77
                       FIXTURES_REQUIRED "${written}")
endfunction()

# The checker's own test: the valid trace passes, each broken one fails for
# its reason (selftest.py, make_broken_traces.py). It runs no jitscope code,
# so the sanitizer builds leave it out (as the browser checker's self-test).
if(NOT CMAKE_CXX_FLAGS MATCHES "sanitize")
  set(pf_selftest_dir "${CMAKE_CURRENT_BINARY_DIR}/perfetto/selftest")
  add_test(NAME perfetto_checker_selftest
           COMMAND bash "${CMAKE_CURRENT_LIST_DIR}/with_protobuf.sh" "${CMAKE_BINARY_DIR}/perfetto-work"
                   "${CMAKE_CURRENT_LIST_DIR}/selftest.py" "${pf_selftest_dir}"
                   --proto-dir "${JITSCOPE_PERFETTO_PROTO_DIR}")
  set_tests_properties(perfetto_checker_selftest PROPERTIES LABELS perfetto SKIP_RETURN_CODE 77
                       TIMEOUT 300 COST 30)
  # The hook shown on the self-test's traces, as a writer's test adopts it.
  jitscope_check_pftrace(perfetto_checker_selftest "${pf_selftest_dir}/valid.pftrace")
  jitscope_check_pftrace(perfetto_checker_selftest "${pf_selftest_dir}/cut_with_flag.pftrace" CUT)
  jitscope_check_pftrace(perfetto_checker_selftest "${pf_selftest_dir}/rotated_part.pftrace"
                         ROTATED_PART)
endif()
