# fork() while other threads use the compile layer: no child hangs
# (fork_test, issue 17 item 4).
jitscope_add_hardening_test(fork_test SOURCES fork_test.cpp TIMEOUT 300 CHILDREN fork)
