# fork() while other threads use the compile layer: no child hangs
# (fork_test, issue 17 item 4).
add_executable(fork_child fork_child.cpp)
target_link_libraries(fork_child PRIVATE jitscope_static Threads::Threads)
jitscope_add_hardening_test(fork_test SOURCES fork_test.cpp TIMEOUT 300)
target_compile_definitions(fork_test PRIVATE JITSCOPE_FORK_CHILD="$<TARGET_FILE:fork_child>")
add_dependencies(fork_test fork_child)
