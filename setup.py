"""Builds the extension fixq._fixq with CMake for `pip install .` (pyproject.toml).

The extension needs the fixq library, whose kernels are compiled per instruction set
(cmake/FixqLibrary.cmake), so setuptools does not compile anything itself: build_ext
configures this repository with CMake (Python package only: no tests, benchmarks or peers)
in build-pip/, next to the usual build/ (so a later `pip install` rebuilds only what
changed, and ccache, where installed, reuses build/'s objects), builds the target
fixq_python there and copies the module.

FIXQ_CMAKE_BUILD_DIR=<folder of an existing CMake build of this tree> reuses that build
instead (the target is brought up to date there, which costs nothing when it already is),
e.g. the `build/` that scripts/setup.sh made.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def project_version():
    """The version of CMakeLists.txt's project(), the one version of fixq."""
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(fixq VERSION ([0-9.]+)", text)
    if not match:
        sys.exit("setup.py: CMakeLists.txt has no 'project(fixq VERSION x.y.z'")
    return match.group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if shutil.which("cmake") is None:
            sys.exit("setup.py: cmake is missing; install Debian's cmake (README.md, Install)")
        reuse = os.environ.get("FIXQ_CMAKE_BUILD_DIR")
        if reuse:
            build_dir = pathlib.Path(reuse).resolve()
            if not (build_dir / "CMakeCache.txt").is_file():
                sys.exit(f"setup.py: FIXQ_CMAKE_BUILD_DIR={reuse} is not a configured CMake build folder")
        else:
            build_dir = ROOT / "build-pip"
            if not (build_dir / "CMakeCache.txt").is_file():  # later builds reconfigure by themselves
                self.configure(build_dir)
        jobs = str(os.cpu_count() or 1)
        result = subprocess.run(["cmake", "--build", str(build_dir), "--target", "fixq_python", "--parallel", jobs])
        if result.returncode != 0:
            sys.exit(f"setup.py: building the target fixq_python in {build_dir} failed (a build configured with "
                     "-DFIXQ_PYTHON=OFF or a sanitizer build has none)")
        built = sorted((build_dir / "python" / "fixq").glob("_fixq*.so"))
        if len(built) != 1:
            sys.exit(f"setup.py: expected one _fixq*.so in {build_dir}/python/fixq, found {len(built)}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)

    def configure(self, build_dir):
        args = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                f"-DPython_EXECUTABLE={sys.executable}", "-DFIXQ_PYTHON=ON", "-DFIXQ_BUILD_TESTS=OFF",
                "-DFIXQ_BUILD_BENCH=OFF", "-DFIXQ_ONEDNN=OFF", "-DFIXQ_OPENBLAS=OFF"]
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        if shutil.which("ccache"):
            args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
        subprocess.run(args, check=True)


setup(
    version=project_version(),
    # One extension, built by CMake above; setuptools only places it.
    ext_modules=[Extension("fixq._fixq", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own files inside pip's CMake build folder, which git ignores (/build-*/).
    options={"build": {"build_base": "build-pip/setuptools"}, "egg_info": {"egg_base": "build-pip/setuptools"}},
)
