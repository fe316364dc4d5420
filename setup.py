"""Builds the native core (native/*.c) as sadedup._native; everything else is in pyproject.toml."""
from glob import glob

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "sadedup._native",
            sources=sorted(glob("native/*.c")),
            include_dirs=["native"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
        )
    ]
)
