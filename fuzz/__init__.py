"""Fuzzing threadline: atheris harnesses, their targets, the seed corpus and the runner.

A package so that the test suite can import the targets (``from fuzz.targets import ...``)
and run them on the corpus; ``run.py`` and the ``fuzz_*.py`` harnesses are scripts.
"""
