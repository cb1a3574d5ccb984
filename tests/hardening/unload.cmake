# A plugin unloaded during a session (issue 17): its events keep their names,
# the host does not crash. The host links the shared library, as a compiler
# that loads plugins does; the plugin links it too.
add_library(jitscope_test_unload_plugin MODULE unload_plugin.cpp unload_plugin_c.c)
target_link_libraries(jitscope_test_unload_plugin PRIVATE jitscope_shared)
set_target_properties(jitscope_test_unload_plugin PROPERTIES CXX_VISIBILITY_PRESET hidden
                                                             C_VISIBILITY_PRESET hidden)

add_executable(unload_test unload_test.cpp)
target_link_libraries(unload_test PRIVATE jitscope_shared GTest::gtest_main
                      nlohmann_json::nlohmann_json ${CMAKE_DL_LIBS})
target_include_directories(unload_test PRIVATE "${PROJECT_SOURCE_DIR}/tests")
target_compile_definitions(unload_test PRIVATE
                           UNLOAD_PLUGIN="$<TARGET_FILE:jitscope_test_unload_plugin>")
add_dependencies(unload_test jitscope_test_unload_plugin)
gtest_discover_tests(unload_test DISCOVERY_MODE PRE_TEST
                     PROPERTIES LABELS "hardening" TIMEOUT 120
                     ENVIRONMENT "TEST_TMPDIR_FOR_JITSCOPE=${CMAKE_CURRENT_BINARY_DIR}/tmp")
