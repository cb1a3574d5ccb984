# jitscope-merge (included last from tests/tools/CMakeLists.txt).
# merge_tools_test, one program (unity sources): merge_test, and the tests
# described below it.
jitscope_add_tools_test(merge_tools_test
                        SOURCES "${CMAKE_CURRENT_LIST_DIR}/merge_test.cpp"
                                "${CMAKE_CURRENT_LIST_DIR}/merge_output_test.cpp"
                                "${CMAKE_CURRENT_LIST_DIR}/perfetto_memory_test.cpp"
                                "${CMAKE_CURRENT_LIST_DIR}/tool_inputs_test.cpp"
                        LIBS jitscope_merge_lib jitscope_trace_reader)
target_compile_definitions(merge_tools_test PRIVATE
                           JITSCOPE_MERGE_BIN="$<TARGET_FILE:jitscope-merge>"
                           JITSCOPE_REPORT_BIN="$<TARGET_FILE:jitscope-report>")
add_dependencies(merge_tools_test jitscope-merge jitscope-report)
if(JITSCOPE_TOOLS_HAVE_ZSTD)
  target_include_directories(merge_tools_test SYSTEM PRIVATE "${JITSCOPE_ZSTD_INCLUDE_DIR}")
  target_link_libraries(merge_tools_test PRIVATE "${JITSCOPE_ZSTD_LIBRARY}")
  target_compile_definitions(merge_tools_test PRIVATE JITSCOPE_TEST_HAVE_ZSTD=1)
endif()
if(TARGET gpu_trace_writer)
  target_compile_definitions(merge_tools_test PRIVATE
                             JITSCOPE_GPU_TRACE_WRITER_BIN="$<TARGET_FILE:gpu_trace_writer>")
  add_dependencies(merge_tools_test gpu_trace_writer)
endif()
# The issue's end to end: nvrtc_jit --processes 2, then merge --children.
if(TARGET jitscope_nvrtc_jit)
  target_compile_definitions(merge_tools_test PRIVATE
                             JITSCOPE_NVRTC_JIT_BIN="$<TARGET_FILE:jitscope_nvrtc_jit>")
  add_dependencies(merge_tools_test jitscope_nvrtc_jit)
endif()

# Chrome DevTools' trace engine reads a merged trace: two gpu_trace_writer
# traces, their processes labelled and their 12 flows all bound (label viewer).
if(TARGET gpu_trace_writer)
  jitscope_add_viewer_test(viewer_merged_gpu_flows run_merge_then_check.sh
                           $<TARGET_FILE:gpu_trace_writer> $<TARGET_FILE:jitscope-merge>
                           "${CMAKE_BINARY_DIR}/viewer-work" "${CMAKE_CURRENT_BINARY_DIR}/../tmp/viewer_merged"
                           "${PROJECT_SOURCE_DIR}/tests/viewer/merged_gpu_expect.json")
endif()

# The arrow from a parent's spawn to each worker's first compile unit, in
# Chrome DevTools' trace engine after merge --children (label viewer).
if(TARGET jitscope_nvrtc_jit)
  jitscope_add_viewer_test(viewer_merged_spawn_flows run_spawn_merge_then_check.sh
                           $<TARGET_FILE:jitscope_nvrtc_jit> $<TARGET_FILE:jitscope-merge>
                           "${CMAKE_BINARY_DIR}/viewer-work" "${CMAKE_CURRENT_BINARY_DIR}/../tmp/viewer_spawn"
                           "${PROJECT_SOURCE_DIR}/tests/viewer/merged_spawn_expect.json")
endif()

# merge_output_test: -o on a FIFO (written in place, its reader gets the
# merge), a symbolic link (followed, kept) and a directory (refused).
# perfetto_memory_test (issue 36, items 15-16): the Perfetto reader's memory
# bounded in bytes (70,000 SDK-shaped thread sequences read whole; slices'
# room given back; long names and the rest stop at the bound with one
# error) and its inflate work (a zstd bomb); the tools' peak RSS under fixed
# bounds. tool_inputs_test (item 20): neither tool opens a FIFO input or
# writes over an input (-o naming it by any path, link or stdin). All three
# are in merge_tools_test (above).
