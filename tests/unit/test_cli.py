"""The ``threadline`` command line: every command on good, defective and unreadable input.

Commands run in-process through ``cli.main(argv)`` (exit status, stdout and stderr captured);
``python -m threadline`` and the installed console script run once each as subprocesses.
``show`` is compared with ``golden/show.txt``; set ``THREADLINE_UPDATE_GOLDEN=1`` to rewrite it
after a deliberate change, and review the diff.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import pytest

import threadline as tl
from tests.support import unavailable
from threadline import cli
from threadline._cli import commands
from threadline.stores import JsonlStore
from threadline.tokens import estimate_tokens

GOLDEN = Path(__file__).parent / "golden"
ROOT = Path(__file__).resolve().parents[2]

Run = tuple[int, str, str]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Run:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, messages: Sequence[tl.Message]) -> str:
    path.write_bytes(tl.dump_json(messages))
    return str(path)


def feed_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("threadline: error: "), err
    return lines[0]


# -- histories ----------------------------------------------------------------------------------


def good_history() -> list[tl.Message]:
    return [
        tl.system_message("You are a weather assistant.", id="s1"),
        tl.user_message("Weather in Paris?", tl.file_part(b"\x89PNG\r\n", "image/png"), id="u1"),
        tl.assistant_message(
            "Let me check.", tl.tool_call_part("c1", "get_weather", {"city": "Paris"}), id="a1"
        ),
        tl.tool_message(tl.tool_result_part("c1", "18°C, clear", name="get_weather"), id="t1"),
        tl.assistant_message("It is 18°C and clear.", id="a2"),
    ]


def defective_history() -> list[tl.Message]:
    """An interrupted tool call (repairable) and UI state (normal in a stored history)."""
    return [
        tl.user_message("Weather in Paris?", id="u1"),
        tl.internal_message(tl.hook_part("approval", {"approved": True}), id="i1"),
        tl.assistant_message(tl.tool_call_part("c1", "get_weather", {"city": "Paris"}), id="a1"),
    ]


def unrepairable_history() -> list[tl.Message]:
    """A result that answers no call: repair would have to guess."""
    return [
        tl.user_message("hi", id="u1"),
        tl.tool_message(tl.tool_result_part("c9", "stray"), id="t1"),
        tl.assistant_message("hello", id="a1"),
    ]


def showcase_history() -> list[tl.Message]:
    """Every kind of thing ``show`` draws, with the defects it should make visible."""
    long_result = "\n".join(f"line {i}: " + "x" * 20 for i in range(1, 11))
    return [
        tl.system_message("You are a travel assistant.", id="s1"),
        tl.user_message(
            "Plan a day in Lisbon.\nI land at 9.",
            tl.file_part(
                "https://example.com/ticket.pdf", "application/pdf", filename="ticket.pdf"
            ),
            id="u1",
        ),
        tl.assistant_message(
            tl.reasoning_part(
                "The user lands at 9; check the weather first, then the museums.\n"
                "A second line of thinking.",
                signature="sig-1",
                provider="anthropic",
                model="claude-x",
            ),
            "Let me look that up.",
            tl.tool_call_part("c1", "get_weather", {"city": "Lisbon"}),
            tl.tool_call_part("c2", "find_museums", {"city": "Lisbon", "open_at": "10:00"}),
            id="a1",
        ),
        tl.tool_message(
            tl.tool_result_part("c1", "22°C, sunny", name="get_weather"),
            tl.tool_result_part("c2", long_result, name="find_museums"),
            id="t1",
        ),
        tl.internal_message(tl.hook_part("approval", {"tool": "book", "approved": True}), id="i1"),
        tl.assistant_message(
            tl.reasoning_part("", encrypted="b3BhcXVl", redacted=True, provider="anthropic"),
            tl.tool_call_part("c3", "book_table", '{"restaurant": "Ramiro", "time": 20'),
            tl.tool_call_part("c4", "snapshot", {"place": "Belem"}),
            tl.tool_call_part("c6", "tram_status", {"line": 28}),
            id="a2",
        ),
        tl.tool_message(
            tl.tool_result_part("c3", "the booking service is down", is_error=True),
            tl.tool_result_part(
                "c4", (tl.text_part("Belem at noon:"), tl.file_part(b"\x89PNG....", "image/png"))
            ),
            id="t2",
        ),
        tl.user_message("Thanks! Is the 28 tram running?", id="u2"),
        tl.tool_message(
            tl.tool_result_part("c6", "running every 12 minutes", name="tram_status"),
            tl.tool_result_part("c9", "a result nobody asked for"),
            id="t3",
        ),
        tl.assistant_message(
            tl.text_part(""),
            tl.tool_call_part("c5", "send_itinerary", {"email": "ana@example.com"}),
            tl.ProviderToolCallPart(
                id="srv_1", name="web_search", input={"query": "tram 28"}, provider="anthropic"
            ),
            tl.ProviderToolResultPart(
                call_id="srv_1", content=[{"title": "Tram 28"}], provider="anthropic"
            ),
            id="a3",
        ),
    ]


def anthropic_payload() -> dict[str, object]:
    return {
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "18°C"}],
            },
        ],
    }


@pytest.fixture
def good(tmp_path: Path) -> str:
    return write(tmp_path / "good.json", good_history())


@pytest.fixture
def defective(tmp_path: Path) -> str:
    return write(tmp_path / "defective.json", defective_history())


@pytest.fixture
def unrepairable(tmp_path: Path) -> str:
    return write(tmp_path / "orphan.json", unrepairable_history())


UNREADABLE: dict[str, tuple[bytes | None, str]] = {
    "missing": (None, "cannot read"),
    "not-json": (b"this is not json\n", "not JSON"),
    "not-utf8": (b"\xff\xfe\x00garbage", "not UTF-8"),
    "empty": (b"  \n", "empty input"),
    "invalid-message": (
        b'[{"id": "m1", "role": "user", "parts": [{"type": "tool_call", "id": "c",'
        b' "name": "n", "arguments": {}}]}]',
        "messages[0].parts[0]",
    ),
    "newer-version": (b'{"format": "threadline", "version": 99, "messages": []}', "upgrade"),
    "provider-payload": (
        b'{"messages": [{"role": "user", "content": "hi"}]}',
        "pass --from openai_chat",
    ),
    "a-number": (b"42", "expected an envelope"),
    "too-deep": (b"[" * 100_000 + b"]" * 100_000, "nests too deeply"),
}


@pytest.fixture(params=sorted(UNREADABLE))
def unreadable(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    data, expected = UNREADABLE[request.param]
    path = tmp_path / f"{request.param}.json"
    if data is not None:
        path.write_bytes(data)
    return str(path), expected


# -- check --------------------------------------------------------------------------------------


def test_check_good_history_exits_0(capsys: pytest.CaptureFixture[str], good: str) -> None:
    code, out, err = run(capsys, "check", good)
    assert (code, err) == (0, "")
    assert out == f"{good}: no integrity issues (5 messages)\n"


def test_check_defective_history_exits_1_and_lists_the_issues(
    capsys: pytest.CaptureFixture[str], defective: str
) -> None:
    code, out, err = run(capsys, "check", defective)
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[0] == f"{defective}: 1 integrity issue in 3 messages"
    assert lines[1].startswith("  missing-tool-result at messages[2].parts[0] (message 'a1'")
    assert "all can be repaired: threadline repair" in out
    assert "1 item of internal content" in lines[-3]
    assert lines[-2:] == [
        "1 pending tool call (--pending answer):",
        "  pending-tool-call at messages[2].parts[0] (message 'a1', call 'c1'): tool call 'c1' "
        "(get_weather) is pending: the newest assistant message's call has no result yet; "
        "pending='answer' answers it as interrupted",
    ]


def test_check_strict_counts_internal_content(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    history = [*good_history(), tl.internal_message(tl.hook_part("ui", {"open": 1}), id="i9")]
    path = write(tmp_path / "internal.json", history)
    assert run(capsys, "check", path)[0] == 0
    code, out, _ = run(capsys, "check", "--strict", path)
    assert code == 1
    assert "internal-message at messages[5]" in out


def test_check_counts_a_message_emptied_by_a_move_but_not_by_dropping_hooks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    hook_only = [
        tl.user_message("hi", id="u1"),
        tl.assistant_message(tl.hook_part("form", {"step": 2}), id="a1"),
        tl.assistant_message("hello", id="a2"),
    ]
    code, out, _ = run(capsys, "check", write(tmp_path / "hooks.json", hook_only))
    assert code == 0
    assert "note: 2 items of internal content" in out  # the hook and the message it empties
    moved = [
        tl.user_message("hi", id="u1"),
        tl.assistant_message(tl.tool_call_part("c1", "f", {}), id="a1"),
        tl.user_message("still there?", id="u2"),
        tl.tool_message(tl.tool_result_part("c1", "late"), id="t1"),
    ]
    code, out, _ = run(capsys, "check", write(tmp_path / "moved.json", moved))
    assert code == 1
    assert "2 integrity issues" in out
    assert "misplaced-tool-result at messages[3].parts[0]" in out
    assert "empty-message at messages[3]" in out
    assert "internal content" not in out


def test_check_json_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path / "h.json", [*defective_history(), *unrepairable_history()[1:]])
    code, out, err = run(capsys, "check", "--json", path)
    assert (code, err) == (1, "")
    report = json.loads(out)
    assert report["source"] == path
    assert report["ok"] is False
    assert report["strict"] is False
    assert report["internal_content"] == 1
    assert [(i["code"], i["repairable"]) for i in report["issues"]] == [
        ("orphan-tool-result", False),
        ("missing-tool-result", True),
    ]
    assert report["issues"][0] | {"detail": ""} == {
        "code": "orphan-tool-result",
        "message_index": 3,
        "part_index": 0,
        "message_id": "t1",
        "call_id": "c9",
        "detail": "",
        "repairable": False,
    }


def test_check_json_of_a_clean_history(capsys: pytest.CaptureFixture[str], good: str) -> None:
    code, out, _ = run(capsys, "check", "--json", "--strict", good)
    assert code == 0
    assert json.loads(out) == {
        "source": good,
        "messages": 5,
        "strict": True,
        "ok": True,
        "issues": [],
        "internal_content": 0,
        "pending_choice": "answer",
        "pending": [],
    }


def test_check_says_what_cannot_be_repaired(
    capsys: pytest.CaptureFixture[str], unrepairable: str
) -> None:
    code, out, _ = run(capsys, "check", unrepairable)
    assert code == 1
    assert "orphan-tool-result at messages[1].parts[0]" in out
    assert "[not repairable automatically]" in out
    assert "1 issue cannot be repaired automatically" in out


def test_check_unreadable_input_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], unreadable: tuple[str, str]
) -> None:
    path, expected = unreadable
    code, out, err = run(capsys, "check", path)
    assert (code, out) == (2, "")
    assert expected in one_error_line(err)


def test_debug_adds_the_traceback(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.json")
    for argv in (["check", "--debug", missing], ["--debug", "check", missing]):
        code, _, err = run(capsys, *argv)
        assert code == 2
        assert err.startswith("Traceback (most recent call last):")
        assert err.splitlines()[-1].startswith("threadline: error: cannot read")


def test_a_bug_is_one_line_too_and_asks_for_a_report(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, good: str
) -> None:
    def broken(messages: object) -> object:
        raise RuntimeError("something\nwent wrong")

    monkeypatch.setattr(commands, "history_stats", broken)
    code, out, err = run(capsys, "stats", good)
    assert (code, out) == (2, "")
    line = one_error_line(err)
    assert "unexpected RuntimeError: something went wrong" in line
    assert "--debug" in line
    code, _, err = run(capsys, "stats", "--debug", good)
    assert code == 2
    assert 'raise RuntimeError("something' in err


def test_check_reads_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    feed_stdin(monkeypatch, tl.dump_json(defective_history()))
    code, out, _ = run(capsys, "check", "-")
    assert code == 1
    assert out.startswith("<stdin>: 1 integrity issue in 3 messages")
    assert "threadline repair - -o FIXED" in out


def test_check_reads_a_bare_list_and_a_single_message_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps([m.model_dump(mode="json") for m in good_history()]))
    assert run(capsys, "check", str(bare))[:2] == (0, f"{bare}: no integrity issues (5 messages)\n")
    line = tmp_path / "one.jsonl"
    line.write_text(tl.user_message("hi", id="u1").model_dump_json() + "\n")
    assert run(capsys, "check", str(line))[:2] == (0, f"{line}: no integrity issues (1 message)\n")


def test_check_reads_a_history_bigger_than_the_default_limits(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # 70 MiB of inline image: load_json's default Limits() stop at 64 MiB; a file the operator
    # points the command at is trusted.
    image = tl.file_part(b"\0" * (70 * 1024 * 1024), "image/png")
    path = write(tmp_path / "big.json", [tl.user_message("look", image, id="u1")])
    code, out, err = run(capsys, "stats", "--json", path)
    assert (code, err) == (0, "")
    assert json.loads(out)["attachments"]["inline_bytes"] == 70 * 1024 * 1024


def test_check_reads_what_jsonl_store_writes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = JsonlStore(tmp_path)
    history = good_history()
    store.append("conv", history[:2])  # a batch: one array line
    store.append("conv", history[2:3])  # one message: one object line
    store.append("conv", history[3:])
    code, out, err = run(capsys, "check", str(tmp_path / "conv.jsonl"))
    assert (code, err) == (0, "")
    assert "no integrity issues (5 messages)" in out


def test_check_skips_a_torn_last_jsonl_line_with_a_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = JsonlStore(tmp_path)
    history = good_history()
    store.append("conv", history[:3])
    path = tmp_path / "conv.jsonl"
    with path.open("ab") as file:  # a crash cut the next batch short
        file.write(
            tl.tool_message(tl.tool_result_part("c1", "18"), id="t1")
            .model_dump_json()[:30]
            .encode()
        )
    code, out, err = run(capsys, "check", str(path))
    assert code == 1  # the call the torn batch answered is unanswered
    assert "missing-tool-result" in out
    assert err.startswith(f"threadline: warning: {path}:2: skipped a torn last line")
    with warnings.catch_warnings(record=True):  # the store agrees: 3 messages
        warnings.simplefilter("always")
        assert len(store.load("conv")) == 3


def test_check_refuses_a_damaged_jsonl_line_that_is_not_the_last(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "conv.jsonl"
    first, second = (m.model_dump_json() for m in good_history()[:2])
    path.write_text(f"{first}\n{second[:20]}\n{first}\n")
    code, out, err = run(capsys, "check", str(path))
    assert (code, out) == (2, "")
    assert f"{path}:2: not JSON" in one_error_line(err)


def test_check_names_the_line_of_an_invalid_jsonl_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "conv.jsonl"
    path.write_text('{"id": "u1", "role": "user", "parts": []}\n{"role": "bogus"}\n')
    code, _, err = run(capsys, "check", str(path))
    assert code == 2
    assert f"{path}:1: invalid message" in one_error_line(err)


def test_check_a_provider_payload(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "claude.json"
    path.write_text(json.dumps(anthropic_payload()))
    assert run(capsys, "check", "--from", "anthropic", str(path))[0] == 0
    cut = anthropic_payload()
    cut["messages"] = cut["messages"][:2]  # type: ignore[index]
    path.write_text(json.dumps(cut))
    code, out, _ = run(capsys, "check", "--from", "anthropic", str(path))
    assert code == 1
    assert "missing-tool-result" in out
    path.write_text('{"messages": [{"role": "user"}]}')
    code, out, err = run(capsys, "check", "--from", "anthropic", str(path))
    assert (code, out) == (2, "")
    assert "not a valid Anthropic Messages payload" in one_error_line(err)


def test_an_unknown_provider_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], good: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["check", "--from", "openai", good])
    assert exited.value.code == 2
    assert "invalid choice: 'openai'" in capsys.readouterr().err


# -- repair -------------------------------------------------------------------------------------


def test_repair_writes_the_prepared_history_and_prints_the_report(
    capsys: pytest.CaptureFixture[str], defective: str, tmp_path: Path
) -> None:
    before = Path(defective).read_bytes()
    out_path = tmp_path / "fixed.json"
    code, out, err = run(capsys, "repair", defective, "-o", str(out_path))
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == (
        f"{defective}: repaired 2 issues; wrote 3 messages to {out_path}"
    )
    assert "internal-message at messages[1]" in out
    assert "missing-tool-result at messages[2].parts[0]" in out
    fixed = tl.load_json(out_path.read_bytes())
    assert fixed == tl.prepare_messages(defective_history())
    assert tl.check_messages(fixed).ok
    assert Path(defective).read_bytes() == before
    umask = os.umask(0o022)
    os.umask(umask)
    assert out_path.stat().st_mode & 0o777 == 0o666 & ~umask  # not the temporary file's 0o600


def test_repair_without_output_writes_the_history_to_stdout(
    capsys: pytest.CaptureFixture[str], defective: str
) -> None:
    code, out, err = run(capsys, "repair", defective)
    assert code == 0
    assert tl.load_json(out) == tl.prepare_messages(defective_history())
    assert err.startswith(f"{defective}: repaired 2 issues; wrote 3 messages to standard output")


def test_repair_of_a_clean_history_still_writes_it(
    capsys: pytest.CaptureFixture[str], good: str, tmp_path: Path
) -> None:
    code, out, _ = run(capsys, "repair", good, "-o", str(tmp_path / "same.json"))
    assert code == 0
    assert out == f"{good}: nothing to repair; wrote 5 messages to {tmp_path / 'same.json'}\n"
    assert tl.load_json((tmp_path / "same.json").read_bytes()) == good_history()


def test_repair_writes_jsonl_that_jsonl_store_reads(
    capsys: pytest.CaptureFixture[str], defective: str, tmp_path: Path
) -> None:
    directory = tmp_path / "store"
    directory.mkdir()
    code, _, _ = run(capsys, "repair", defective, "-o", str(directory / "conv.jsonl"))
    assert code == 0
    assert JsonlStore(directory).load("conv") == tl.prepare_messages(defective_history())
    code, out, _ = run(capsys, "repair", defective, "--format", "jsonl")
    assert len(out.splitlines()) == 3


def test_repair_may_overwrite_its_input(capsys: pytest.CaptureFixture[str], defective: str) -> None:
    Path(defective).chmod(0o640)
    assert run(capsys, "repair", defective, "-o", defective)[0] == 0
    assert run(capsys, "check", "--strict", defective)[0] == 0
    assert Path(defective).stat().st_mode & 0o777 == 0o640
    assert [p.name for p in Path(defective).parent.iterdir()] == [Path(defective).name]


def test_repair_can_rename_duplicate_ids(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    history = [
        tl.user_message("go", id="u1"),
        tl.assistant_message(tl.tool_call_part("c1", "f", {}), id="a1"),
        tl.tool_message(tl.tool_result_part("c1", "one"), id="t1"),
        tl.assistant_message(tl.tool_call_part("c1", "f", {}), id="a2"),
        tl.tool_message(tl.tool_result_part("c1", "two"), id="t2"),
    ]
    path = write(tmp_path / "dup.json", history)
    code, _, err = run(capsys, "repair", path, "-o", str(tmp_path / "out.json"))
    assert code == 1
    assert "duplicate-tool-call" in one_error_line(err)
    assert not (tmp_path / "out.json").exists()
    code, _, _ = run(
        capsys, "repair", path, "-o", str(tmp_path / "out.json"), "--rename-duplicate-ids"
    )
    assert code == 0
    assert [
        c.id for m in tl.load_json((tmp_path / "out.json").read_bytes()) for c in m.tool_calls
    ] == [
        "c1",
        "c1~2",
    ]


def test_repair_refuses_what_it_cannot_fix_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], unrepairable: str, tmp_path: Path
) -> None:
    out_path = tmp_path / "fixed.json"
    code, out, err = run(capsys, "repair", unrepairable, "-o", str(out_path))
    assert (code, out) == (1, "")
    line = one_error_line(err)
    assert "1 integrity issue that repair cannot fix: orphan-tool-result" in line
    assert line.endswith("nothing was written")
    assert not out_path.exists()


def test_repair_unreadable_input_exits_2(
    capsys: pytest.CaptureFixture[str], unreadable: tuple[str, str]
) -> None:
    path, expected = unreadable
    code, out, err = run(capsys, "repair", path)
    assert (code, out) == (2, "")
    assert expected in one_error_line(err)


def test_repair_to_an_unwritable_place_exits_2(
    capsys: pytest.CaptureFixture[str], defective: str, tmp_path: Path
) -> None:
    code, _, err = run(capsys, "repair", defective, "-o", str(tmp_path / "no" / "such" / "x.json"))
    assert code == 2
    assert "cannot write" in one_error_line(err)


# -- convert ------------------------------------------------------------------------------------


def test_convert_prints_what_encode_returns(capsys: pytest.CaptureFixture[str], good: str) -> None:
    code, out, err = run(capsys, "convert", good, "--to", "anthropic", "--system", "Be brief.")
    assert (code, err) == (0, "")
    expected = tl.encode(good_history(), provider="anthropic", system="Be brief.")
    assert json.loads(out) == expected


def test_convert_to_bedrock_writes_bytes_as_base64(
    capsys: pytest.CaptureFixture[str], good: str
) -> None:
    code, out, _ = run(capsys, "convert", good, "--to", "bedrock")
    assert code == 0
    payload = json.loads(out)
    image = payload["messages"][0]["content"][1]["image"]
    assert image["source"]["bytes"] == base64.b64encode(b"\x89PNG\r\n").decode()
    back = tl.decode(payload, provider="bedrock")
    files = [p for m in back for p in m.parts if isinstance(p, tl.FilePart)]
    assert [f.data for f in files] == [b"\x89PNG\r\n"]


def test_convert_between_providers(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "claude.json"
    path.write_text(json.dumps(anthropic_payload()))
    code, out, _ = run(capsys, "convert", str(path), "--from", "anthropic", "--to", "openai_chat")
    assert code == 0
    messages = json.loads(out)["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[2]["tool_calls"][0]["function"] == {
        "name": "get_weather",
        "arguments": '{"city":"Paris"}',
    }


def test_convert_repairs_what_encode_repairs(
    capsys: pytest.CaptureFixture[str], defective: str
) -> None:
    code, out, _ = run(capsys, "convert", defective, "--to", "openai_chat")
    assert code == 0
    assert json.loads(out) == tl.encode(defective_history(), provider="openai_chat")


def test_convert_refuses_a_history_repair_cannot_fix(
    capsys: pytest.CaptureFixture[str], unrepairable: str
) -> None:
    code, out, err = run(capsys, "convert", unrepairable, "--to", "gemini")
    assert (code, out) == (1, "")
    line = one_error_line(err)
    assert "cannot convert: 1 integrity issue that repair cannot fix: orphan-tool-result" in line


def test_convert_with_unsupported_raise(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path / "audio.json", [tl.user_message(tl.file_part(b"RIFF", "audio/wav"))])
    code, out, _ = run(capsys, "convert", path, "--to", "anthropic")
    assert code == 0
    assert "[audio/wav omitted: not supported by anthropic]" in out
    code, out, err = run(capsys, "convert", path, "--to", "anthropic", "--unsupported", "raise")
    assert (code, out) == (1, "")
    assert "audio/wav" in one_error_line(err)


def test_convert_unreadable_input_exits_2(
    capsys: pytest.CaptureFixture[str], unreadable: tuple[str, str]
) -> None:
    path, expected = unreadable
    code, out, err = run(capsys, "convert", path, "--to", "mistral")
    assert (code, out) == (2, "")
    assert expected in one_error_line(err)


def test_jsonable_turns_bytes_into_standard_base64() -> None:
    value = {"a": [b"\xfb\xff", {"b": (b"x",)}], "c": 1, "d": None}
    assert cli.jsonable(value) == {"a": ["+/8=", {"b": ["eA=="]}], "c": 1, "d": None}


# -- show ---------------------------------------------------------------------------------------


def test_show_matches_the_golden_transcript(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path / "trip.json", showcase_history())
    code, out, err = run(capsys, "show", path)
    assert (code, err) == (0, "")
    golden = GOLDEN / "show.txt"
    if os.environ.get("THREADLINE_UPDATE_GOLDEN") == "1":
        golden.write_text(out, encoding="utf-8")
    assert out == golden.read_text(encoding="utf-8")
    assert "\x1b[" not in out


def test_show_full_unfolds(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path / "trip.json", showcase_history())
    code, out, _ = run(capsys, "show", "--full", path)
    assert code == 0
    assert "A second line of thinking." in out
    assert "line 10: " in out
    assert "--full shows all" not in out


def test_show_pairs_results_with_their_calls(capsys: pytest.CaptureFixture[str], good: str) -> None:
    _, out, _ = run(capsys, "show", good)
    assert '  call get_weather {"city": "Paris"}  (c1)\n    <- 18°C, clear\n' in out
    assert "[3] tool" not in out  # every result is shown under its call


def test_show_colours_only_a_terminal_without_no_color(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, good: str
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert "\x1b[" not in run(capsys, "show", good)[1]  # captured: not a terminal
    assert "\x1b[1;36massistant\x1b[0m" in run(capsys, "show", "--color", "always", good)[1]
    assert cli.use_colour(FakeTerminal(), "auto")
    monkeypatch.setenv("NO_COLOR", "1")
    assert not cli.use_colour(FakeTerminal(), "auto")
    assert cli.use_colour(FakeTerminal(), "always")
    monkeypatch.setenv("NO_COLOR", "")  # empty means unset (no-color.org)
    assert cli.use_colour(FakeTerminal(), "auto")
    assert not cli.use_colour(FakeTerminal(), "never")


def test_show_on_a_terminal_is_coloured(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, good: str
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    assert "\x1b[" in run(capsys, "show", good)[1]
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in run(capsys, "show", good)[1]


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_show_a_provider_payload(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "claude.json"
    path.write_text(json.dumps(anthropic_payload()))
    code, out, _ = run(capsys, "show", "--from", "anthropic", str(path))
    assert code == 0
    assert '  call get_weather {"city": "Paris"}  (toolu_01)\n    <- 18°C\n' in out


def test_show_defective_history_marks_the_defects(
    capsys: pytest.CaptureFixture[str], unrepairable: str, defective: str
) -> None:
    code, out, _ = run(capsys, "show", defective)
    assert code == 0
    assert "(no result)" in out
    code, out, _ = run(capsys, "show", unrepairable)
    assert code == 0
    assert "result for call 'c9', which no earlier call made:" in out


def test_show_unreadable_input_exits_2(
    capsys: pytest.CaptureFixture[str], unreadable: tuple[str, str]
) -> None:
    path, expected = unreadable
    code, out, err = run(capsys, "show", path)
    assert (code, out) == (2, "")
    assert expected in one_error_line(err)


# -- stats --------------------------------------------------------------------------------------


def test_stats_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    history = showcase_history()
    path = write(tmp_path / "trip.json", history)
    code, out, err = run(capsys, "stats", "--json", path)
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "source": path,
        "messages": 10,
        "roles": {"system": 1, "user": 2, "assistant": 3, "tool": 3, "internal": 1},
        "parts": {
            "text": 5,
            "reasoning": 2,
            "tool_call": 6,
            "tool_result": 6,
            "file": 1,
            "hook": 1,
            "provider_tool_call": 1,
            "provider_tool_result": 1,
        },
        "estimated_tokens": sum(estimate_tokens(m) for m in history),
        "estimated_tokens_by_role": {
            role: sum(estimate_tokens(m) for m in history if m.role == role)
            for role in ("system", "user", "assistant", "tool", "internal")
        },
        "attachments": {"inline": 1, "inline_bytes": 8, "by_url": 1},
        "usage": {"messages": 0, "total": tl.Usage().to_dict(), "by_model": []},
    }


def test_stats_text(capsys: pytest.CaptureFixture[str], good: str) -> None:
    code, out, _ = run(capsys, "stats", good)
    assert code == 0
    tokens = sum(estimate_tokens(m) for m in good_history())
    lines = out.splitlines()
    assert lines[0] == f"{good}: 5 messages, 7 parts, ~{tokens} tokens, 1 attachment"
    assert any(
        line.split()
        == [
            "assistant",
            "2",
            str(sum(estimate_tokens(m) for m in good_history() if m.role == "assistant")),
        ]
        for line in lines
    )
    assert "attachments: 1 file inline (6 bytes), 0 by URL" in lines


def test_stats_of_defective_and_stdin_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    feed_stdin(monkeypatch, tl.dump_json(unrepairable_history()))
    code, out, _ = run(capsys, "stats", "--json", "-")
    assert code == 0
    assert json.loads(out)["roles"] == {"user": 1, "assistant": 1, "tool": 1}


def test_stats_unreadable_input_exits_2(
    capsys: pytest.CaptureFixture[str], unreadable: tuple[str, str]
) -> None:
    path, expected = unreadable
    code, out, err = run(capsys, "stats", path)
    assert (code, out) == (2, "")
    assert expected in one_error_line(err)


# -- help, python -m, the console script --------------------------------------------------------


@pytest.mark.parametrize("command", ["check", "repair", "convert", "show", "stats", "view"])
def test_each_command_help_shows_an_example(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main([command, "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "examples:\n" in out
    assert f"\n  threadline {command} " in out


def test_a_missing_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main([])
    assert exited.value.code == 2
    assert "usage: threadline" in capsys.readouterr().err


def test_python_dash_m_threadline(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run(
        [sys.executable, "-m", "threadline", "--help"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: threadline ")
    for command in ("check", "repair", "convert", "show", "stats", "view"):
        assert command in result.stdout


def test_the_installed_console_script(tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    script = shutil.which("threadline", path=str(bin_dir))
    if script is None:
        unavailable(
            f"the threadline console script is not installed in {bin_dir} (pip install -e .)"
        )
    path = write(tmp_path / "defective.json", defective_history())
    result = subprocess.run(
        [str(script), "check", path], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1, result.stderr
    assert "missing-tool-result" in result.stdout
    version = subprocess.run(
        [str(script), "--version"], capture_output=True, text=True, timeout=120
    )
    assert version.stdout.strip() == f"threadline {tl.__version__}"
