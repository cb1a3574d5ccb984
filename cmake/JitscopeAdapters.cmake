# The compiler adapters (docs/compiler-adapters.md): jitscope::llvm and
# jitscope::mlir, header-only INTERFACE targets that link jitscope and the
# shared libLLVM / libMLIR. Each is on when its library is found (AUTO), a
# configure error when asked for and missing (ON), or off (OFF); skipped,
# it says so in one configure line. Included after sdk/ (they link jitscope).
set(JITSCOPE_WITH_LLVM AUTO CACHE STRING
    "The jitscope::llvm adapter: AUTO (when LLVM 16 is found), ON (required) or OFF")
set(JITSCOPE_WITH_MLIR AUTO CACHE STRING
    "The jitscope::mlir adapter: AUTO (when MLIR 16 is found), ON (required) or OFF")
set_property(CACHE JITSCOPE_WITH_LLVM PROPERTY STRINGS AUTO ON OFF)
set_property(CACHE JITSCOPE_WITH_MLIR PROPERTY STRINGS AUTO ON OFF)

# Where Debian's llvm-16-dev and libmlir-16-dev put their CMake packages.
set(JITSCOPE_LLVM_HINTS /usr/lib/llvm-16 /usr/lib/llvm-16/lib/cmake/llvm
    /usr/lib/llvm-16/lib/cmake/mlir)

# In a function: LLVM's and MLIR's package files set hundreds of variables;
# only their imported targets (LLVM, MLIR) and what is set PARENT_SCOPE leave it.
function(jitscope_find_compiler_libraries)
  set(has_llvm OFF)
  set(has_mlir OFF)
  set(llvm_why "JITSCOPE_WITH_LLVM=OFF")
  if(NOT JITSCOPE_WITH_LLVM STREQUAL "OFF")
    find_package(LLVM 16 CONFIG QUIET HINTS ${JITSCOPE_LLVM_HINTS})
    if(NOT LLVM_FOUND)
      set(llvm_why "LLVM 16 not found (apt-get install -y llvm-16-dev, or set LLVM_DIR)")
    elseif(NOT TARGET LLVM)
      set(llvm_why "LLVM ${LLVM_PACKAGE_VERSION} has no shared libLLVM (LLVM_LINK_LLVM_DYLIB)")
    else()
      set(has_llvm ON)
    endif()
  endif()
  set(mlir_why "JITSCOPE_WITH_MLIR=OFF")
  if(NOT has_llvm AND NOT JITSCOPE_WITH_MLIR STREQUAL "OFF")
    set(mlir_why "it needs the LLVM adapter's LLVM: ${llvm_why}")
  elseif(NOT JITSCOPE_WITH_MLIR STREQUAL "OFF")
    find_package(MLIR CONFIG QUIET HINTS ${JITSCOPE_LLVM_HINTS})
    if(NOT MLIR_FOUND)
      set(mlir_why "MLIR not found (apt-get install -y libmlir-16-dev mlir-16-tools, or set MLIR_DIR)")
    elseif(NOT TARGET MLIR)
      set(mlir_why "MLIR has no shared libMLIR")
    else()
      set(has_mlir ON)
    endif()
  endif()

  foreach(adapter LLVM MLIR)
    string(TOLOWER ${adapter} lower)
    if(has_${lower})
      message(STATUS "jitscope: jitscope::${lower} adapter on (${${adapter}_DIR})")
    elseif(JITSCOPE_WITH_${adapter} STREQUAL "ON")
      message(FATAL_ERROR "jitscope: JITSCOPE_WITH_${adapter}=ON but ${${lower}_why}")
    else()
      message(STATUS "jitscope: jitscope::${lower} adapter skipped: ${${lower}_why}")
    endif()
  endforeach()

  # Each adapter twice: over the static library (jitscope::llvm), and over
  # libjitscope.so (jitscope::llvm_shared) for a compiler's Python extension
  # module, which then shares the session and the current unit with the
  # jitscope package (docs/python.md), where a static copy would split the
  # trace. Target-scoped (never include_directories()): only consumers of an
  # adapter see LLVM's (and MLIR's) headers and definitions.
  if(has_llvm)
    separate_arguments(llvm_definitions UNIX_COMMAND "${LLVM_DEFINITIONS}")
    list(TRANSFORM llvm_definitions REPLACE "^-D" "")
  endif()
  foreach(flavour IN ITEMS "" "_shared")
    set(sdk jitscope)
    if(flavour STREQUAL "_shared")
      set(sdk jitscope_shared)
    endif()
    if(has_llvm)
      add_library(jitscope_llvm${flavour} INTERFACE)
      target_link_libraries(jitscope_llvm${flavour} INTERFACE ${sdk} LLVM)
      target_include_directories(jitscope_llvm${flavour} SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
      target_compile_definitions(jitscope_llvm${flavour} INTERFACE ${llvm_definitions})
      set_target_properties(jitscope_llvm${flavour} PROPERTIES EXPORT_NAME llvm${flavour})
      add_library(jitscope::llvm${flavour} ALIAS jitscope_llvm${flavour})
    endif()
    if(has_mlir)
      add_library(jitscope_mlir${flavour} INTERFACE)
      target_link_libraries(jitscope_mlir${flavour} INTERFACE jitscope_llvm${flavour} MLIR)
      target_include_directories(jitscope_mlir${flavour} SYSTEM INTERFACE ${MLIR_INCLUDE_DIRS})
      set_target_properties(jitscope_mlir${flavour} PROPERTIES EXPORT_NAME mlir${flavour})
      add_library(jitscope::mlir${flavour} ALIAS jitscope_mlir${flavour})
    endif()
  endforeach()
  if(has_llvm)
    set(JITSCOPE_LLVM_DIR "${LLVM_DIR}" PARENT_SCOPE)
    set(JITSCOPE_LLVM_VERSION "${LLVM_PACKAGE_VERSION}" PARENT_SCOPE)
  endif()
  if(has_mlir)
    set(JITSCOPE_MLIR_DIR "${MLIR_DIR}" PARENT_SCOPE)
  endif()
  set(JITSCOPE_HAS_LLVM ${has_llvm} PARENT_SCOPE)
  set(JITSCOPE_HAS_MLIR ${has_mlir} PARENT_SCOPE)
endfunction()

jitscope_find_compiler_libraries()

# Installed as package components, each in its own export file, so that
# find_package(jitscope) alone never looks for LLVM:
#   find_package(jitscope COMPONENTS llvm mlir)
if(JITSCOPE_INSTALL)
  include(GNUInstallDirs)
  foreach(adapter llvm mlir)
    if(TARGET jitscope_${adapter})
      install(TARGETS jitscope_${adapter} jitscope_${adapter}_shared
              EXPORT jitscope_${adapter}_targets)
      install(EXPORT jitscope_${adapter}_targets NAMESPACE jitscope::
              FILE jitscope-${adapter}-targets.cmake
              DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/jitscope)
    endif()
  endforeach()
endif()
