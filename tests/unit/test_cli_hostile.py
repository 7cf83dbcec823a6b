"""The ``threadline`` command line on hostile files (issue 19, item 9).

Every bad input is one clean error line naming the file (and the line of a JSON Lines file),
with exit status 2, never ``unexpected X``; and no output mode writes a terminal control
sequence, a bidirectional override or a lone surrogate from the file to the terminal.

Commands run in-process with standard output and error as strict UTF-8 streams, as on a real
terminal (pytest's capture would accept a lone surrogate that a terminal cannot take).
"""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

import threadline as tl
from threadline import cli

Run = tuple[int, str, str]

COMMANDS = (
    ["check"],
    ["check", "--json"],
    ["show"],
    ["show", "--full", "--color", "always"],
    ["stats"],
    ["stats", "--json"],
    ["repair"],
    ["convert", "--to", "anthropic"],
)

# What a terminal acts on instead of showing: C0 controls (newline and tab aside), DEL, C1
# controls, bidirectional overrides and isolates; and lone surrogates, which UTF-8 cannot encode.
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
SGR = re.compile(r"\x1b\[[0-9;]*m")


def run(monkeypatch: pytest.MonkeyPatch, *argv: str) -> Run:
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", errors="strict", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="strict", write_through=True)
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "stderr", stderr)
    code = cli.main(list(argv))
    stdout.flush()
    stderr.flush()
    return code, out.getvalue().decode(), err.getvalue().decode()


def clean_error(err: str, *expected: str) -> str:
    """The one error line, after checking it is clean and names what it should."""
    lines = err.splitlines()
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith("threadline: error: "), line
    assert not re.search(r"unexpected [A-Z]\w+", line), line
    assert not UNSAFE.search(line), line
    for text in expected:
        assert text in line, line
    return line


# -- integers longer than Python reads -------------------------------------------------------

BIG = "9" * 5000
MESSAGE = '{"id": "m%d", "role": "user", "parts": [{"type": "text", "text": "hi"}]}'
WITH_BIG = (
    '{"id": "big", "role": "internal", "parts": [{"type": "hook", "name": "h", '
    '"state": {"n": BIG}}]}'
).replace("BIG", BIG)


def big_int_inputs(tmp_path: Path) -> list[tuple[list[str], str, str]]:
    """(options, path, where the error must point) for each way a file can be read."""
    cases: list[tuple[list[str], str, str]] = []

    def add(name: str, text: str, where: str, *options: str) -> None:
        path = tmp_path / name
        path.write_text(text)
        cases.append(([*options, str(path)], str(path), where.format(path=path)))

    add("history.json", f"[{MESSAGE % 0}, {WITH_BIG}]", "{path}:1")  # one line: JSON Lines
    add(
        "pretty.json",
        '{"format": "threadline", "version": 1,\n"messages": [' + WITH_BIG + "]}\n",
        "{path}",
    )
    add("one.json", WITH_BIG, "{path}:1")
    add("conv.jsonl", f"{MESSAGE % 0}\n{MESSAGE % 1}\n{WITH_BIG}\n{MESSAGE % 3}\n", "{path}:3")
    add("first.jsonl", f"{WITH_BIG}\n{MESSAGE % 1}\n", "{path}:1")
    add(
        "openai.json",
        '{"messages": [{"role": "user", "content": "hi"}], "n": BIG}'.replace("BIG", BIG),
        "{path}",
        "--from",
        "openai_chat",
    )
    return cases


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_an_integer_over_4300_digits_is_a_clean_input_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: list[str]
) -> None:
    for options, path, where in big_int_inputs(tmp_path):
        code, out, err = run(monkeypatch, *command, *options)
        assert (code, out) == (2, ""), (path, err)
        line = clean_error(err, f"{where}: ")
        assert "digits" in line or "number out of range" in line, line


# -- lone surrogates -------------------------------------------------------------------------

