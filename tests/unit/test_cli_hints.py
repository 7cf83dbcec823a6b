"""The CLI says what it did and what to do: ``convert`` reports its repairs on stderr, and a
provider payload given without ``--from`` gets a hint naming the format (issue 21, items 7, 8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from threadline import cli


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write_json(path: Path, value: Any) -> str:
    path.write_text(json.dumps(value))
    return str(path)


# -- convert reports its repairs ----------------------------------------------------------------


def defective_history() -> list[tl.Message]:
    return [
        tl.user_message("Weather in Paris?", id="u1"),
        tl.internal_message(tl.hook_part("approval", {"approved": True}), id="i1"),
        tl.assistant_message(tl.tool_call_part("c1", "get_weather", {"city": "Paris"}), id="a1"),
    ]


def test_convert_reports_each_repair_on_stderr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "h.json"
    path.write_bytes(tl.dump_json(defective_history()))
    code, out, err = run(capsys, "convert", str(path), "--to", "openai_chat")
    assert code == 0
    assert json.loads(out) == tl.encode(defective_history(), provider="openai_chat")
    lines = err.splitlines()
    report = tl.repair_messages(defective_history()).report.issues
    assert lines[0] == (f"{path}: repaired {len(report)} issues before converting to openai_chat")
    assert lines[1:] == [f"  {issue}" for issue in report]
    assert any("missing-tool-result" in line for line in lines[1:])


def test_convert_of_a_clean_history_says_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "h.json"
    path.write_bytes(tl.dump_json([tl.user_message("hi"), tl.assistant_message("hello")]))
    code, out, err = run(capsys, "convert", str(path), "--to", "anthropic")
    assert (code, err) == (0, "")
    assert json.loads(out)["messages"][0]["role"] == "user"


# -- a provider payload without --from ----------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "provider"),
    [
        ([{"role": "user", "content": "hi"}], "openai_chat"),
        ({"messages": [{"role": "user", "content": "hi"}]}, "openai_chat"),
        (
            [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
                },
            ],
            "anthropic",
        ),
        ({"system": "Be brief.", "messages": [{"role": "user", "content": "hi"}]}, "anthropic"),
        ({"messages": [{"role": "user", "content": [{"text": "hi"}]}]}, "bedrock"),
        ({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}, "gemini"),
        ([{"role": "user", "parts": [{"text": "hi"}]}], "gemini"),
        ({"input": [{"role": "user", "content": "hi"}]}, "openai_responses"),
        ([{"type": "message", "role": "user", "content": "hi"}], "openai_responses"),
    ],
)
def test_check_names_the_format_of_a_provider_payload(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, payload: Any, provider: str
) -> None:
    path = write_json(tmp_path / "p.json", payload)
    code, out, err = run(capsys, "check", path)
    assert (code, out) == (2, "")
    assert f"pass --from {provider}" in err
    assert "looks like" in err
    # ... and the hint is right: with it, the file reads.
    assert run(capsys, "check", path, "--from", provider)[0] in (0, 1)  # read, not refused


def test_check_hint_names_openai_chat_for_a_bare_message_list(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_json(tmp_path / "p.json", [{"role": "user", "content": "hi"}])
    _, _, err = run(capsys, "check", path)
    assert "this looks like an OpenAI Chat Completions payload: pass --from openai_chat" in err


def test_a_broken_threadline_history_gets_no_provider_hint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_json(tmp_path / "p.json", [{"role": "user", "parts": [{"type": "txt"}]}])
    code, _, err = run(capsys, "check", path)
    assert code == 2
    assert "--from" not in err
