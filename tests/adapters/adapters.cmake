# The compiler adapters against the real LLVM and MLIR (label: adapters),
# built when cmake/JitscopeAdapters.cmake found them.
if(TARGET jitscope_llvm)
  jitscope_add_test(llvm_adapter_test SOURCES adapters/llvm_adapter_test.cpp LABELS adapters
                    LIBS jitscope_llvm)
  jitscope_add_test(llvm_adapter_args_test SOURCES adapters/llvm_adapter_args_test.cpp
                    LABELS adapters LIBS jitscope_llvm)
endif()
if(TARGET jitscope_mlir)
  jitscope_add_test(mlir_adapter_test SOURCES adapters/mlir_adapter_test.cpp LABELS adapters
                    LIBS jitscope_mlir)
  jitscope_add_test(mlir_adapter_args_test SOURCES adapters/mlir_adapter_args_test.cpp
                    LABELS adapters LIBS jitscope_mlir)
endif()
# Both adapter headers in a consumer built like LLVM and MLIR (no
# exceptions, no RTTI), enabled and compiled out in one program. A build
# check with one short session on one thread: the sanitizer builds leave it
# out (it was 45 s of the tsan build).
if(TARGET jitscope_mlir AND NOT CMAKE_CXX_FLAGS MATCHES "sanitize")
  add_executable(adapters_consumer adapters/adapters_consumer.cpp adapters/adapters_enabled.cpp
                                   adapters/adapters_disabled.cpp)
  target_link_libraries(adapters_consumer PRIVATE jitscope_mlir)
  target_include_directories(adapters_consumer PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
  target_compile_options(adapters_consumer PRIVATE -fno-exceptions -fno-rtti -Wall -Wextra
                                                   -Werror)
  add_test(NAME adapters_consumer_no_exceptions
           COMMAND adapters_consumer "${CMAKE_CURRENT_BINARY_DIR}/tmp/adapters_consumer.json")
  set_tests_properties(adapters_consumer_no_exceptions PROPERTIES LABELS "unit;adapters")
endif()

# The installed adapters as package components, for a find_package consumer
# (label: package; not under the sanitizers, as find_package_consumer).
if(TARGET jitscope_mlir AND NOT CMAKE_CXX_FLAGS MATCHES "sanitize")
  add_test(NAME find_package_adapters_consumer
           COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/find_package/run_adapters.sh"
                   "${PROJECT_BINARY_DIR}" "${CMAKE_CURRENT_BINARY_DIR}/find_package_adapters"
                   "${CMAKE_CURRENT_SOURCE_DIR}/find_package/adapters" "${CMAKE_CURRENT_SOURCE_DIR}")
  set_tests_properties(find_package_adapters_consumer PROPERTIES LABELS "package;adapters"
                       COST 50)
endif()
