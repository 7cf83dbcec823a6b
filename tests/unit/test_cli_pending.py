"""``threadline check`` / ``repair`` with ``--pending`` (issue 36): calls in flight in a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import threadline as tl
from threadline import cli


def live(tmp_path: Path) -> str:
    path = tmp_path / "live.json"
    messages = [
        tl.user_message("Weather in Rome?", id="u1"),
        tl.assistant_message(tl.tool_call_part("c1", "weather", {"city": "Rome"}), id="a1"),
    ]
    path.write_bytes(tl.dump_json(messages))
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_reports_the_pending_call_and_the_choice(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = live(tmp_path)
    code, out, _ = run(capsys, "check", path)
    assert code == 1
    assert "missing-tool-result" in out
    assert "1 pending tool call (--pending answer):" in out
    code, out, _ = run(capsys, "check", "--pending", "keep", path)
    assert code == 0
    assert "no integrity issues" in out
    assert "pending-tool-call at messages[1].parts[0]" in out
    assert "kept unanswered" in out
    code, out, _ = run(capsys, "check", "--pending", "refuse", "--json", path)
    document = json.loads(out)
    assert code == 1
    assert [i["code"] for i in document["issues"]] == ["pending-tool-call"]
    assert not document["issues"][0]["repairable"]
    assert document["pending_choice"] == "refuse"
    assert [i["call_id"] for i in document["pending"]] == ["c1"]


def test_repair_keeps_or_answers_as_told(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = live(tmp_path)
    out_path = str(tmp_path / "out.json")
    code, out, _ = run(capsys, "repair", "--pending", "keep", path, "-o", out_path)
    assert code == 0
    assert "nothing to repair" in out
    assert "(--pending keep)" in out
    assert [m.role for m in tl.load_json(Path(out_path).read_bytes())] == ["user", "assistant"]
    code, out, _ = run(capsys, "repair", path, "-o", out_path)
    assert code == 0
    assert "repaired 1 issue" in out
    assert tl.load_json(Path(out_path).read_bytes())[-1].role == "tool"
    code, _, err = run(capsys, "repair", "--pending", "refuse", path, "-o", out_path)
    assert code == 1
    assert "pending-tool-call" in err
