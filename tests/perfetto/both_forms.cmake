# The samples and the synthetic-GPU writer in both trace forms (label:
# perfetto; docs/testing.md): both_forms.sh runs the program once writing
# JSON and once writing the Perfetto form, and requires jitscope-report to
# say the same of both (report_agree.py: counts, names, failed units, GPU
# slices and flows; not times); the .pftrace then gets its conformance
# check. Included from tests/CMakeLists.txt once the tools are defined.
#
#   jitscope_both_forms(<name> <codec> <program target> [args...])
#     every argument @TRACE@ is the trace's path; the files are
#     tmp/both_forms/<name>.{json,pftrace,<codec>.pftrace} and their
#     reports beside them; <codec> (deflate, zstd) compresses the third.
if(NOT TARGET jitscope-report)
  return()
endif()
function(jitscope_both_forms name codec program)
  if(NOT TARGET ${program})
    return()
  endif()
  set(prefix "${CMAKE_CURRENT_BINARY_DIR}/tmp/both_forms/${name}")
  add_test(NAME both_forms.${name}
           COMMAND bash "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/both_forms.sh"
                   $<TARGET_FILE:jitscope-report> "${prefix}" ${codec} $<TARGET_FILE:${program}>
                   ${ARGN})
  set_tests_properties(both_forms.${name} PROPERTIES LABELS "perfetto;sample" TIMEOUT 300)
  jitscope_check_pftrace(both_forms.${name} "${prefix}.pftrace")
  jitscope_check_pftrace(both_forms.${name} "${prefix}.${codec}.pftrace" COMPRESSED)
endfunction()

# Each codec for two of them.
jitscope_both_forms(hello deflate jitscope_hello --trace @TRACE@ --threads 3 --kernels 5)
jitscope_both_forms(pass_pipeline zstd jitscope_pass_pipeline --trace @TRACE@ --graphs 6 --workers 2)
# No cache: both runs compile every kernel; one of them fails to compile. One
# worker: with two, which unit a kernel's compile gets (its name, its id)
# depends on which thread came first.
jitscope_both_forms(nvrtc_jit zstd jitscope_nvrtc_jit --trace @TRACE@ --kernels 6 --workers 1 --no-cache
                    --no-gpu --quiet --inject-compile-error reduce_b256_i1)
# GPU slices on two streams and the launch flows to them, from real
# CUpti_Activity records through the collector (no GPU needed); and a
# launch whose kernel never comes: its call has no flow in either form.
jitscope_both_forms(gpu_trace_writer deflate gpu_trace_writer @TRACE@ --launch-without-work)
