# The trace's size cap and its rotation into numbered files (trace_cap_test).
# Issue 7, label `hardening`.
jitscope_add_hardening_part(SOURCES trace_cap_test.cpp)
