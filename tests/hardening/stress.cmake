# Stress, churn and resource bounds (stress_test), and the C API under
# hostile input (c_api_hostile_test). Issue 7, label `hardening`.

# The child that writes its trace to /dev/full (stress_test runs it).
add_executable(jitscope_devfull_child devfull_child.cpp)
target_link_libraries(jitscope_devfull_child PRIVATE jitscope_static)

# The big ones hold the TSan build's sizes with room (the slowest seen there
# takes about 40 s).
jitscope_add_hardening_test(stress_test SOURCES stress_test.cpp TIMEOUT 300)
if(CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
  # Millions of spans from the test's own loops, inlined into it: -O1, not
  # the -Og of the other test files (tests/CMakeLists.txt). GCC takes the
  # tests' precompiled header, made at -Og, in an -O1 file (-H marks it
  # valid).
  set_source_files_properties(stress_test.cpp PROPERTIES COMPILE_OPTIONS -O1)
endif()
target_compile_definitions(stress_test PRIVATE
                           JITSCOPE_DEVFULL_CHILD="$<TARGET_FILE:jitscope_devfull_child>")
add_dependencies(stress_test jitscope_devfull_child)

set_source_files_properties(c_api_hostile_calls.c PROPERTIES LANGUAGE C)
jitscope_add_hardening_part(SOURCES c_api_hostile_test.cpp c_api_hostile_calls.c)
