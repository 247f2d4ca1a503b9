"""Builds libgk.so with the repository's Makefile and bundles it in the package.

`pip install ./python` runs this from the repository checkout: build_py calls
`make -C <repo> build/libgk.so build/libgkpy.so` (the build's own tools: a C
compiler, make, re2c, lemon) and copies both libraries into the package, next
to gk/_lib.py, which loads them from there (libgkpy is gk/gkpy.c, the DLPack
deleters).  GK_PREBUILT_DIR=/dir (holding both) uses libraries built
elsewhere instead.  The package itself is pure Python (ctypes):
the wheel is tagged py3-none-<platform> because it carries a native library,
not because it links to one Python.
"""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:                          # setuptools < 70
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def libs():
    """Paths of libgk.so and libgkpy.so, built if need be."""
    pre = os.environ.get("GK_PREBUILT_DIR")
    if pre:
        return [os.path.join(pre, n) for n in ("libgk.so", "libgkpy.so")]
    if not os.path.exists(os.path.join(REPO, "Makefile")) or not os.path.exists(os.path.join(REPO, "gk.h")):
        raise SystemExit("gk: cannot build libgk.so: %s is not the gk repository "
                         "(install with `pip install ./python` from a checkout, or set GK_PREBUILT_DIR)" % REPO)
    jobs = os.environ.get("GK_MAKE_JOBS", str(min(os.cpu_count() or 1, 8)))
    subprocess.check_call(["make", "-C", REPO, "-j" + jobs, "--no-print-directory",
                           "build/libgk.so", "build/libgkpy.so"])
    return [os.path.join(REPO, "build", n) for n in ("libgk.so", "libgkpy.so")]


class BuildPy(build_py):
    def run(self):
        super().run()
        dst = os.path.join(self.build_lib, "gk")
        os.makedirs(dst, exist_ok=True)
        for lib in libs():
            shutil.copyfile(lib, os.path.join(dst, os.path.basename(lib)))


class Wheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPy, "bdist_wheel": Wheel}, distclass=BinaryDistribution)
