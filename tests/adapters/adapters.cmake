# The compiler adapters against the real LLVM and MLIR (label: adapters),
# built when cmake/JitscopeAdapters.cmake found them. The args tests check
# every arg a pipeline on one thread wrote (MLIR's threading off), the
# flusher draining a wrapping ring beside it; the adapters' own threads
# (MLIR's pool, LLVM's ThreadPool) are llvm_adapter_test's and
# mlir_adapter_test's, and a wrapping ring under TSan is inline_path_test's
# (DynamicNamesThroughAWrappingRing). So the tsan build leaves the args
# tests out (55 s of it): what TSan would watch there, the others show.
# Each adapter's tests are one program (unity sources: parsing LLVM's and
# MLIR's headers is most of each file's compile).
if(TARGET jitscope_llvm)
  set(llvm_sources adapters/llvm_adapter_test.cpp adapters/llvm_adapter_stack_test.cpp)
  if(NOT JITSCOPE_UNDER_TSAN)
    list(APPEND llvm_sources adapters/llvm_adapter_args_test.cpp)
  endif()
  jitscope_add_test(llvm_adapter_test SOURCES ${llvm_sources} LABELS adapters LIBS jitscope_llvm)
endif()
if(TARGET jitscope_mlir)
  set(mlir_sources adapters/mlir_adapter_test.cpp)
  if(NOT JITSCOPE_UNDER_TSAN)
    list(APPEND mlir_sources adapters/mlir_adapter_args_test.cpp)
  endif()
  jitscope_add_test(mlir_adapter_test SOURCES ${mlir_sources} LABELS adapters LIBS jitscope_mlir)
endif()
# The installed adapters as package components (label: package; not under
# the sanitizers, as find_package_consumer): both adapter headers in a
# consumer built like LLVM and MLIR (no exceptions, no RTTI, warnings as
# errors), enabled and compiled out in one program, one short session on
# one thread. A copy in this build tree compiled the same three files again
# (about 20 s of CI's build): the package's is how a compiler takes them.
if(TARGET jitscope_mlir AND NOT CMAKE_CXX_FLAGS MATCHES "sanitize")
  add_test(NAME find_package_adapters_consumer
           COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/find_package/run_adapters.sh"
                   "${PROJECT_BINARY_DIR}" "${CMAKE_CURRENT_BINARY_DIR}/find_package_adapters"
                   "${CMAKE_CURRENT_SOURCE_DIR}/find_package/adapters" "${CMAKE_CURRENT_SOURCE_DIR}")
  set_tests_properties(find_package_adapters_consumer PROPERTIES LABELS "package;adapters"
                       COST 50)
endif()
