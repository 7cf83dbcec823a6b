"""One descriptor per wire format (issue 38, item 1): every registered format has every piece,
the registry holds nothing of any one format, and the test-side tables that are oracles rather
than enumerations cover every registered format.

A format added to ``threadline.codecs._formats`` without one of its pieces fails
``test_every_descriptor_has_every_piece[<format>-<piece>]``, which names the piece.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from threadline.codecs import codec_names
from threadline.codecs import get_codec
from threadline.codecs._formats import DESCRIPTORS
from threadline.codecs._formats import OPENAI_CHAT
from threadline.codecs._formats import FormatDescriptor
from threadline.codecs._formats import Ref
from threadline.codecs._formats import descriptor
from threadline.codecs._sniff import format_label
from threadline.codecs._stream_base import Builder
from threadline.codecs._structured import NativeOutput
from threadline.codecs._tool_names import ToolNameRule
from threadline.messages import Message
from threadline.messages import TextPart

SRC = Path(tl.__file__).parent


def _codec_functions(d: FormatDescriptor) -> None:
    codec = d.codec()
    for name in ("encode", "decode", "decode_response"):
        assert callable(getattr(codec, name, None)), f"{d.module} has no {name}"


def _label(d: FormatDescriptor) -> None:
    assert d.label == d.codec().FORMAT, "the label is the module's FORMAT"


def _provider(d: FormatDescriptor) -> None:
    assert d.provider == d.codec().PROVIDER, "the provider tag is the module's PROVIDER"


def _tool_names(d: FormatDescriptor) -> None:
    assert isinstance(d.codec().TOOL_NAMES, ToolNameRule)


def _request_fields(d: FormatDescriptor) -> None:
    assert len(inspect.signature(d.request_fields.load()).parameters) == 2


def _output_schema(d: FormatDescriptor) -> None:
    # every registered format has structured output (None is for a format that has none)
    assert d.output_schema is not None
    assert len(inspect.signature(d.output_schema.load()).parameters) == 2


def _forced_tool(d: FormatDescriptor) -> None:
    if d.forced_tool is not None:
        native = d.forced_tool.load()
        assert isinstance(native, NativeOutput)
        assert native.name in d.label, "the API named in errors"


def _usage_reader(d: FormatDescriptor) -> None:
    assert len(inspect.signature(d.usage_reader.load()).parameters) == 1


def _stream_builder(d: FormatDescriptor) -> None:
    builder = d.stream_builder.load()()
    assert isinstance(builder, Builder)
    assert builder.provider == d.name


def _sniffing(d: FormatDescriptor) -> None:
    assert d.sniffs_as in DESCRIPTORS


def _declared_losses(d: FormatDescriptor) -> None:
    assert callable(d.round_trip.load())


def _cache_marks(d: FormatDescriptor) -> None:
    if d.cache is not None:
        assert d.cache.key.startswith(f"{d.name}."), "a part metadata key of the format"
        writer = d.cache.writer.load()()
        for method in ("add", "count", "marks"):
            assert callable(getattr(writer, method, None)), f"the cache writer has no {method}"


def _encode_request(d: FormatDescriptor) -> None:
    if d.encode_request is not None:
        assert len(inspect.signature(d.encode_request.load()).parameters) == 3


def _incremental(d: FormatDescriptor) -> None:
    """A format encoded incrementally names the body field holding its turns; a segment
    check takes a message list."""
    if d.turns is not None:
        body = d.codec().encode([Message(role="user", parts=(TextPart(text="Hi."),))])
        assert isinstance(body.get(d.turns), list), f"encode's body has no {d.turns!r} list"
    if d.segment_check is not None:
        assert d.segment_check.load()([]) is True


PIECES: dict[str, Callable[[FormatDescriptor], None]] = {
    "codec functions": _codec_functions,
    "label": _label,
    "provider tag": _provider,
    "tool name rule": _tool_names,
    "request fields": _request_fields,
    "output schema": _output_schema,
    "forced tool (native output)": _forced_tool,
    "usage reader": _usage_reader,
    "stream builder": _stream_builder,
    "sniffing": _sniffing,
    "declared losses": _declared_losses,
    "encode_request hook": _encode_request,
    "cache marks": _cache_marks,
    "incremental encoding": _incremental,
}


@pytest.mark.parametrize("piece", sorted(PIECES))
@pytest.mark.parametrize("name", codec_names())
def test_every_descriptor_has_every_piece(name: str, piece: str) -> None:
    PIECES[piece](DESCRIPTORS[name])


def test_the_descriptor_checks_cover_every_field() -> None:
    # a field added to FormatDescriptor needs a check above (or is one of the plain names)
    plain = {"name", "module", "strict"}
    checked = {
        "label",
        "provider",
        "request_fields",
        "output_schema",
        "forced_tool",
        "usage_reader",
        "stream_builder",
        "sniffs_as",
        "encode_request",
        "cache",
        "turns",
        "segment_check",
    }
    assert {field.name for field in dataclasses.fields(FormatDescriptor)} == plain | checked


def test_the_registry_is_the_descriptor_table() -> None:
    assert codec_names() == tuple(sorted(DESCRIPTORS))
    for name, d in DESCRIPTORS.items():
        assert d.name == name
        assert get_codec(name) is d.codec()
        assert format_label(name) == d.label
    assert descriptor("cohere") is None
    assert descriptor(None) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "module",
    [
        "codecs/_caching.py",
        "codecs/_reading.py",
        "codecs/_registry.py",
        "codecs/_requests.py",
        "codecs/_sniff.py",
        "codecs/_structured.py",
        "streaming.py",
    ],
)
def test_dispatching_modules_name_no_format_outside_their_docs(module: str) -> None:
    """The registry and the tables it replaced branch on no format's name: a format name
    compared with or keyed in a dict would be a per-format table again."""
    tree = ast.parse((SRC / module).read_text(encoding="utf-8"))
    named = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                if isinstance(operand, ast.Constant) and operand.value in DESCRIPTORS:
                    named.append((node.lineno, operand.value))
        if isinstance(node, ast.Dict):
            for key in node.keys:
                if isinstance(key, ast.Constant) and key.value in DESCRIPTORS:
                    named.append((node.lineno, key.value))
    # _sniff's guesses return format names, but never branch on one
    assert named == []


def test_the_descriptor_table_imports_nothing_of_threadline() -> None:
    """``import threadline.codecs`` loads the table: its pieces are names, imported on use."""
    tree = ast.parse((SRC / "codecs" / "_formats.py").read_text(encoding="utf-8"))
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    ]
    assert [name for name in imported if name and name.startswith("threadline")] == []


def test_a_dialect_overrides_only_what_differs() -> None:
    dialect = dataclasses.replace(OPENAI_CHAT, name="example_compatible", label="Example")
    assert dialect.request_fields == OPENAI_CHAT.request_fields
    assert dialect.stream_builder == OPENAI_CHAT.stream_builder
    assert dialect.codec() is get_codec("openai_chat")


def test_a_ref_to_a_missing_piece_fails_naming_it() -> None:
    with pytest.raises(AttributeError, match="no_such_builder"):
        Ref[Any]("threadline.codecs._stream_chat:no_such_builder").load()
    with pytest.raises(ImportError, match="no_such_module"):
        Ref[Any]("threadline.codecs.no_such_module:x").load()


def test_strict_and_forced_tool_formats() -> None:
    assert {n for n, d in DESCRIPTORS.items() if d.strict} == {
        "mistral",
        "openai_chat",
        "openai_responses",
    }
    assert {n for n, d in DESCRIPTORS.items() if d.forced_tool is not None} == {
        "anthropic",
        "bedrock",
    }
    assert [n for n, d in DESCRIPTORS.items() if d.encode_request is not None] == ["bedrock"]
    assert [n for n, d in DESCRIPTORS.items() if d.cache is not None] == ["anthropic", "bedrock"]


# -- Test-side oracles: tables of expected values, one entry per registered format ---------------


def _attribute(module: str, name: str) -> Callable[[], Any]:
    def load() -> Any:
        return getattr(importlib.import_module(module), name)

    return load


ORACLES: dict[str, Callable[[], Any]] = {
    f"{module}.{name}": _attribute(module, name)
    for module, name in (
        ("tests.unit.test_codecs_requests_shared", "DIALECTS"),
        ("tests.unit.test_codecs_tool_names", "PATTERNS"),
        ("tests.unit.test_codecs_sniff", "RESPONSES_BY_FORMAT"),
        ("tests.stream_cases", "FINAL"),
        ("tests.stream_cases", "STREAMS"),
        ("tests.stream_recordings", "RECORDED"),
        ("tests.conformance._responses", "MODELS"),
        ("tests.conformance._responses", "_BUILDERS"),
        ("tests.conformance.test_cross_provider", "JUDGES"),
        ("tests.conformance.test_cross_provider", "SDKS"),
        ("fuzz.make_corpus", "RESPONSES"),
        # provider tags, not format names: one entry per tag
        ("tests.strategies", "PROVIDERS"),
        ("threadline.testing._conversations", "_PROVIDERS"),
    )
}
"""The tables of expected values (fixtures, judges, oracles) that tests keep per format: each
must have an entry for every registered format. Tables that merely enumerate the formats are
``codec_names()`` instead."""


@pytest.mark.parametrize("table", sorted(ORACLES))
def test_each_oracle_table_covers_every_format(table: str) -> None:
    try:
        values = ORACLES[table]()
    except ImportError as error:  # the conformance judges need the provider SDKs
        pytest.skip(f"{table}: {error}")
    if table.endswith("PROVIDERS"):
        assert set(values) == {d.provider for d in DESCRIPTORS.values()}, table
    else:
        assert sorted(values) == sorted(DESCRIPTORS), table
