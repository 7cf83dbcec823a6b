"""atheris harness: ``load_json`` (and the server recipe after it) on arbitrary bytes.

Run through ``python fuzz/run.py``; or directly with libFuzzer flags and corpus directories,
or with a crash file to reproduce it: ``python fuzz/fuzz_load_json.py crash-<hash>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

with atheris.instrument_imports():
    from fuzz.targets import load_json_target


def test_one_input(data: bytes) -> None:
    load_json_target(data)


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
