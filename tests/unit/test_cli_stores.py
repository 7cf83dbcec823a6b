"""The command line on stores (issue 42, item 4): ``--store URL --conversation ID`` for every
command, ``repair --write-back``, ``list`` and the usage ``stats`` reports.

SQLite, JSON Lines and ``memory:`` run here always; Redis and PostgreSQL against the shared
servers are in ``test_cli_store_servers.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.strategies import extreme_conversation_ids
from tests.support import examples
from tests.unit.test_cli import defective_history
from tests.unit.test_cli import good_history
from tests.unit.test_cli import one_error_line
from tests.unit.test_cli import run
from tests.unit.test_cli import showcase_history
from tests.unit.test_cli import unrepairable_history
from threadline import cli
from threadline._cli import commands
from threadline._cli import stores as cli_stores
from threadline._cli.reading import Loaded
from threadline.stores import JsonlStore
from threadline.stores import MemoryStore
from threadline.stores import SQLiteStore
from threadline.stores import Store

SCHEMES = ("sqlite", "jsonl", "memory")


class Stored:
    """A store the command line reads by ``url``, and the store itself to fill and inspect."""

    def __init__(self, url: str, store: Store) -> None:
        self.url = url
        self.store = store

    def fill(self, cid: str, messages: Sequence[tl.Message]) -> str:
        self.store.append(cid, messages)
        return cid


@pytest.fixture(params=SCHEMES)
def stored(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Stored]:
    scheme = request.param
    if scheme == "sqlite":
        store: Store = SQLiteStore(tmp_path / "app.db")
        store.list_conversations()  # creates the file: the command line creates none
        yield Stored(f"sqlite:///{tmp_path / 'app.db'}", store)
        store.close()  # type: ignore[attr-defined]
    elif scheme == "jsonl":
        yield Stored(
            f"jsonl:///{tmp_path / 'conversations'}", JsonlStore(tmp_path / "conversations")
        )
    else:
        memory = MemoryStore()  # this test's own: memory: opens it
        monkeypatch.setattr(cli_stores, "_MEMORY", memory)
        yield Stored("memory:", memory)


def store_args(stored: Stored, cid: str) -> list[str]:
    return ["--store", stored.url, "--conversation", cid]


# -- every command reads a stored conversation as it reads the file -----------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["show", "--color", "never"],
        ["show", "--full", "--color", "never"],
        ["convert", "--to", "anthropic"],
        ["convert", "--to", "gemini"],
        ["repair"],
    ],
)
def test_a_command_prints_the_same_from_a_store_as_from_the_file(
    capsys: pytest.CaptureFixture[str], stored: Stored, tmp_path: Path, command: list[str]
) -> None:
    history = showcase_history() if command[0] == "show" else defective_history()
    path = tmp_path / "history.json"
    path.write_bytes(tl.dump_json(history))
    cid = stored.fill("trip-1", history)
    from_file = run(capsys, *command, str(path))
    from_store = run(capsys, *command, *store_args(stored, cid))
    assert from_store[:2] == from_file[:2]
    assert from_file[0] == 0
    assert from_file[1]


@pytest.mark.parametrize("command", [["check", "--json"], ["stats", "--json"]])
def test_json_reports_from_a_store_name_the_conversation_and_store(
    capsys: pytest.CaptureFixture[str], stored: Stored, tmp_path: Path, command: list[str]
) -> None:
    history = defective_history()
    path = tmp_path / "history.json"
    path.write_bytes(tl.dump_json(history))
    cid = stored.fill("c-1", history)
    code_file, out_file, _ = run(capsys, *command, str(path))
    code, out, err = run(capsys, *command, *store_args(stored, cid))
    assert (code, err) == (code_file, "")
    report, expected = json.loads(out), json.loads(out_file)
    assert report.pop("source") == f"c-1 in {stored.url}"
    expected.pop("source")
    assert report == expected


def test_check_of_a_stored_conversation_says_how_to_repair_it(
    capsys: pytest.CaptureFixture[str], stored: Stored
) -> None:
    cid = stored.fill("c-1", defective_history())
    code, out, _ = run(capsys, "check", *store_args(stored, cid))
    assert code == 1
    assert out.splitlines()[0] == f"c-1 in {stored.url}: 1 integrity issue in 3 messages"
    assert "--conversation c-1 --write-back" in out


def test_an_sqlite_url_is_relative_with_three_slashes_and_absolute_with_four(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SQLiteStore(tmp_path / "app.db") as store:
        store.append("c1", good_history())
    monkeypatch.chdir(tmp_path)
    for url in ("sqlite:///app.db", f"sqlite:///{tmp_path}/app.db"):
        assert tmp_path.is_absolute()
        code, out, err = run(capsys, "stats", "--store", url, "--conversation", "c1")
        assert (code, err) == (0, ""), url
        assert out.startswith(f"c1 in {url}: 5 messages")


# -- errors: one line, exit 2, naming the fix ---------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["check"],
            "no input: give FILE ('-' for standard input) or --store URL --conversation ID",
        ),
        (["check", "x.json", "--store", "memory:", "--conversation", "c"], "not both"),
        (["check", "x.json", "--conversation", "c"], "--conversation needs --store URL"),
        (["check", "--store", "memory:"], "--store needs --conversation ID"),
        (
            ["show", "--store", "memory:", "--conversation", "c", "--from", "anthropic"],
            "drop --from",
        ),
        (["check", "--store", "ftp://host/x", "--conversation", "c"], "unknown store scheme 'ftp'"),
        (["check", "--store", "app.db", "--conversation", "c"], "write sqlite:///app.db"),
        (["check", "--store", "memory://x", "--conversation", "c"], "write memory: alone"),
        (["check", "--store", "sqlite://", "--conversation", "c"], "write sqlite:///PATH"),
        (["check", "--store", "jsonl:///d?x=1", "--conversation", "c"], "takes no '?' or '#'"),
        (["check", "--store", "memory:", "--conversation", "nope"], "no conversation nope in"),
        (["repair", "x.json", "--write-back"], "--write-back replaces the stored conversation"),
        (
            ["repair", "--store", "memory:", "--conversation", "c", "--write-back", "-o", "f"],
            "give one of them",
        ),
        (["list"], "list needs --store URL"),
        (["list", "--store", "redis://h/0?cluster=maybe"], "cluster= takes true or false"),
        (["list", "--store", "redis://h/0?prefix=a:&prefix=b:"], "prefix= is given twice"),
    ],
)
def test_bad_store_arguments_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert expected in one_error_line(err)


def test_an_sqlite_file_without_a_store_is_left_as_it_is(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import sqlite3

    with contextlib.closing(sqlite3.connect(tmp_path / "app.db")) as connection:
        connection.execute("CREATE TABLE users (id INTEGER)")
    (tmp_path / "notes.txt").write_text("not a database")
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    for name, expected in [
        ("app.db", "holds no threadline store"),
        ("notes.txt", "is not an SQLite database"),
    ]:
        code, out, err = run(capsys, "list", "--store", f"sqlite:///{tmp_path}/{name}")
        assert (code, out) == (2, "")
        assert expected in one_error_line(err)
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


def test_a_missing_file_or_directory_is_not_created(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for url in (f"sqlite:///{tmp_path}/none.db", f"jsonl:///{tmp_path}/none"):
        code, _, err = run(capsys, "show", "--store", url, "--conversation", "c1")
        assert code == 2
        assert "no SQLite file at" in err or "no JsonlStore directory at" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "hostile",
    ["a\x1b[2Jb", "\u202eevil", "a/../../etc", "x" * 100_000, "", "-"],
    ids=["escape", "bidi", "path", "huge", "empty", "dash"],
)
def test_a_hostile_conversation_id_is_refused_in_one_short_escaped_line(
    capsys: pytest.CaptureFixture[str], hostile: str
) -> None:
    for argv in (
        ["check", "--store", "memory:", "--conversation", hostile],
        ["list", "--store", "memory:", "--after", hostile],
    ):
        code, out, err = run(capsys, *argv)
        assert (code, out) == (2, "")
        line = one_error_line(err)
        assert "is not a conversation id" in line
        assert len(line) < 600
        assert "\x1b" not in line
        assert "\u202e" not in line


@pytest.mark.parametrize(
    "url",
    [
        "redis://alice:s3cret-pw@127.0.0.1:1/0",
        "rediss://:s3cret-pw@127.0.0.1:1/0?prefix=p:",
        "postgresql://alice:s3cret-pw@127.0.0.1:1/db",
        "postgres://127.0.0.1:1/db?password=s3cret-pw&connect_timeout=5",
    ],
)
@pytest.mark.parametrize("command", ["check", "list"])
def test_credentials_in_a_store_url_are_never_printed(
    capsys: pytest.CaptureFixture[str], url: str, command: str
) -> None:
    pytest.importorskip("redis" if url.startswith("redis") else "psycopg")
    argv = [command, "--store", url] + (["--conversation", "c1"] if command == "check" else [])
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert "***" in one_error_line(err)
    assert "s3cret" not in out + err
    assert "alice" not in out + err
    code, out, err = run(capsys, "--debug", *argv)  # the traceback too
    assert code == 2
    assert "Traceback" in err
    assert "s3cret" not in out + err
    assert "alice" not in out + err


@pytest.mark.parametrize(
    ("module", "url", "extra"),
    [
        ("redis", "redis://127.0.0.1:1/0", "redis"),
        ("psycopg", "postgresql://127.0.0.1:1/db", "postgres"),
    ],
)
def test_a_missing_driver_names_the_extra(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    module: str,
    url: str,
    extra: str,
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    for loaded in [name for name in sys.modules if name.startswith("threadline.stores.")]:
        if loaded.split(".")[-1].startswith(("redis", "_redis", "postgres", "_postgres")):
            monkeypatch.delitem(sys.modules, loaded)
    code, _, err = run(capsys, "list", "--store", url)
    assert code == 2
    assert f'pip install "threadline[{extra}]"' in one_error_line(err)


# -- repair --write-back ------------------------------------------------------------------------


def test_repair_write_back_replaces_the_conversation_atomically(
    capsys: pytest.CaptureFixture[str], stored: Stored
) -> None:
    cid = stored.fill("c-1", defective_history())
    before = stored.store.version(cid)
    code, out, err = run(capsys, "repair", *store_args(stored, cid), "--write-back")
    assert (code, err) == (0, "")
    assert f"replaced the stored conversation with 3 messages (version {before} to" in out
    messages = stored.store.load(cid)
    assert tl.check_messages(messages).ok
    assert [m.id for m in messages] == ["u1", "a1", "a1:results"]
    assert stored.store.version(cid) == before + 1
    code, out, _ = run(capsys, "check", *store_args(stored, cid))
    assert code == 0


def test_repair_write_back_writes_nothing_when_nothing_needs_repair(
    capsys: pytest.CaptureFixture[str], stored: Stored
) -> None:
    cid = stored.fill("c-1", good_history())
    before = stored.store.version(cid)
    code, out, _ = run(capsys, "repair", *store_args(stored, cid), "--write-back")
    assert code == 0
    assert "nothing to repair; the store was not written" in out
    assert stored.store.version(cid) == before


def test_repair_write_back_refuses_when_another_writer_came_first(
    capsys: pytest.CaptureFixture[str], stored: Stored, monkeypatch: pytest.MonkeyPatch
) -> None:
    cid = stored.fill("c-1", defective_history())
    late = tl.user_message("written meanwhile", id="late")

    def load_then_someone_writes(args: argparse.Namespace) -> Loaded:
        loaded = cli_stores.load_source(args)
        stored.store.append(cid, [late])
        return loaded

    monkeypatch.setattr(commands, "load_source", load_then_someone_writes)
    code, out, err = run(capsys, "repair", *store_args(stored, cid), "--write-back")
    assert (code, out) == (2, "")
    assert "written since it was read" in one_error_line(err)
    assert stored.store.load(cid) == [*defective_history(), late]


@pytest.mark.parametrize(
    ("history", "code", "expected"),
    [
        (unrepairable_history(), 1, "nothing was written"),
        ([tl.internal_message(tl.hook_part("ui", {}), id="i1")], 1, "deletes it; nothing"),
    ],
    ids=["unrepairable", "emptied"],
)
def test_repair_write_back_leaves_the_store_alone_when_it_cannot_repair(
    capsys: pytest.CaptureFixture[str],
    stored: Stored,
    history: list[tl.Message],
    code: int,
    expected: str,
) -> None:
    cid = stored.fill("c-1", history)
    before = stored.store.version(cid)
    got, out, err = run(capsys, "repair", *store_args(stored, cid), "--write-back")
    assert (got, out) == (code, "")
    assert expected in one_error_line(err)
    assert stored.store.version(cid) == before
    assert stored.store.load(cid) == history


def test_repair_of_a_stored_conversation_writes_to_a_file_by_default(
    capsys: pytest.CaptureFixture[str], stored: Stored, tmp_path: Path
) -> None:
    cid = stored.fill("c-1", defective_history())
    before = stored.store.version(cid)
    out_path = tmp_path / "fixed.json"
    code, _, _ = run(capsys, "repair", *store_args(stored, cid), "-o", str(out_path))
    assert code == 0
    assert tl.check_messages(tl.load_json(out_path.read_bytes())).ok
    assert stored.store.version(cid) == before


# -- list ---------------------------------------------------------------------------------------


def test_list_prints_each_id_with_its_counts_and_the_next_cursor(
    capsys: pytest.CaptureFixture[str], stored: Stored
) -> None:
    for cid in ("b", "a", "c"):
        stored.fill(cid, good_history()[: 1 + ord(cid) - ord("a")])
    code, out, err = run(capsys, "list", "--store", stored.url, "--limit", "2")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["id", "messages", "version", "updated"]
    assert [line.split()[:3] for line in lines[1:3]] == [["a", "1", "1"], ["b", "2", "1"]]
    assert lines[3].endswith("--after b --limit 2")
    code, out, _ = run(capsys, "list", "--store", stored.url, "--limit", "2", "--after", "b")
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["c"]


def test_list_json(capsys: pytest.CaptureFixture[str], stored: Stored) -> None:
    stored.fill("a", good_history())
    stored.store.fork("a", "b", at=2)
    code, out, _ = run(capsys, "list", "--store", stored.url, "--json", "--limit", "1")
    assert code == 0
    page = json.loads(out)
    assert page["store"] == stored.url
    assert page["next_after"] == "a"
    [row] = page["conversations"]
    assert {key: row[key] for key in ("id", "messages", "version", "parent")} == {
        "id": "a",
        "messages": 5,
        "version": 1,
        "parent": None,
    }
    code, out, _ = run(capsys, "list", "--store", stored.url, "--json", "--after", "a")
    page = json.loads(out)
    assert page["next_after"] is None
    assert page["conversations"][0]["parent"] == {"conversation_id": "a", "at": 2}


def test_list_of_an_empty_store(capsys: pytest.CaptureFixture[str], stored: Stored) -> None:
    code, out, _ = run(capsys, "list", "--store", stored.url)
    assert (code, out) == (0, f"{stored.url}: no conversations\n")


@pytest.mark.parametrize("limit", ["0", "-1", "10001", "many"])
def test_list_limit_must_be_a_page_size(capsys: pytest.CaptureFixture[str], limit: str) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["list", "--store", "memory:", "--limit", limit])
    assert exited.value.code == 2
    assert "expected a whole number from 1 to 10,000" in capsys.readouterr().err


def _json_run(argv: list[str]) -> dict[str, object]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(argv) == 0
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


@settings(max_examples=examples(50), deadline=None)
@given(
    ids=st.lists(
        st.one_of(
            extreme_conversation_ids(),
            st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,6}", fullmatch=True),
        ),
        max_size=30,
        unique=True,
    ).map(lambda ids: [cid for cid in ids if ".." not in cid]),
    limit=st.integers(1, 12),
)
def test_list_pages_cover_every_id_exactly_once(ids: list[str], limit: int) -> None:
    memory = MemoryStore()
    for cid in ids:
        memory.append(cid, [tl.user_message("hi", id="m1")])
    seen: list[str] = []
    after: str | None = None
    with _memory(memory):
        for _ in range(len(ids) + 2):  # a cursor that never ends fails, not hangs
            argv = ["list", "--store", "memory:", "--json", "--limit", str(limit)]
            page = _json_run(argv + ([] if after is None else ["--after", after]))
            rows = page["conversations"]
            assert isinstance(rows, list)
            assert len(rows) <= limit
            seen += [row["id"] for row in rows]
            after = page["next_after"]  # type: ignore[assignment]
            if after is None:
                break
    assert seen == sorted(ids)


@contextlib.contextmanager
def _memory(store: MemoryStore) -> Iterator[None]:
    saved = cli_stores._MEMORY
    cli_stores._MEMORY = store
    try:
        yield
    finally:
        cli_stores._MEMORY = saved


# -- stats: the usage the messages recorded -----------------------------------------------------


def _answer(text: str, model: str | None, **counts: int) -> tl.Message:
    usage = tl.Usage(**counts).to_dict()
    metadata: dict[str, object] = {"usage": usage, "provider": "anthropic"}
    if model is not None:
        metadata["model"] = model
    return tl.assistant_message(text, id=f"a-{text}").with_metadata(metadata)


def _usage_history() -> list[tl.Message]:
    return [
        tl.user_message("q1", id="u1"),
        _answer("r1", "claude-x", input_tokens=100, output_tokens=20, cache_read_tokens=80),
        tl.user_message("q2", id="u2"),
        _answer("r2", "gpt-y", input_tokens=50, output_tokens=10, reasoning_tokens=4),
        tl.user_message("q3", id="u3"),
        _answer("r3", "claude-x", input_tokens=30, output_tokens=5, cache_write_tokens=30),
        _answer("r4", None, input_tokens=1, output_tokens=1),
        tl.assistant_message("no usage", id="a5"),
    ]


def test_stats_json_reports_recorded_usage_by_model(
    capsys: pytest.CaptureFixture[str], stored: Stored
) -> None:
    cid = stored.fill("c-1", _usage_history())
    code, out, _ = run(capsys, "stats", "--json", *store_args(stored, cid))
    assert code == 0
    usage = json.loads(out)["usage"]
    assert usage == {
        "messages": 4,
        "total": tl.Usage(
            input_tokens=181,
            output_tokens=36,
            cache_read_tokens=80,
            cache_write_tokens=30,
            reasoning_tokens=4,
        ).to_dict(),
        "by_model": [
            {
                "model": "claude-x",
                "messages": 2,
                **tl.Usage(
                    input_tokens=130, output_tokens=25, cache_read_tokens=80, cache_write_tokens=30
                ).to_dict(),
            },
            {
                "model": "gpt-y",
                "messages": 1,
                **tl.Usage(input_tokens=50, output_tokens=10, reasoning_tokens=4).to_dict(),
            },
            {"model": None, "messages": 1, **tl.Usage(input_tokens=1, output_tokens=1).to_dict()},
        ],
    }
    assert (
        usage["total"]
        == sum(filter(None, (m.usage for m in _usage_history())), tl.Usage()).to_dict()
    )


def test_stats_text_shows_the_usage_table_beside_the_estimate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    history = _usage_history()
    history.append(_answer("evil", "\x1b[31mred\u202e", input_tokens=2))
    path = tmp_path / "h.json"
    path.write_bytes(tl.dump_json(history))
    code, out, _ = run(capsys, "stats", str(path))
    assert code == 0
    assert "~" in out.splitlines()[0]  # the estimate stays
    table = out[out.index("usage recorded by 5 messages") :].splitlines()
    assert table[1].split() == [
        "model",
        "messages",
        "input",
        "output",
        "cache",
        "read",
        "cache",
        "write",
        "reasoning",
    ]
    assert table[2].split() == ["claude-x", "2", "130", "25", "80", "30", "0"]
    assert table[4].split()[:4] == ["(model", "not", "recorded)", "1"]
    assert "\\x1b[31mred\\u202e" in table[5]
    assert table[6].split() == ["total", "5", "183", "36", "80", "30", "4"]
    assert "\x1b" not in out


def test_stats_says_when_no_usage_was_recorded(
    capsys: pytest.CaptureFixture[str], stored: Stored
) -> None:
    cid = stored.fill("c-1", good_history())
    code, out, _ = run(capsys, "stats", *store_args(stored, cid))
    assert code == 0
    assert out.splitlines()[-1] == 'usage recorded: none (no message holds metadata["usage"])'


# -- the options are one group any command can take ---------------------------------------------


def test_every_reading_command_takes_the_store_options() -> None:
    parser = cli.build_parser()
    [subparsers] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert {"check", "repair", "convert", "show", "stats", "list"} <= set(subparsers.choices)
    for name, command in subparsers.choices.items():
        options = {option for action in command._actions for option in action.option_strings}
        assert "--store" in options, name
        assert ("--conversation" in options) == (name != "list"), name


def test_the_helper_adds_the_group_to_any_parser() -> None:
    parser = argparse.ArgumentParser()
    cli.add_store_options(parser)
    args = parser.parse_args(["--store", "memory:", "--conversation", "c"])
    assert (args.store, args.conversation) == ("memory:", "c")
    assert vars(commands)["load_source"] is cli_stores.load_source


def test_view_of_a_stored_conversation_checks_its_seal_against_the_stored_id(
    capsys: pytest.CaptureFixture[str], stored: Stored, tmp_path: Path
) -> None:
    history = showcase_history()
    cid = stored.fill("trip-1", history)
    key = b"k" * 32
    seal = tl.seal(history, key, conversation_id=cid)
    page = tmp_path / "page.html"
    argv = ["view", *store_args(stored, cid), "-o", str(page), "--seal", seal]
    code, out, _ = run(capsys, *argv, "--seal-key", "hex:" + key.hex())
    assert code == 0, out
    assert "seal verified" in out
    assert "seal verified" in page.read_text(encoding="utf-8")
    # An explicit --seal-conversation wins: the seal was not made for that id.
    code, out, _ = run(capsys, *argv, "--seal-key", "hex:" + key.hex(), "--seal-conversation", "x")
    assert code == 1
