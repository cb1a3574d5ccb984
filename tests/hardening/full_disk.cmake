# A full disk leaves whole events and whole lines (full_disk_test, issue 17
# item 2); RLIMIT_FSIZE stands in for ENOSPC.
jitscope_add_hardening_test(full_disk_test SOURCES full_disk_test.cpp CHILD)
# Its Perfetto form, as the child left it (a full disk may leave spans open: CUT).
jitscope_check_pftrace(full_disk_test "${CMAKE_CURRENT_BINARY_DIR}/tmp/full_disk.pftrace" CUT)
