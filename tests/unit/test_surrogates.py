"""Lone surrogates (``"\\ud800"``) are not text: every entry point refuses them.

A Python ``str`` can hold a lone surrogate (``json.loads`` reads ``"\\ud800"`` into one), but
UTF-8 cannot encode it: a message holding one could not be dumped, stored or sealed, and a key
holding one used to be written as U+FFFD, so that two different keys sealed alike. Each entry
point raises ``threadline.ValidationError`` naming the field instead.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import pydantic
import pytest

import threadline as tl
from threadline._json import FrozenJsonMap
from threadline.sealing import canonical_message
from threadline.sealing import seal
from threadline.sealing import verify
from threadline.sealing import verify_prefix

KEY = bytes(range(32))
LONE = ("\ud800", "\udbff", "\udc00", "\udfff")


def refused(call: Callable[[], Any], path: str | None = None) -> tl.ValidationError:
    with pytest.raises(tl.ValidationError) as info:
        call()
    error = info.value
    assert "not valid Unicode" in str(error), str(error)
    assert "encoding" in str(error), str(error)
    if path is not None:
        assert path in [detail.path for detail in error.errors], error.errors
    return error


def call_message(key: str = "k", value: Any = 1) -> dict[str, Any]:
    return {
        "id": "m1",
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": "c1", "name": "f", "arguments": {key: value}}],
    }


# ---------------------------------------------------------------------------------------------
# Item 1: a seal never verifies a history other than the one sealed.


def test_a_sealed_argument_key_edited_to_another_surrogate_fails_verify() -> None:
    # The server sealed a history whose argument key is "k" and three U+FFFD; the client sends
    # it back with "k\udfff" (json.loads reads the escape into a lone surrogate). Before the
    # fix, both dumped to the same JSON and the forged history verified.
    honest = json.loads(json.dumps([call_message("k\ufffd\ufffd\ufffd")]))
    token = seal(honest, KEY, conversation_id="c")
    forged = json.loads(json.dumps([call_message("k\udfff")]))
    assert forged[0]["parts"][0]["arguments"] == {"k\udfff": 1}
    with pytest.raises(tl.ValidationError, match="not valid Unicode"):
        verify(forged, token, KEY, conversation_id="c")
    with pytest.raises(tl.ValidationError, match="not valid Unicode"):
        verify_prefix(forged, token, KEY, conversation_id="c")


def test_a_history_holding_a_lone_surrogate_cannot_be_sealed() -> None:
    sealed = json.loads(
        '[{"role": "assistant", "parts": [{"type": "tool_call", "id": "c", '
        '"name": "f", "arguments": {"k\\ud800": 1}}]}]'
    )
    refused(lambda: seal(sealed, KEY, conversation_id="c"), "messages[0].parts[0].arguments")


def smuggled(key: str) -> tl.Message:
    """A message whose argument key holds ``key``, put there past validation."""
    part = tl.tool_call_part("c1", "f", {"k": 1})
    object.__setattr__(part, "arguments", FrozenJsonMap({key: 1}))
    return tl.Message.model_construct(id="m1", role="assistant", parts=(part,))


def test_the_canonical_form_is_injective_even_past_validation() -> None:
    # Item 7 refuses lone surrogates when messages are built; canonical_message does not rely
    # on it: a message built around validation still never shares its bytes with another.
    honest = smuggled("k\ufffd\ufffd\ufffd")
    assert b"k\xef\xbf\xbd" in canonical_message(honest)

    def canonical_smuggled(key: str) -> bytes:
        return canonical_message(smuggled(key))

    for key in LONE:
        refused(functools.partial(canonical_smuggled, "k" + key))


def test_a_conversation_id_with_a_lone_surrogate_is_refused() -> None:
    message = tl.user_message("hi", id="m1")
    with pytest.raises(ValueError, match="not valid Unicode"):
        seal([message], KEY, conversation_id="c\ud800")
    token = seal([message], KEY, conversation_id="c\ufffd\ufffd\ufffd")
    with pytest.raises(ValueError, match="not valid Unicode"):
        verify([message], token, KEY, conversation_id="c\ud800")


# ---------------------------------------------------------------------------------------------
# Hardening: verify and verify_prefix read mappings with Limits.untrusted() by default.


def many(count: int) -> list[dict[str, Any]]:
    return [
        {"id": f"m{i}", "role": "user", "parts": [{"type": "text", "text": "x"}]}
        for i in range(count)
    ]


@pytest.mark.parametrize("function", [verify, verify_prefix])
def test_verify_reads_mappings_with_the_untrusted_limits(function: Any) -> None:
    mappings = many(1_001)  # Limits.untrusted() allows 1,000 messages
    token = seal(mappings, KEY, conversation_id="c")
    with pytest.raises(tl.LimitExceededError, match="max_messages"):
        function(mappings, token, KEY, conversation_id="c")
    function(mappings, token, KEY, conversation_id="c", limits=tl.Limits())
    # Message objects are the server's own: no limits unless asked for.
    messages = [tl.Message.model_validate(item) for item in mappings]
    function(messages, token, KEY, conversation_id="c")
    with pytest.raises(tl.LimitExceededError, match="max_messages"):
        function(messages, token, KEY, conversation_id="c", limits=tl.Limits.untrusted())


def test_verify_refuses_deep_mappings_within_the_default_limits() -> None:
    deep: Any = 1
    for _ in range(40):  # within Limits() (64), beyond Limits.untrusted() (32)
        deep = [deep]
    mappings = [call_message("k", deep)]
    token = seal(mappings, KEY, conversation_id="c")
    with pytest.raises(tl.LimitExceededError, match="max_depth"):
        verify(mappings, token, KEY, conversation_id="c")


# ---------------------------------------------------------------------------------------------
# Item 7: every entry point refuses them, naming the field.


@pytest.mark.parametrize("lone", LONE)
@pytest.mark.parametrize(
    ("build", "path"),
    [
        (lambda s: tl.user_message("a" + s), "parts[0].text"),
        (lambda s: tl.user_message("a", id=s), "id"),
        (lambda s: tl.user_message("a", metadata={s: 1}), "metadata"),
        (lambda s: tl.user_message("a", metadata={"k": [{"x": s}]}), "metadata"),
        (lambda s: tl.system_message(s), "parts[0].text"),
        (lambda s: tl.text_part(s), "text"),
        (lambda s: tl.text_part("a", metadata={"k" + s: 1}), "metadata"),
        (lambda s: tl.reasoning_part("a", signature=s), "signature"),
        (lambda s: tl.reasoning_part("a", summary=("ok", s)), "summary[1]"),
        (lambda s: tl.tool_call_part(s, "f", {}), "id"),
        (lambda s: tl.tool_call_part("c", s, {}), "name"),
        (lambda s: tl.tool_call_part("c", "f", {"k" + s: 1}), "arguments"),
        (lambda s: tl.tool_call_part("c", "f", {"k": {"deep": [s]}}), "arguments"),
        (lambda s: tl.tool_call_part("c", "f", '{"k": "' + s + '"}'), "raw_arguments"),
        (lambda s: tl.tool_call_part("c", "f", "not json" + s), "raw_arguments"),
        (lambda s: tl.tool_result_part("c", "out" + s), "content"),
        (lambda s: tl.tool_result_part("c", ["out" + s]), "content[0].text"),
        (lambda s: tl.tool_result_part("c", "out", name=s), "name"),
        (lambda s: tl.file_part(b"x", "image/png" + s), "media_type"),
        (lambda s: tl.file_part("https://x.test/" + s, "image/png"), "url"),
        (lambda s: tl.file_part(b"x", "image/png", filename=s), "filename"),
        (lambda s: tl.hook_part(s, {}), "name"),
        (lambda s: tl.hook_part("h", {s: None}), "state"),
        (lambda s: tl.text_part("a").with_metadata({s: 1}), "metadata"),
        (lambda s: tl.user_message("a").with_metadata(k=s), "metadata"),
    ],
)
def test_constructors_refuse_them(build: Callable[[str], Any], path: str, lone: str) -> None:
    refused(lambda: build(lone), path)


def test_the_pydantic_api_refuses_them_with_its_own_error() -> None:
    with pytest.raises(pydantic.ValidationError):
        tl.Message.model_validate(call_message("k\ud800"))
    with pytest.raises(pydantic.ValidationError):
        tl.Message(role="user", parts=(tl.TextPart(text="ok"),), id="m\udc00")
    with pytest.raises(pydantic.ValidationError):
        tl.TextPart(text="\ud800")
    with pytest.raises(pydantic.ValidationError):
        tl.ProviderToolCallPart(id="p", name="n", provider="openai", input=["\ud800"])


def test_a_pair_in_json_text_is_one_character() -> None:
    # In JSON text an escaped pair is one character; in a Python str each surrogate is lone.
    (decoded,) = json.loads('["\\ud83e\\uddf5"]')
    message = tl.user_message(decoded, metadata={decoded: "\ufffd"})
    assert message.text == "\U0001f9f5"
    assert tl.load_json(tl.dump_json([message])) == [message]
    refused(lambda: tl.user_message("\ud83e\uddf5"))


ENVELOPE = '{"format": "threadline", "version": 1, "messages": [%s]}'
TEXT = '{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "a%s"}]}'
KEYED = (
    '{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "a"}], "metadata": {"k%s": 1}}'
)


@pytest.mark.parametrize(
    ("template", "path"),
    [(TEXT, "messages[0].parts[0].text"), (KEYED, "messages[0].metadata")],
)
@pytest.mark.parametrize("escape", ["\\ud800", "\\uDFFF", "\\ud800\\u0041", "\\udc00\\ud800"])
def test_load_json_refuses_escaped_ones(template: str, path: str, escape: str) -> None:
    text = ENVELOPE % (template % escape)
    refused(lambda: tl.load_json(text), path)
    refused(lambda: tl.load_json(text.encode()), path)
    bare = "[%s]" % (template % escape)
    refused(lambda: tl.load_json(bare), path)


@pytest.mark.parametrize(
    ("template", "path"),
    [(TEXT, "messages[0].parts[0].text"), (KEYED, "messages[0].metadata")],
)
@pytest.mark.parametrize("lone", LONE)
def test_load_json_refuses_raw_ones(template: str, path: str, lone: str) -> None:
    text = ENVELOPE % (template % lone)
    refused(lambda: tl.load_json(text), path)
    # Bytes that encode a surrogate (surrogatepass) are not UTF-8.
    with pytest.raises(tl.ValidationError):
        tl.load_json(text.encode("utf-8", "surrogatepass"))


def test_escaped_pairs_and_escaped_backslashes_still_load() -> None:
    text = ENVELOPE % (TEXT % "\\ud83e\\uddf5 \\\\ud800 \\\\\\ud83e\\uddf5")
    (message,) = tl.load_json(text)
    assert message.text == "a\U0001f9f5 \\ud800 \\\U0001f9f5"


@pytest.mark.parametrize("method", ["append", "extend", "restore"])
def test_history_refuses_them_in_mappings_and_changes_nothing(method: str) -> None:
    history = tl.History([tl.user_message("kept", id="m0")])
    mapping = json.loads(json.dumps(call_message("k\ud800")))
    argument: Any = mapping if method == "append" else [mapping]
    refused(lambda: getattr(history, method)(argument))
    assert [message.id for message in history] == ["m0"]


def test_sanitize_untrusted_refuses_them() -> None:
    body = json.loads('[{"role": "user", "parts": [{"type": "text", "text": "\\udc00"}]}]')
    refused(lambda: tl.sanitize_untrusted(body), "messages[0].parts[0].text")


@pytest.mark.parametrize(
    ("provider", "payload"),
    [
        ("openai_chat", {"messages": [{"role": "user", "content": "a\ud800"}]}),
        (
            "anthropic",
            {"messages": [{"role": "user", "content": [{"type": "text", "text": "\udfff"}]}]},
        ),
        (
            "anthropic",
            {
                "messages": [
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "tool_use", "id": "c", "name": "f", "input": {"\ud800": 1}}
                        ],
                    }
                ]
            },
        ),
        (
            "anthropic",
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "document",
                                "source": {
                                    "type": "text",
                                    "media_type": "text/plain",
                                    "data": "half \ud83d",
                                },
                            }
                        ],
                    }
                ]
            },
        ),
        (
            "bedrock",
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {
                                "document": {
                                    "name": "a",
                                    "format": "txt",
                                    "source": {"text": "\udc00"},
                                }
                            }
                        ],
                    }
                ]
            },
        ),
        ("gemini", {"contents": [{"role": "user", "parts": [{"text": "x\udc00"}]}]}),
        ("mistral", {"messages": [{"role": "user", "content": "a\ud800"}]}),
        ("bedrock", {"messages": [{"role": "user", "content": [{"text": "a\ud800"}]}]}),
        ("openai_responses", {"input": [{"role": "user", "content": "a\ud800"}]}),
    ],
)
def test_codecs_refuse_them_in_python_payloads(provider: str, payload: Any) -> None:
    # Checked with the payload's limits, before it is read: the path is the payload's.
    error = refused(lambda: tl.decode(payload, provider=provider))
    assert error.errors[0].path.startswith(("messages[0]", "contents[0]", "input[0]"))


@pytest.mark.parametrize("escape", ["\\ud800", "\\udc00", "\\ud800\\u0041"])
def test_arguments_text_escaping_one_is_not_json_and_kept_verbatim(escape: str) -> None:
    # json.loads reads '"\\ud800"' into a lone surrogate; the text is not JSON (RFC 8259), so
    # the call keeps it as raw_arguments (ASCII, storable), as for any text that is not JSON.
    text = '{"k' + escape + '": 1}'
    payload = {
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": text}}
                ],
            }
        ]
    }
    (message,) = tl.decode(payload, provider="openai_chat")
    assert message.tool_calls[0].arguments == {}
    assert message.tool_calls[0].raw_arguments == text
    part = tl.tool_call_part("c", "f", text)
    assert (part.arguments, part.raw_arguments) == ({}, text)
    assert tl.load_json(tl.dump_json([message])) == [message]


def test_codecs_refuse_them_in_responses() -> None:
    response = {
        "id": "r",
        "object": "chat.completion",
        "model": "gpt",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "a\ud800"},
                "finish_reason": "stop",
            }
        ],
    }
    error = refused(lambda: tl.decode_response(response, provider="openai_chat"))
    assert error.errors[0].path == "choices[0].message.content"
    refused(lambda: tl.decode_response(json.dumps(response), provider="openai_chat"))
    refused(
        lambda: tl.decode_response(json.dumps(response, ensure_ascii=False), provider="openai_chat")
    )


def test_a_store_file_holding_one_escaped_is_refused_not_loaded(tmp_path: Any) -> None:
    from threadline.stores import JsonlStore

    store = JsonlStore(tmp_path)
    store.append("c", [tl.user_message("ok", id="m0")])
    store.append("c", [tl.user_message("ok", id="m1")])
    store.append("c", [tl.user_message("ok", id="m2")])
    path = next(tmp_path.rglob("*.jsonl"))
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace('"ok"', '"\\ud800"')
    path.write_text("".join(lines))
    with pytest.raises(tl.StoreError, match=":2:"):
        store.load("c")
