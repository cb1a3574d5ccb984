"""Builds the jitscope package with CMake for `pip install --no-build-isolation`.

The extension (_jitscope) and libjitscope.so come from this repository's
CMake build, in Release, for the interpreter that runs pip; both go into
the package folder, where the module finds the library ($ORIGIN). With
JITSCOPE_BUILD_DIR set to a configured build tree, that tree is built and
packaged instead (faster; its configuration is kept as it is).
"""

import glob
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        found = re.search(r"project\(jitscope\s+VERSION\s+([0-9.]+)", f.read())
    if not found:
        sys.exit("jitscope setup.py: no version in CMakeLists.txt's project()")
    return found.group(1)


def run(cmd):
    print("jitscope setup.py:", " ".join(cmd), flush=True)
    subprocess.check_call(cmd)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if shutil.which("cmake") is None:
            sys.exit("jitscope setup.py: cmake is needed (Debian: apt-get install cmake, or "
                     "scripts/setup-deps.sh)")
        package = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        build = os.environ.get("JITSCOPE_BUILD_DIR")
        if not build:
            build = os.path.join(os.path.abspath(self.build_temp), "cmake")
            run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                 f"-DPython3_EXECUTABLE={sys.executable}", "-DJITSCOPE_WITH_PYTHON=ON",
                 "-DJITSCOPE_BUILD_TESTS=OFF", "-DJITSCOPE_BUILD_BENCH=OFF",
                 "-DJITSCOPE_BUILD_SAMPLES=OFF", "-DJITSCOPE_BUILD_TOOLS=OFF",
                 "-DJITSCOPE_INSTALL=OFF"])
        run(["cmake", "--build", build, "--target", "jitscope_python", "--parallel",
             str(os.cpu_count() or 2)])
        built = os.path.join(build, "python", "jitscope")
        modules = glob.glob(os.path.join(built, "_jitscope*.so"))
        # The library under its soname, the name the module asks for.
        soname = "libjitscope.so." + ".".join(version().split(".")[:2])
        library = os.path.join(build, "sdk", soname)
        if len(modules) != 1 or not os.path.exists(library):
            sys.exit(f"jitscope setup.py: no _jitscope module or {soname} in {build}")
        os.makedirs(package, exist_ok=True)
        # The module's run path starts with $ORIGIN: the library beside it.
        shutil.copy2(modules[0], self.get_ext_fullpath(ext.name))
        shutil.copy2(library, os.path.join(package, soname))  # the file, not the link


setup(
    version=version(),
    packages=["jitscope"],
    ext_modules=[Extension("jitscope._jitscope", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
