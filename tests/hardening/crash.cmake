# Crash safety: a child crashes by each fatal signal (crash_child.cpp).
jitscope_add_hardening_test(crash_test SOURCES crash_test.cpp CHILD)
# The faults are the point: no optimisation may remove them.
set_source_files_properties(crash_child.cpp PROPERTIES COMPILE_OPTIONS "-O0")
