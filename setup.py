"""The compiled number reader; everything else is in pyproject.toml.

Optional: where no C compiler is found the build goes on without it, and
scoring.numbers reads every answer in Python (the same numbers, slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("scoring._numbers_c", ["scoring/_numbers_c.c"], optional=True, extra_compile_args=["-O2"])
    ]
)
