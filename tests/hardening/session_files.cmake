# A trace file outlives an exec of the process and a SIGKILL right after
# start() (session_files_test, issue 17).
jitscope_add_hardening_part(SOURCES session_files_test.cpp CHILDREN session_files)
