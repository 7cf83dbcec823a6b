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
from tests.dialect_cases import DIALECTS
from threadline.codecs import _sniff
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
    if d.sniffs_as != d.name:  # looks like another format: that one is named
        assert DESCRIPTORS[d.sniffs_as].sniffs_as == d.sniffs_as
        return
    told = d.telltales
    assert told is not None, "a format sniffed as itself says what gives it away"
    assert told.responses, "its responses have a telltale shape"
    assert told.bodies or told.items or told.messages or told.blocks or told.default, (
        "its request bodies or messages have a telltale shape"
    )
    questions = ("responses", "loose_responses", "bodies", "items", "messages", "blocks", "usage")
    for question in questions:
        for each in getattr(told, question):
            assert each, question
            assert all(isinstance(key, str) for key, _ in each), question


def _declared_losses(d: FormatDescriptor) -> None:
    assert callable(d.round_trip.load())


def _cache_marks(d: FormatDescriptor) -> None:
    if d.cache is not None:
        assert d.cache.key.startswith(f"{d.name}."), "a part metadata key of the format"
        writer = d.cache.writer.load()()
        for method in ("add", "count", "marks"):
            assert callable(getattr(writer, method, None)), f"the cache writer has no {method}"
        assert len(inspect.signature(d.cache.encode.load()).parameters) == 3, "cache.encode"


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
        "telltales",
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
    assert descriptor("no_such_format") is None
    assert descriptor(None) is None  # type: ignore[arg-type]


DISPATCHING = (
    "_usage_readers.py",
    "codecs/_caching.py",
    "codecs/_incremental.py",
    "codecs/_prepared.py",
    "codecs/_reading.py",
    "codecs/_registry.py",
    "codecs/_requests.py",
    "codecs/_sniff.py",
    "codecs/_structured.py",
    "streaming.py",
    "testing/_conversations.py",
)
"""The modules that serve every format: none names one (the formats' own request-field,
structured-output and usage-reader functions in them are reached by the descriptors)."""


def _constants(node: ast.AST) -> list[object]:
    """The constants ``node`` is, or holds as a tuple, list or set literal."""
    if isinstance(node, ast.Constant):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [value for element in node.elts for value in _constants(element)]
    return []


@pytest.mark.parametrize("module", DISPATCHING)
def test_dispatching_modules_name_no_format_outside_their_docs(module: str) -> None:
    """The registry and the tables it replaced branch on no format's name or provider tag: one
    compared with (``==``, ``in (...)``), matched or keyed in a dict would be a per-format
    table again."""
    tree = ast.parse((SRC / module).read_text(encoding="utf-8"))
    names = {*DESCRIPTORS, *(d.provider for d in DESCRIPTORS.values())}  # and provider tags
    named: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        operands: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Dict):
            operands = [key for key in node.keys if key is not None]
        elif isinstance(node, ast.MatchValue):
            operands = [node.value]
        for operand in operands:
            line = getattr(node, "lineno", 0)
            named.extend((line, value) for value in _constants(operand) if value in names)
    # _sniff's guesses return format names, but never branch on one
    assert named == []


def test_every_dispatching_module_is_checked() -> None:
    """A module that loads the descriptors to dispatch on them is in `DISPATCHING` (the codec
    modules and the descriptor table itself are each one format's, or every format's, own)."""
    own = {"codecs/_formats.py"}
    loading = {
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if "codecs._formats import" in path.read_text(encoding="utf-8")
    }
    assert loading - own <= set(DISPATCHING)


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
        *DIALECTS,  # dialects of openai_chat keep its strict mode
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
        ("tests.property.test_stream_errors", "ERRORS"),
        ("tests.unit.test_streaming_hostile", "AFTER_THE_END"),
        ("tests.conformance._responses", "MODELS"),
        ("tests.conformance._responses", "_BUILDERS"),
        ("tests.conformance.test_cross_provider", "JUDGES"),
        ("tests.conformance.test_cross_provider", "SDKS"),
        ("tests.conformance.test_requests", "JUDGES"),
        ("tests.conformance.test_streaming_cut", "JUDGES"),
        ("tests.conformance.test_streaming_cut", "SDKS"),
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


def test_the_sniffing_order_is_defined() -> None:
    """``_sniff`` asks the formats sniffed as themselves by rank: no two share one, and one
    format at most takes the message lists that tell nothing else."""
    asked = [d for name, d in DESCRIPTORS.items() if d.sniffs_as == name]
    ranks = [d.telltales.rank for d in asked if d.telltales is not None]
    assert len(ranks) == len(asked) == len(set(ranks))
    assert [d.name for d in asked if d.telltales and d.telltales.default] == ["openai_chat"]
    assert [name for name, _ in _sniff._asked()] == [
        d.name for d in sorted(asked, key=lambda d: d.telltales.rank if d.telltales else 0)
    ]


def test_sniffing_knows_no_format() -> None:
    """Every format name ``_sniff`` gives comes from a descriptor: its source holds none."""
    tree = ast.parse((SRC / "codecs" / "_sniff.py").read_text(encoding="utf-8"))
    named = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in DESCRIPTORS
    ]
    assert named == []


def test_the_conversation_kit_draws_reasoning_from_every_registered_tag(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``testing._conversations._PROVIDERS`` is the registry's tags: a format registered later
    joins them after the first five, which keep their order (a seed's conversations stay)."""
    from threadline.testing import _conversations

    first = ("openai", "anthropic", "gemini", "mistral", "bedrock")
    assert _conversations._PROVIDERS[:5] == first
    assert set(_conversations._PROVIDERS) == {d.provider for d in DESCRIPTORS.values()}
    extra = dataclasses.replace(OPENAI_CHAT, name="example_chat", provider="example")
    monkeypatch.setattr(_conversations, "DESCRIPTORS", {**DESCRIPTORS, extra.name: extra})
    tags = _conversations._provider_tags()
    assert tags[:5] == first
    assert tags[5:] == tuple(sorted({*_conversations._PROVIDERS[5:], "example"}))
    later = sorted({*_conversations._PROVIDERS[5:], "example"})
    assert _conversations._provider_tags() == (*first, *later)


def test_a_stored_usage_object_is_read_by_the_format_its_tag_and_keys_name() -> None:
    """The usage threadline stored before ``Usage``: a tag two formats write (both OpenAI
    APIs write ``openai``) is told by the object's keys, through the formats' telltales."""
    from threadline._usage_readers import _LEGACY_FORMATS
    from threadline._usage_readers import _legacy_format

    assert _legacy_format("openai", {"prompt_tokens": 3}) == "openai_chat"
    assert _legacy_format("openai", {"input_tokens": 3}) == "openai_responses"
    assert _legacy_format("anthropic", {"input_tokens": 3}) == "anthropic"
    assert _legacy_format("openai_chat", {"prompt_tokens": 3}) == "openai_chat"
    assert _legacy_format("no_such_format", {"input_tokens": 3}) is None
    assert _legacy_format(None, {"input_tokens": 3}) is None
    for name in _LEGACY_FORMATS:
        assert _sniff.guess_usage_format(DESCRIPTORS[name].provider, {}, {name}) == name