SURROGATE_TEXT = '{"id": "s", "role": "user", "parts": [{"type": "text", "text": "a\\ud800b"}]}'
SURROGATE_KEY = (
    '{"id": "k", "role": "assistant", "parts": [{"type": "tool_call", "id": "c", '
    '"name": "f", "arguments": {"k\\udfff": 1}}]}'
)


def surrogate_inputs(tmp_path: Path) -> list[tuple[list[str], str, str]]:
    cases: list[tuple[list[str], str, str]] = []

    def add(name: str, text: str, where: str, *options: str) -> None:
        path = tmp_path / name
        path.write_text(text)
        cases.append(([*options, str(path)], str(path), where.format(path=path)))

    add("conv.jsonl", f"{MESSAGE % 0}\n{SURROGATE_TEXT}\n", "{path}:2")
    add("key.jsonl", f"{MESSAGE % 0}\n{MESSAGE % 1}\n{SURROGATE_KEY}\n", "{path}:3")
    add("batch.jsonl", f"[{MESSAGE % 0}, {SURROGATE_TEXT}]\n", "{path}")  # read as a document
    add("one.json", SURROGATE_TEXT, "{path}")
    add("history.json", f"[{MESSAGE % 0}, {SURROGATE_KEY}]", "{path}")
    add(
        "openai.json",
        '{"messages": [{"role": "user", "content": "a\\ud800b"}]}',
        "{path}",
        "--from",
        "openai_chat",
    )
    add(
        "anthropic.json",
        '{"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}], '
        '"system": "\\udc00"}',
        "{path}",
        "--from",
        "anthropic",
    )
    return cases


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_lone_surrogate_is_a_clean_input_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: list[str]
) -> None:
    for options, path, where in surrogate_inputs(tmp_path):
        code, out, err = run(monkeypatch, *command, *options)
        assert (code, out) == (2, ""), (path, err)
        clean_error(err, f"{where}: ")


