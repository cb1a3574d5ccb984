# A full disk leaves whole events and whole lines (full_disk_test, issue 17
# item 2); RLIMIT_FSIZE stands in for ENOSPC.
jitscope_add_hardening_part(SOURCES full_disk_test.cpp CHILDREN full_disk)
# Its Perfetto form, as the child left it (a full disk may leave spans open: CUT).
jitscope_check_hardening_pftrace("${CMAKE_CURRENT_BINARY_DIR}/tmp/full_disk.pftrace" CUT)
