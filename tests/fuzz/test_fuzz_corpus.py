"""The atheris harnesses' targets run clean on their seed corpus.

``.ci/run`` fuzzes from this corpus; a seed that crashes a target would fail that run at its
first input. The targets (``fuzz/targets.py``) need no atheris.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuzz import targets
from tests.fuzz._guard import hang_guard
from threadline.codecs import codec_names

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
SEEDS = sorted((FUZZ / "corpus" / "load_json").glob("*.json"))
CODEC_SEEDS = sorted((FUZZ / "corpus" / "codecs").glob("*.json"))


def test_every_codec_function_has_seeds() -> None:
    names = {path.name.rsplit(".", 2)[0] for path in CODEC_SEEDS}
    expected = {f"{name}.{function}" for name, function in targets.CODEC_TARGETS}
    assert names == expected
    assert {name for name, _ in targets.CODEC_TARGETS} == set(codec_names())
    assert SEEDS


@pytest.mark.parametrize("path", SEEDS, ids=lambda p: p.name)
def test_load_json_seeds(path: Path) -> None:
    with hang_guard():
        targets.load_json_target(path.read_bytes())


@pytest.mark.parametrize("path", CODEC_SEEDS, ids=lambda p: p.name)
def test_codec_seeds_decode(path: Path) -> None:
    codec, function, _ = path.name.split(".", 2)
    selector = targets.selector(codec, function)
    data = path.read_bytes()
    json.loads(data)  # seeds are plain JSON
    with hang_guard():
        targets.codec_target(bytes([selector]) + data)
        targets.codec_target(bytes([selector | 0x80]) + data)
