"""``fuzz/make_corpus.py`` follows the registry and is repeatable (issue 38 item 5).

Running it twice changes nothing (the same bytes, no file rewritten); ``--format`` touches that
format's seeds only, and no run touches a hand-written seed; every format the registry lists has
seed responses, and the checked-in corpus is what the script writes today.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz import make_corpus
from threadline.codecs import codec_names

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"


def snapshot(corpus: Path) -> dict[str, tuple[bytes, int]]:
    """Each file under ``corpus``: its bytes and its modification time."""
    return {
        path.relative_to(corpus).as_posix(): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(corpus.rglob("*"))
        if path.is_file()
    }


def test_every_registered_format_has_seed_responses() -> None:
    missing = make_corpus.missing_responses()
    assert not missing, (
        f"the registered formats {missing} have no seed responses: add them to RESPONSES in "
        "fuzz/make_corpus.py, then run python fuzz/make_corpus.py --format NAME"
    )
    stale = sorted(set(make_corpus.RESPONSES) - set(codec_names()))
    assert not stale, f"RESPONSES has seeds for formats the registry does not list: {stale}"


def test_a_newly_registered_format_without_seeds_fails_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(make_corpus, "codec_names", lambda: (*codec_names(), "no_such_format"))
    assert make_corpus.missing_responses() == ["no_such_format"]
    with pytest.raises(make_corpus.CorpusError, match=r"'no_such_format'.*RESPONSES"):
        make_corpus.write(tmp_path)
    assert not any(tmp_path.iterdir())  # refused before writing anything


def test_an_unknown_format_is_refused_naming_the_registered_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert make_corpus.main(["--out", str(tmp_path), "--format", "no_such_format"]) == 2
    assert "'no_such_format' is not a registered format; the formats are anthropic" in (
        capsys.readouterr().err
    )
    assert not any(tmp_path.iterdir())


def test_running_it_twice_changes_nothing(tmp_path: Path) -> None:
    first = tmp_path / "first"
    assert make_corpus.write(first)  # an empty directory: everything is written
    before = snapshot(first)
    assert make_corpus.write(first) == []
    assert snapshot(first) == before  # same bytes, and no file rewritten
    # Another process with another hash seed (set and dict orders) writes the same bytes.
    second = tmp_path / "second"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    command = [sys.executable, str(FUZZ / "make_corpus.py"), "--out", str(second)]
    subprocess.run(command, check=True, env=env, capture_output=True, timeout=120)
    assert {name: data for name, (data, _) in snapshot(second).items()} == {
        name: data for name, (data, _) in before.items()
    }


def test_the_checked_in_corpus_is_what_it_writes() -> None:
    corpus = FUZZ / "corpus"
    stale = sorted(
        relative
        for relative, data in make_corpus.seeds().items()
        if not (corpus / relative).is_file() or (corpus / relative).read_bytes() != data
    )
    assert not stale, f"fuzz/corpus is out of date ({stale}): run python fuzz/make_corpus.py"


def test_a_format_run_touches_that_format_only(tmp_path: Path) -> None:
    shutil.copytree(FUZZ / "corpus", tmp_path, dirs_exist_ok=True)
    codecs = tmp_path / "codecs"
    tampered = {
        codecs / "anthropic.decode.0.json": b"{}\n",
        codecs / "anthropic.decode.99.json": b"{}\n",
        tmp_path / "load_json" / "envelope.0.json": b"{}\n",
        codecs / "gemini.decode.0.json": b"{}\n",
        codecs / "gemini.decode.99.json": b"{}\n",
        codecs / "gemini.decode.hand.json": b'{"contents": []}\n',
    }
    for path, data in tampered.items():
        path.write_bytes(data)
    before = snapshot(tmp_path)
    changed = make_corpus.write(tmp_path, ["gemini"])
    assert changed == ["codecs/gemini.decode.0.json", "codecs/gemini.decode.99.json"]
    after = snapshot(tmp_path)
    assert (
        after.pop("codecs/gemini.decode.0.json")[0]
        == make_corpus.seeds(["gemini"])["codecs/gemini.decode.0.json"]
    )
    assert "codecs/gemini.decode.99.json" not in after  # a numbered seed it no longer makes
    del before["codecs/gemini.decode.0.json"], before["codecs/gemini.decode.99.json"]
    assert after == before  # other formats, load_json, the hand-written seed: untouched


def test_a_full_run_keeps_hand_written_seeds(tmp_path: Path) -> None:
    hand = sorted(
        path.relative_to(FUZZ / "corpus").as_posix()
        for path in (FUZZ / "corpus").rglob("*.json")
        if not path.name.split(".")[-2].isdigit() and path.parent.name == "codecs"
    )
    assert hand  # the checked-in corpus has some (``<codec>.decode.values.json``)
    shutil.copytree(FUZZ / "corpus", tmp_path, dirs_exist_ok=True)
    (tmp_path / "codecs" / "bedrock.decode_response.7.json").write_bytes(b"{}\n")
    before = snapshot(tmp_path)
    assert make_corpus.write(tmp_path) == ["codecs/bedrock.decode_response.7.json"]
    after = snapshot(tmp_path)
    for relative in hand:
        assert after[relative] == before[relative]
