# The Python package (python/, docs/python.md), by JITSCOPE_WITH_PYTHON:
# AUTO builds it when the interpreter's headers are found (one configure
# line when not), ON requires them, OFF skips it. The interpreter is
# Python3_EXECUTABLE, default the first python3 on PATH.
set(JITSCOPE_HAS_PYTHON OFF)

# jitscope_add_python_extension(target NAME module DIR folder SOURCES ...):
# a CPython extension module (the package's own, the tests' helper, the
# python_driver sample's backend) built as the package's is: C++20,
# PY_SSIZE_T_CLEAN, hidden symbols, `module`<SOABI>.so in `folder`. Link
# what it needs (libjitscope.so, for one session with the package) after.
function(jitscope_add_python_extension target)
  cmake_parse_arguments(ARG "" "NAME;DIR" "SOURCES" ${ARGN})
  Python3_add_library(${target} MODULE WITH_SOABI ${ARG_SOURCES})
  target_compile_features(${target} PRIVATE cxx_std_20)
  target_compile_definitions(${target} PRIVATE PY_SSIZE_T_CLEAN)
  # CPython's own types are cast between, as its headers do.
  target_compile_options(${target} PRIVATE
    $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wno-missing-field-initializers
                                     -fno-strict-aliasing>)
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${ARG_NAME}
    LIBRARY_OUTPUT_DIRECTORY "${ARG_DIR}"
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
endfunction()
if(JITSCOPE_WITH_PYTHON STREQUAL "AUTO" AND CMAKE_CXX_FLAGS MATCHES "sanitize")
  # Python itself is not built with the sanitizer, whose runtime must load first.
  message(STATUS "jitscope: Python package off in a sanitizer build")
elseif(NOT JITSCOPE_WITH_PYTHON STREQUAL "OFF")
  if(NOT DEFINED Python3_EXECUTABLE)
    find_program(jitscope_path_python3 NAMES python3 NO_CACHE)
    if(jitscope_path_python3)
      set(Python3_EXECUTABLE "${jitscope_path_python3}")
    endif()
  endif()
  if(JITSCOPE_WITH_PYTHON STREQUAL "ON")
    find_package(Python3 3.8 REQUIRED COMPONENTS Interpreter Development.Module)
  else()
    find_package(Python3 3.8 QUIET COMPONENTS Interpreter Development.Module)
  endif()
  if(Python3_Development.Module_FOUND AND TARGET jitscope_shared)
    set(JITSCOPE_HAS_PYTHON ON)
    add_subdirectory(python)
    message(STATUS "jitscope: Python package on (${Python3_EXECUTABLE}, ${Python3_VERSION})")
  else()
    message(STATUS "jitscope: Python package off: no Python headers for "
                   "${Python3_EXECUTABLE} (apt-get install python3-dev; "
                   "-DJITSCOPE_WITH_PYTHON=OFF to skip)")
  endif()
endif()
