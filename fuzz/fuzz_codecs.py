"""atheris harness: every codec's ``decode`` and ``decode_response`` on arbitrary JSON.

The first byte of an input selects the codec and the function (``targets.CODEC_TARGETS``),
the rest is JSON text. Run through ``python fuzz/run.py``, which builds the starting corpus
from ``fuzz/corpus/codecs``; reproduce a crash with ``python fuzz/fuzz_codecs.py crash-<hash>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

with atheris.instrument_imports():
    from fuzz.targets import codec_target


def test_one_input(data: bytes) -> None:
    codec_target(data)


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
