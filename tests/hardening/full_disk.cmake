# A full disk leaves whole events and whole lines (full_disk_test, issue 17
# item 2); RLIMIT_FSIZE stands in for ENOSPC.
add_executable(full_disk_child full_disk_child.cpp)
target_link_libraries(full_disk_child PRIVATE jitscope_static Threads::Threads)
jitscope_add_hardening_test(full_disk_test SOURCES full_disk_test.cpp)
target_compile_definitions(full_disk_test
                           PRIVATE JITSCOPE_FULL_DISK_CHILD="$<TARGET_FILE:full_disk_child>")
add_dependencies(full_disk_test full_disk_child)
