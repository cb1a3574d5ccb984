# A trace file outlives an exec of the process and a SIGKILL right after
# start() (session_files_test, issue 17).
add_executable(session_files_child session_files_child.cpp)
target_link_libraries(session_files_child PRIVATE jitscope_static Threads::Threads)
jitscope_add_hardening_test(session_files_test SOURCES session_files_test.cpp)
target_compile_definitions(session_files_test
                           PRIVATE JITSCOPE_SESSION_FILES_CHILD="$<TARGET_FILE:session_files_child>")
add_dependencies(session_files_test session_files_child)
