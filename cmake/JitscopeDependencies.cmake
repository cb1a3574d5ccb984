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
