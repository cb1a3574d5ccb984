# Crash safety: a child crashes by each fatal signal (crash_child.cpp).
add_executable(crash_child crash_child.cpp)
target_link_libraries(crash_child PRIVATE jitscope_static Threads::Threads)
# The faults are the point: no optimisation may remove them.
set_source_files_properties(crash_child.cpp PROPERTIES COMPILE_OPTIONS "-O0")
jitscope_add_hardening_test(crash_test SOURCES crash_test.cpp)
target_compile_definitions(crash_test PRIVATE JITSCOPE_CRASH_CHILD="$<TARGET_FILE:crash_child>")
add_dependencies(crash_test crash_child)
