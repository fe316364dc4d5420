"""Builds the native core (native/*.c) as sadedup._native; everything else is in pyproject.toml."""
from glob import glob

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "sadedup._native",
            # libsais (Ilya Grebnov, Apache-2.0, native/libsais/LICENSE), vendored unchanged from
            # its 2.10.4 release: the suffix sorter, 1.4x less CPU than libdivsufsort here
            sources=sorted(glob("native/*.c")) + ["native/libsais/libsais.c"],
            include_dirs=["native"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
        )
    ]
)
