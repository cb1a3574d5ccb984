# jitscope-merge (included last from tests/tools/CMakeLists.txt).
jitscope_add_tools_test(merge_test SOURCES "${CMAKE_CURRENT_LIST_DIR}/merge_test.cpp"
                        LIBS jitscope_merge_lib)
target_compile_definitions(merge_test PRIVATE JITSCOPE_MERGE_BIN="$<TARGET_FILE:jitscope-merge>")
add_dependencies(merge_test jitscope-merge)
if(TARGET gpu_trace_writer)
  target_compile_definitions(merge_test PRIVATE
                             JITSCOPE_GPU_TRACE_WRITER_BIN="$<TARGET_FILE:gpu_trace_writer>")
  add_dependencies(merge_test gpu_trace_writer)
endif()
# The issue's end to end: nvrtc_jit --processes 2, then merge --children.
if(TARGET jitscope_nvrtc_jit)
  target_compile_definitions(merge_test PRIVATE
                             JITSCOPE_NVRTC_JIT_BIN="$<TARGET_FILE:jitscope_nvrtc_jit>")
  add_dependencies(merge_test jitscope_nvrtc_jit)
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
jitscope_add_tools_test(merge_output_test SOURCES "${CMAKE_CURRENT_LIST_DIR}/merge_output_test.cpp")
target_compile_definitions(merge_output_test PRIVATE JITSCOPE_MERGE_BIN="$<TARGET_FILE:jitscope-merge>"
                           JITSCOPE_REPORT_BIN="$<TARGET_FILE:jitscope-report>")
add_dependencies(merge_output_test jitscope-merge jitscope-report)
