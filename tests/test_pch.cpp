// The anchor of the tests' precompiled header (CMakeLists.txt: jitscope_test_pch).
