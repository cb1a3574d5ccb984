# Crash safety: a child crashes by each fatal signal (crash_child.cpp).
jitscope_add_hardening_part(SOURCES crash_test.cpp CHILDREN crash)
# The faults are the point: no optimisation may remove them.
set_source_files_properties(crash_child.cpp PROPERTIES COMPILE_OPTIONS "-O0")
# Its Perfetto form, as the child left it (crash_test.cpp, keep_for_checker):
# a crash or SIGKILL may cut the last packet and leave spans open (CUT).
foreach(how segv sigkill)
  jitscope_check_hardening_pftrace("${CMAKE_CURRENT_BINARY_DIR}/tmp/crash.${how}.pftrace" CUT)
endforeach()
# A flight recorder's crash snapshot: whole, every span begun and ended once.
jitscope_check_hardening_pftrace("${CMAKE_CURRENT_BINARY_DIR}/tmp/crash.flight-segv.pftrace"
                                 SNAPSHOT)
