# The Python package's pytest suites (label: python), one ctest test per
# file, run with the interpreter the package was built for
# (python/tests/run_pytest.sh: skipped when it has no pytest).
file(GLOB jitscope_python_tests CONFIGURE_DEPENDS
     "${PROJECT_SOURCE_DIR}/python/tests/test_*.py")
set(py_tmp "${CMAKE_CURRENT_BINARY_DIR}/tmp/python")
file(MAKE_DIRECTORY "${py_tmp}")
foreach(file IN LISTS jitscope_python_tests)
  get_filename_component(stem "${file}" NAME_WE)
  add_test(NAME python.${stem}
           COMMAND bash "${PROJECT_SOURCE_DIR}/python/tests/run_pytest.sh" "${Python3_EXECUTABLE}"
                   "${file}")
  # Helper paths in variables without the JITSCOPE_ prefix: the SDK names
  # unknown JITSCOPE_* variables.
  set_tests_properties(python.${stem} PROPERTIES LABELS python SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "PYTHONPATH=${JITSCOPE_PYTHON_DIR}:${JITSCOPE_PYTHON_DIR}/test_helpers;JSPY_TMP=${py_tmp};JSPY_RECORD_TWIN=$<TARGET_FILE:jitscope_python_record_twin>;JSPY_REPORT=$<$<TARGET_EXISTS:jitscope-report>:$<TARGET_FILE:jitscope-report>>;JSPY_MERGE=$<$<TARGET_EXISTS:jitscope-merge>:$<TARGET_FILE:jitscope-merge>>;PYTHONDONTWRITEBYTECODE=1")
endforeach()

# On a GPU (label gpu): unit.loading() credits a later CUDA load to its unit.
# Skipped (77) without one, unless JSTEST_GPU_REQUIRE=1.
add_test(NAME python.gpu_loading
         COMMAND bash "${PROJECT_SOURCE_DIR}/python/tests/run_pytest.sh" "${Python3_EXECUTABLE}"
                 "${PROJECT_SOURCE_DIR}/python/tests/gpu_loading.py")
set_tests_properties(python.gpu_loading PROPERTIES LABELS "python;gpu" SKIP_RETURN_CODE 77
  TIMEOUT 300
  ENVIRONMENT "PYTHONPATH=${JITSCOPE_PYTHON_DIR};JSPY_TMP=${py_tmp};PYTHONDONTWRITEBYTECODE=1")

# The installed package, imported from the prefix (python/tests/installed.sh).
add_test(NAME python.installed
         COMMAND bash "${PROJECT_SOURCE_DIR}/python/tests/installed.sh" "${PROJECT_BINARY_DIR}"
                 "${CMAKE_CURRENT_BINARY_DIR}/python_install" "${JITSCOPE_PYTHON_INSTALL_DIR}"
                 "${Python3_EXECUTABLE}")
set_tests_properties(python.installed PROPERTIES LABELS "python;package" TIMEOUT 300)

# pip install --no-build-isolation of python/ (python/setup.py), packaging
# this build tree, into a --target folder; imported from there alone.
add_test(NAME python.pip
         COMMAND bash "${PROJECT_SOURCE_DIR}/python/tests/pip_install.sh" "${PROJECT_BINARY_DIR}"
                 "${CMAKE_CURRENT_BINARY_DIR}/python_pip" "${Python3_EXECUTABLE}"
                 "${PROJECT_SOURCE_DIR}")
set_tests_properties(python.pip PROPERTIES LABELS "python;package" SKIP_RETURN_CODE 77
                     TIMEOUT 300)

# samples/python_driver end to end (labels: python, sample): driver.py run
# from the source tree, its C++ extension from this build when it is built.
add_test(NAME python.sample_python_driver
         COMMAND bash "${PROJECT_SOURCE_DIR}/python/tests/run_pytest.sh" "${Python3_EXECUTABLE}"
                 "${PROJECT_SOURCE_DIR}/tests/samples/python_driver/test_python_driver.py")
set_tests_properties(python.sample_python_driver PROPERTIES LABELS "python;sample"
  SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT "PYTHONPATH=${JITSCOPE_PYTHON_DIR};JSPY_DRIVER=${PROJECT_SOURCE_DIR}/samples/python_driver/driver.py;JSPY_BACKEND_DIR=$<$<TARGET_EXISTS:jitscope_tinydsl_backend>:$<TARGET_FILE_DIR:jitscope_tinydsl_backend>>;JSPY_MERGE=$<$<TARGET_EXISTS:jitscope-merge>:$<TARGET_FILE:jitscope-merge>>;PYTHONDONTWRITEBYTECODE=1")
