"""The CLI reads the model a provider payload names (issue 37 item 7): a Converse request's
``modelId`` (``client.converse(modelId=..., **payload)``), another format's ``model``, tags
the reasoning in it that names no model, so ``convert --model`` replays it to that model as
the replay rule says (reasoning goes only to the model that produced it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from threadline import cli

MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
BASE = "anthropic.claude-sonnet-4-5-20250929-v1:0"
REASONING = {"reasoningContent": {"reasoningText": {"text": "Easy.", "signature": "EqQB"}}}


def _bedrock(**top: Any) -> dict[str, Any]:
    return {
        **top,
        "messages": [
            {"role": "user", "content": [{"text": "What purrs?"}]},
            {"role": "assistant", "content": [REASONING, {"text": "A cat."}]},
            {"role": "user", "content": [{"text": "And barks?"}]},
        ],
    }


def _convert(capsys: pytest.CaptureFixture[str], path: Path, *argv: str) -> dict[str, Any]:
    code = cli.main(["convert", str(path), *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    payload: dict[str, Any] = json.loads(out)
    return payload


@pytest.mark.parametrize("target", [MODEL, BASE])
def test_a_converse_request_naming_its_model_replays_reasoning_to_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, target: str
) -> None:
    path = tmp_path / "converse.json"
    path.write_text(json.dumps(_bedrock(modelId=MODEL)))
    out = _convert(capsys, path, "--from", "bedrock", "--to", "bedrock", "--model", target)
    assert out["messages"][1]["content"] == [REASONING, {"text": "A cat."}]


def test_reasoning_goes_to_no_other_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "converse.json"
    path.write_text(json.dumps(_bedrock(modelId=MODEL)))
    other = "anthropic.claude-opus-4-1-20250805-v1:0"
    out = _convert(capsys, path, "--from", "bedrock", "--to", "bedrock", "--model", other)
    assert out["messages"][1]["content"] == [{"text": "A cat."}]


def test_a_payload_naming_no_model_keeps_the_rule(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "converse.json"
    path.write_text(json.dumps(_bedrock()))
    out = _convert(capsys, path, "--from", "bedrock", "--to", "bedrock", "--model", MODEL)
    assert out["messages"][1]["content"] == [{"text": "A cat."}]
    out = _convert(capsys, path, "--from", "bedrock", "--to", "bedrock")
    assert out["messages"][1]["content"] == [REASONING, {"text": "A cat."}]


def test_an_anthropic_request_naming_its_model_replays_thinking_to_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    thinking = {"type": "thinking", "thinking": "Easy.", "signature": "EqQB"}
    payload = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": [
            {"role": "user", "content": "What purrs?"},
            {"role": "assistant", "content": [thinking, {"type": "text", "text": "A cat."}]},
            {"role": "user", "content": "And barks?"},
        ],
    }
    path = tmp_path / "claude.json"
    path.write_text(json.dumps(payload))
    argv = ("--from", "anthropic", "--to", "anthropic", "--model", "claude-sonnet-4-5-20250929")
    out = _convert(capsys, path, *argv)
    assert out["messages"][1]["content"][0] == thinking
