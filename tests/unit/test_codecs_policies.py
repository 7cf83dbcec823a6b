"""The neutral policy pass: ``resolve`` applies the reasoning and unsupported policies once,
from a format's declared ``Capabilities``, so a format's part loop only maps."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import threadline as tl
from threadline.codecs import codec_names
from threadline.codecs import get_codec
from threadline.codecs import mistral
from threadline.codecs import openai_chat
from threadline.codecs import openai_responses
from threadline.codecs._policies import Capabilities
from threadline.codecs._policies import Placeholder
from threadline.codecs._policies import resolve
from threadline.codecs._policies import resolve_indexed
from threadline.codecs._policies import unanchored_reasoning
from threadline.codecs.base import EncodeOptions


def _options(**kw: object) -> EncodeOptions:
    base: dict[str, object] = {
        "provider": "anthropic",
        "model": None,
        "reasoning": "auto",
        "unsupported": "placeholder",
    }
    return EncodeOptions(**{**base, **kw})  # type: ignore[arg-type]


_CAPS = Capabilities(
    replayable=lambda part: part.signature is not None,
    carries_file=lambda part, role: part.media_type == "image/png",
    file_reasons={"user": "only PNG"},
    no_place="no place",
    provider_tool_reason="no provider tools",
)
_PNG = tl.file_part(b"\x89PNG", "image/png")
_GIF = tl.file_part(b"GIF89a", "image/gif")


def test_reasoning_is_replayed_sent_as_text_or_dropped() -> None:
    signed = tl.reasoning_part("why", signature="sig", provider="anthropic")
    foreign = tl.reasoning_part("why", provider="openai")
    message = tl.assistant_message(signed, foreign, tl.text_part("ok"), id="a")
    assert resolve(message, 0, _options(), _CAPS) == [signed, tl.text_part("ok")]
    assert resolve(message, 0, _options(reasoning="text"), _CAPS) == [
        signed,
        tl.text_part("why"),
        tl.text_part("ok"),
    ]
    assert resolve(message, 0, _options(reasoning="drop"), _CAPS) == [tl.text_part("ok")]


def test_refused_parts_become_placeholders_or_are_dropped_and_hooks_are_left_out() -> None:
    call = tl.ProviderToolCallPart(id="s1", name="search", input={}, provider="gemini")
    hook = tl.hook_part("ui", {"step": 1})
    message = tl.assistant_message(call, hook, tl.text_part("ok"), id="a")
    assert resolve(message, 0, _options(), _CAPS) == [
        Placeholder("[provider_tool_call omitted: not supported by anthropic]"),
        tl.text_part("ok"),
    ]
    assert resolve(message, 0, _options(unsupported="drop"), _CAPS) == [tl.text_part("ok")]


def test_raise_names_the_part_in_the_callers_list() -> None:
    message = tl.user_message(tl.text_part("see"), _GIF, id="u")
    with pytest.raises(tl.UnsupportedContentError, match=r"parts\[1\].*only PNG") as caught:
        resolve(message, 3, _options(unsupported="raise"), _CAPS)
    assert (caught.value.message_index, caught.value.part_index) == (3, 1)


def test_resolve_indexed_keeps_the_index_of_the_part_each_stands_for() -> None:
    signed = tl.reasoning_part("why", signature="sig", provider="anthropic")
    foreign = tl.reasoning_part("", summary=("one", "two"), provider="openai")
    hook = tl.hook_part("ui", {"step": 1})
    message = tl.assistant_message(signed, hook, foreign, _GIF, tl.text_part("ok"), id="a")
    assert resolve_indexed(message, 0, _options(reasoning="text"), _CAPS) == [
        (0, signed),
        (2, tl.text_part("one")),
        (2, tl.text_part("two")),
        (3, Placeholder("[image/gif omitted: not supported by anthropic]")),
        (4, tl.text_part("ok")),
    ]
    plain = tl.assistant_message(tl.text_part("a"), tl.text_part("b"), id="p")
    assert resolve_indexed(plain, 0, _options(), _CAPS) == list(enumerate(plain.parts))


def test_raise_names_the_first_refused_part() -> None:
    message = tl.user_message(_GIF, tl.text_part("see"), _GIF, id="u")
    with pytest.raises(tl.UnsupportedContentError) as caught:
        resolve_indexed(message, 0, _options(unsupported="raise"), _CAPS)
    assert caught.value.part_index == 0


def test_unanchored_reasoning_is_sent_as_text_only_under_the_text_policy() -> None:
    part = tl.reasoning_part("why", provider="openai", item_id="rs_1")
    assert unanchored_reasoning(part, _options(reasoning="text")) == [tl.text_part("why")]
    assert unanchored_reasoning(part, _options()) == []


def test_responses_raise_names_the_first_refused_part_of_an_assistant_message() -> None:
    first = tl.ProviderToolCallPart(id="s1", name="search", input={}, provider="gemini")
    second = tl.ProviderToolCallPart(id="s2", name="search", input={}, provider="gemini")
    reasoning = tl.reasoning_part("why", provider="openai", item_id="rs_1")
    message = tl.assistant_message(first, reasoning, tl.text_part("ok"), second, id="a")
    with pytest.raises(tl.UnsupportedContentError) as caught:
        openai_responses.encode([tl.user_message("hi", id="u"), message], unsupported="raise")
    assert (caught.value.message_index, caught.value.part_index) == (1, 0)


def test_a_refused_file_in_a_tool_result_is_replaced_inside_the_result() -> None:
    result = tl.tool_result_part("c1", [tl.text_part("two files"), _PNG, _GIF])
    message = tl.tool_message(result, id="t")
    (resolved,) = resolve(message, 0, _options(), _CAPS)
    assert isinstance(resolved, tl.ToolResultPart)
    assert resolved.content == (
        tl.text_part("two files"),
        _PNG,
        tl.text_part("[image/gif omitted: not supported by anthropic]"),
    )
    (dropped,) = resolve(message, 0, _options(unsupported="drop"), _CAPS)
    assert isinstance(dropped, tl.ToolResultPart)
    assert dropped.content == (tl.text_part("two files"), _PNG)
    carried = tl.tool_message(tl.tool_result_part("c1", [_PNG]), id="t")
    assert resolve(carried, 0, _options(), _CAPS)[0] is carried.parts[0]


def test_a_placeholder_stays_a_block_where_a_lone_text_would_be_a_string() -> None:
    message = tl.user_message(tl.file_part(b"\x00", "application/x-unknown"), id="u")
    for codec in (openai_chat, mistral):
        payload = codec.encode([message])
        user = payload["messages"][-1]
        assert isinstance(user["content"], list), codec.__name__


_FORMATS = tuple(get_codec(name) for name in codec_names())
_POLICY_CALLS = {"reasoning_action", "downgrade_reasoning", "unsupported_part"}


@pytest.mark.parametrize("codec", _FORMATS, ids=lambda codec: getattr(codec, "PROVIDER", "?"))
def test_formats_declare_capabilities_and_only_map(codec: object) -> None:
    assert isinstance(getattr(codec, "CAPABILITIES", None), Capabilities)
    source = codec if inspect.ismodule(codec) else type(codec)  # a dialect's: its class's module
    tree = ast.parse(Path(inspect.getfile(source)).read_text(encoding="utf-8"))
    called = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert not called & _POLICY_CALLS
