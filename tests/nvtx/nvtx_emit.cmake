# NVTX emission (label: nvtx), checked call by call with a recording NVTX
# tool: libnvtx_test_recorder.so (target jitscope_test_nvtx_recorder) is the process's NVTX tool
# (NVTX_INJECTION64_PATH), and nvtx_emit_test reads its log back.
# Included from tests/CMakeLists.txt (needs GTest, nlohmann_json, GoogleTest).
if(JITSCOPE_HAS_NVTX)
  add_library(jitscope_test_nvtx_recorder SHARED nvtx/recorder_tool.cpp)
  target_link_libraries(jitscope_test_nvtx_recorder PRIVATE CUDA::nvtx3)
  # Not "libjitscope*": jitscope takes such a library for its own injection
  # (nvtx/capture_attach.cpp) and would not say that another tool owns NVTX.
  set_target_properties(jitscope_test_nvtx_recorder PROPERTIES
    OUTPUT_NAME nvtx_test_recorder
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)

  add_executable(nvtx_emit_test nvtx/nvtx_emit_test.cpp)
  target_link_libraries(nvtx_emit_test PRIVATE jitscope_static GTest::gtest_main
                        nlohmann_json::nlohmann_json ${CMAKE_DL_LIBS})
  target_include_directories(nvtx_emit_test PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
  # The fallback when run by hand (ctest sets the variable itself).
  target_compile_definitions(nvtx_emit_test PRIVATE
                             JITSCOPE_NVTX_RECORDER="$<TARGET_FILE:jitscope_test_nvtx_recorder>")
  add_dependencies(nvtx_emit_test jitscope_test_nvtx_recorder)
  # One value per property: gtest_discover_tests splits PROPERTIES on ';', so
  # two ENVIRONMENT entries (or LABELS "unit;nvtx") in one string would be lost.
  gtest_discover_tests(nvtx_emit_test DISCOVERY_MODE PRE_TEST TEST_PREFIX "nvtx_emit."
    PROPERTIES LABELS nvtx
               ENVIRONMENT "TEST_TMPDIR_FOR_JITSCOPE=${CMAKE_CURRENT_BINARY_DIR}/tmp"
               ENVIRONMENT_MODIFICATION
                 "NVTX_INJECTION64_PATH=set:$<TARGET_FILE:jitscope_test_nvtx_recorder>")
endif()
