# A trace file outlives an exec of the process and a SIGKILL right after
# start() (session_files_test, issue 17).
jitscope_add_hardening_test(session_files_test SOURCES session_files_test.cpp CHILD)
