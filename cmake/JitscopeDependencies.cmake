# Finds what jitscope builds with, and says clearly what is missing or off.
find_package(Threads REQUIRED)

find_package(Boost 1.74 QUIET)
if(NOT Boost_FOUND)
  message(FATAL_ERROR
    "jitscope: Boost.Lockfree headers not found. Install them with:\n"
    "  apt-get install -y libboost-dev\n"
    "(or run scripts/setup-deps.sh as root).")
endif()

set(JITSCOPE_HAS_CUDA OFF)
if(JITSCOPE_WITH_CUDA)
  if(NOT DEFINED CUDAToolkit_ROOT AND NOT DEFINED ENV{CUDAToolkit_ROOT}
     AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(JITSCOPE_HAS_CUDA ON)
    message(STATUS "jitscope: CUDA ${CUDAToolkit_VERSION} at ${CUDAToolkit_LIBRARY_DIR}: "
                   "CUDA parts on")
  else()
    message(STATUS "jitscope: CUDA toolkit not found: CUPTI, NVTX and NVRTC parts off "
                   "(set CUDAToolkit_ROOT to enable)")
  endif()
else()
  message(STATUS "jitscope: JITSCOPE_WITH_CUDA=OFF: CUPTI, NVTX and NVRTC parts off")
endif()

# The tools (jitscope-report, jitscope-merge) read traces with simdjson; the
# samples' and tools' command lines use CLI11. Both are Debian packages
# (scripts/setup-deps.sh installs them).
set(JITSCOPE_HAS_TOOL_DEPS OFF)
if(JITSCOPE_BUILD_TOOLS OR JITSCOPE_BUILD_SAMPLES)
  find_package(simdjson QUIET)
  find_package(CLI11 QUIET)
  if(simdjson_FOUND AND CLI11_FOUND)
    set(JITSCOPE_HAS_TOOL_DEPS ON)
  else()
    message(STATUS "jitscope: simdjson or CLI11 not found: jitscope-report, jitscope-merge and "
                   "the nvrtc_jit sample are off (apt-get install -y libsimdjson-dev libcli11-dev)")
  endif()
endif()

# The tools read gzip'd traces (.json.gz) through zlib (zlib1g-dev). Without
# it they build and read plain JSON; gzip input is then a clear error.
set(JITSCOPE_TOOLS_HAVE_ZLIB OFF)
if(JITSCOPE_BUILD_TOOLS AND JITSCOPE_HAS_TOOL_DEPS)
  find_package(ZLIB QUIET)
  if(ZLIB_FOUND)
    set(JITSCOPE_TOOLS_HAVE_ZLIB ON)
  else()
    message(STATUS "jitscope: zlib not found: the tools read no gzip input (.json.gz) "
                   "(apt-get install -y zlib1g-dev)")
  endif()
endif()

# zstd (libzstd-dev) for the tools to read zstd-compressed Perfetto packets
# (Config::compression). The SDK itself loads libzstd.so.1 / libz.so.1 at
# run time, only for a session that compresses.
set(JITSCOPE_TOOLS_HAVE_ZSTD OFF)
if(JITSCOPE_BUILD_TOOLS AND JITSCOPE_HAS_TOOL_DEPS)
  find_path(JITSCOPE_ZSTD_INCLUDE_DIR zstd.h)
  find_library(JITSCOPE_ZSTD_LIBRARY zstd)
  if(JITSCOPE_ZSTD_INCLUDE_DIR AND JITSCOPE_ZSTD_LIBRARY)
    set(JITSCOPE_TOOLS_HAVE_ZSTD ON)
  else()
    message(STATUS "jitscope: zstd not found: the tools read no zstd-compressed Perfetto "
                   "packets (apt-get install -y libzstd-dev)")
  endif()
endif()

# NVRTC and nvJitLink for the nvrtc_jit sample. CMake 3.25 has no
# CUDA::nvJitLink target, so the library is found by name.
set(JITSCOPE_HAS_NVRTC OFF)
if(JITSCOPE_HAS_CUDA AND TARGET CUDA::nvrtc)
  find_library(JITSCOPE_NVJITLINK_LIBRARY nvJitLink HINTS "${CUDAToolkit_LIBRARY_DIR}")
  if(JITSCOPE_NVJITLINK_LIBRARY)
    set(JITSCOPE_HAS_NVRTC ON)
  else()
    message(STATUS "jitscope: libnvJitLink not found in ${CUDAToolkit_LIBRARY_DIR}: "
                   "the nvrtc_jit sample is off")
  endif()
endif()

# jitscope_command_line_sources(<file>...): files whose work is parsing a
# command line with CLI11 and handing it to a library (a program's main.cpp
# or options.cpp; not jitscope-merge's, which holds its event loop). CLI11
# is header-only; its inline code at -O2 with full debug info was most of
# each such file's compile (jitscope-report's main.cpp: 15.0 s, 7.2 s at
# -Og with line tables), and parsing argv needs neither. Every
# RelWithDebInfo build (the dev preset's among them); other build types
# keep their flags.
function(jitscope_command_line_sources)
  if(CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo" AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS "-Og;-g1")
  endif()
endfunction()
