# A full disk leaves whole events and whole lines (full_disk_test, issue 17
# item 2); RLIMIT_FSIZE stands in for ENOSPC.
jitscope_add_hardening_test(full_disk_test SOURCES full_disk_test.cpp CHILD)
