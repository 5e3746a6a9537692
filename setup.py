"""Build the Cython extension modules.

FASTTAG_DEBUG=1 builds with bounds and wraparound checks on, the raw-pointer
index checks of ``_check.pxd`` compiled in, -O0 and -g: a test run under it
is a memory-safety check.  The default (release) build is -O3 with all of
them off and no debug symbols (-g0, and the linker's -s on Linux): they
were most of the wheel's size.
"""
import os
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("FASTTAG_DEBUG", "") not in ("", "0")

MODULES = ["fasttag._core.weights", "fasttag._core.sequence", "fasttag._core.features", "fasttag._core.kbest",
           "fasttag._core.wordtypes", "fasttag._core.documents", "fasttag._core.charfeatures",
           "fasttag._core.brown", "fasttag._core.keyids", "fasttag._core.tokenizer", "fasttag._core.parsing", "fasttag.linear._weights", "fasttag.linear._mlp"]

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}
if sys.platform == "win32":
    compile_args, link_args = ([] if DEBUG else ["/O2"]), []
else:
    compile_args = ["-O0", "-g"] if DEBUG else ["-O3", "-g0"]
    link_args = ["-s"] if not DEBUG and sys.platform.startswith("linux") else []

# Neither cythonize nor build_ext notices a change of directives or macros
# alone: regenerate every C source when the build kind differs from the last
# one (recorded under build/), so switching kinds never keeps stale modules.
KIND = "debug" if DEBUG else "release"
STAMP = os.path.join("build", "fasttag-build-kind")
try:
    with open(STAMP) as f:
        kind_changed = f.read().strip() != KIND
except OSError:
    kind_changed = True

extensions = [
    Extension(
        name,
        [name.replace(".", "/") + ".pyx"],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
        + ([("FASTTAG_DEBUG", "1")] if DEBUG else []),
        extra_compile_args=compile_args,
        extra_link_args=link_args,
    )
    for name in MODULES
    if os.path.exists(name.replace(".", "/") + ".pyx")
]

ext_modules = cythonize(extensions, compiler_directives=directives, force=kind_changed)
os.makedirs("build", exist_ok=True)
with open(STAMP, "w") as f:
    f.write(KIND + "\n")

setup(ext_modules=ext_modules)