def test_a_lone_surrogate_error_says_where_and_what(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "conv.jsonl"
    path.write_text(f"{MESSAGE % 0}\n{SURROGATE_KEY}\n")
    code, _, err = run(monkeypatch, "show", str(path))
    assert code == 2
    clean_error(err, f"{path}:2: ", "surrogate", "\\udfff")


# -- terminal escapes ------------------------------------------------------------------------

# An OSC title change ending in BEL, a screen clear, a CSI in its one-byte C1 form, DEL, a
# right-to-left override, an isolate, a carriage return, NUL and backspace.
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x9b31m\x7f\u202e\u2066\r\x00\x08"


def hostile_history(*, orphan: bool = True) -> list[tl.Message]:
    """The hostile text in every string ``show`` and the other commands print; with an orphan
    result (which ``repair`` and ``convert`` refuse) unless ``orphan`` is false."""
    h = HOSTILE
    messages = [
        tl.system_message("rules" + h, id="s" + h),
        tl.user_message(
            "hi" + h + "\nline two\twith a tab",
            tl.file_part("https://example.com/a" + h, "image/png", filename="f" + h),
            id="u" + h,
        ),
        tl.assistant_message(
            tl.reasoning_part("think" + h + "\nmore", provider="p" + h, model="m" + h),
            tl.tool_call_part("c" + h, "name" + h, {"k" + h: "v" + h}),
            tl.tool_call_part("d" + h, "raw" + h, "not json" + h),
            tl.tool_call_part("e" + h, "pending" + h, {}),
            id="a" + h,
        ),
        tl.tool_message(
            tl.tool_result_part("c" + h, "result" + h, name="name" + h),
            tl.tool_result_part(
                "d" + h,
                (tl.text_part("t" + h), tl.file_part(b"x", "image/png", filename="g" + h)),
            ),
            *([tl.tool_result_part("orphan" + h, "nobody asked" + h, is_error=True)] * orphan),
            id="t" + h,
        ),
        tl.internal_message(tl.hook_part("h" + h, {"s" + h: ["v" + h]}), id="i" + h),
        tl.assistant_message(
            tl.ProviderToolCallPart(
                id="p" + h, name="web" + h, input={"q" + h: h}, provider="anthropic"
            ),
            tl.ProviderToolResultPart(
                call_id="p" + h, content=[{"t" + h: h}], provider="anthropic"
            ),
            id="b" + h,
        ),
    ]
    return messages


@pytest.fixture
def hostile(tmp_path: Path) -> str:
    path = tmp_path / "hostile.json"
    path.write_bytes(tl.dump_json(hostile_history()))
    return str(path)


@pytest.fixture
def repairable(tmp_path: Path) -> str:
    path = tmp_path / "repairable.json"
    path.write_bytes(tl.dump_json(hostile_history(orphan=False)))
    return str(path)


@pytest.mark.parametrize("full", [[], ["--full"]], ids=["folded", "full"])
def test_show_escapes_what_a_terminal_would_act_on(
    monkeypatch: pytest.MonkeyPatch, hostile: str, full: list[str]
) -> None:
    code, plain, err = run(monkeypatch, "show", "--color", "never", *full, hostile)
    assert (code, err) == (0, "")
    assert not UNSAFE.search(plain), [m.group() for m in UNSAFE.finditer(plain)]
    assert "\x1b" not in plain
    # Shown, not dropped: each escaped the way Python writes it.
    assert "u\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\x7f\\u202e\\u2066\\r\\x00\\x08" in plain
    # Newlines and tabs in content lay the text out; in an id they would forge a header.
    assert "  line two\twith a tab\n" in plain
    code, coloured, _ = run(monkeypatch, "show", "--color", "always", *full, hostile)
    assert code == 0
    assert SGR.search(coloured)
    assert SGR.sub("", coloured) == plain


def test_show_prints_a_crlf_text_as_lines(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "crlf.json"
    path.write_bytes(tl.dump_json([tl.user_message("one\r\ntwo\rthree", id="u")]))
    code, out, _ = run(monkeypatch, "show", str(path))
    assert code == 0
    assert out == "[0] user  u\n  one\n  two\\rthree\n"


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_no_command_writes_a_control_character_from_the_file(
    monkeypatch: pytest.MonkeyPatch, hostile: str, repairable: str, command: list[str]
) -> None:
    for path in (hostile, repairable):
        code, out, err = run(monkeypatch, *command, path)
        assert code in (0, 1), err
        if "always" in command:
            out = SGR.sub("", out)
        for stream in (out, err):
            assert not UNSAFE.search(stream), [m.group() for m in UNSAFE.finditer(stream)]
        if code == 0 and ("--json" in command or command[0] in ("repair", "convert")):
            json.loads(out)  # escaped inside JSON strings: still the same JSON
    if command[0] != "check":
        assert code == 0, err  # the repairable one is repaired and converted


def test_repair_output_keeps_the_content_it_escapes(
    monkeypatch: pytest.MonkeyPatch, repairable: str, tmp_path: Path
) -> None:
    hostile = repairable
    code, out, _ = run(monkeypatch, "repair", hostile)
    assert code == 0
    written = tmp_path / "fixed.json"
    assert run(monkeypatch, "repair", hostile, "-o", str(written))[0] == 0
    assert tl.load_json(out) == tl.load_json(written.read_bytes())
    assert any(HOSTILE in m.id for m in tl.load_json(out))


def test_an_error_about_the_file_is_escaped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "x", "role": "user" + HOSTILE, "parts": []}) + "\n")
    code, _, err = run(monkeypatch, "check", str(path))
    assert code == 2
    clean_error(err, f"{path}:1: ")


def test_a_file_name_is_escaped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "name\x1b[2J\u202e.json"
    path.write_bytes(tl.dump_json([tl.user_message("hi", id="u")]))
    for command in (["check"], ["stats"], ["check", "--json"], ["stats", "--json"]):
        code, out, err = run(monkeypatch, *command, str(path))
        assert (code, err) == (0, "")
        assert not UNSAFE.search(out)
        assert "name\\x1b[2J\\u202e.json" in out or "name\\u001b[2J\\u202e.json" in out
    code, _, err = run(monkeypatch, "check", str(path) + "\x9b")
    assert code == 2
    clean_error(err, "cannot read")
