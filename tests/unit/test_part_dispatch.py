"""Every place that branches on part type, fed every part type (issue 38, item 4).

The part types are read from ``threadline.messages.PART_TYPES``, so a new part type joins every
test here on its own: it fails until it has a sample in ``SAMPLES`` and each place either handles
it or refuses it loudly (a threadline error naming it). A place may leave a part out only where
its docs say so (``DOCUMENTED_DROPS``); an ``AssertionError`` is a dispatch that has no branch for
the type (``assert_never``), never an acceptable refusal. ``docs/architecture.md`` ("Adding a part
type") lists the places in order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Iterator
from datetime import datetime
from datetime import timezone
from typing import Any
from typing import Literal

import pydantic
import pytest

from tests.support import require_module
from threadline import dump_json
from threadline import load_json
from threadline._cli.render import Style
from threadline._cli.render import render_transcript
from threadline._message_fields import PART_CONFIG
from threadline._repair import scan_messages
from threadline._sanitize import Untrusted
from threadline._sanitize import sanitized
from threadline._view._page import render_page
from threadline.codecs import codec_names
from threadline.codecs import get_codec
from threadline.errors import ThreadlineError
from threadline.integrity import prepare_messages
from threadline.integrity import sanitize_untrusted
from threadline.limits import Limits
from threadline.messages import ALLOWED_PARTS
from threadline.messages import PART_BY_TAG
from threadline.messages import PART_TYPES
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart
from threadline.messages import _PartBase
from threadline.tokens import measure

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")
WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)

SAMPLES: dict[type[Any], Any] = {
    TextPart: TextPart(text="It is sunny in Paris."),
    ReasoningPart: ReasoningPart(text="Look it up first.", signature="c2ln", provider="anthropic"),
    ToolCallPart: ToolCallPart(id="call_1", name="weather", arguments={"city": "Paris"}),
    ToolResultPart: ToolResultPart(call_id="call_1", name="weather", content="sunny, 21 C"),
    FilePart: FilePart(media_type="image/png", data=PNG),
    HookPart: HookPart(name="ui.card", state={"open": True}),
    ProviderToolCallPart: ProviderToolCallPart(
        id="srvtoolu_1", name="web_search", input={"query": "Paris weather"}, provider="anthropic"
    ),
    ProviderToolResultPart: ProviderToolResultPart(
        call_id="srvtoolu_1",
        content=[{"type": "web_search_result", "url": "https://example.com", "title": "Paris"}],
        provider="anthropic",
    ),
}
"""One part of each type, as an application would hold it."""


def _tag(kind: type[Any]) -> str:
    return next(tag for tag, cls in PART_BY_TAG.items() if cls is kind)


def test_every_part_type_has_a_sample() -> None:
    missing = [kind.__name__ for kind in PART_TYPES if kind not in SAMPLES]
    assert not missing, (
        f"add a sample of {', '.join(missing)} to SAMPLES, then follow the checklist in "
        "docs/architecture.md (Adding a part type)"
    )
    assert set(SAMPLES) == set(PART_TYPES)


def history(kind: type[Any], role: str, *, include: bool) -> list[Message]:
    """A short valid history with ``SAMPLES[kind]`` in a message of ``role`` (or, without
    ``include``, the same history without it: same ids, same timestamps)."""
    sample = [SAMPLES[kind]] if include else []
    specs: list[tuple[str, list[Any]]] = [("user", [TextPart(text="What is the weather?")])]
    if role == "system":
        specs.insert(0, ("system", [TextPart(text="Be brief."), *sample]))
    elif role in ("user", "internal"):
        specs.append((role, [TextPart(text="In Paris."), *sample]))
    elif role == "tool":
        specs.append(("assistant", [SAMPLES[ToolCallPart]]))
        specs.append(("tool", sample))
    elif role == "assistant":
        head: list[Any] = [TextPart(text="Let me look.")]
        if kind is ProviderToolResultPart:
            head.append(SAMPLES[ProviderToolCallPart])
        specs.append(("assistant", [*head, *sample]))
        if kind is ToolCallPart:
            specs.append(("tool", [SAMPLES[ToolResultPart]] if include else []))
    else:  # pragma: no cover - a new role
        raise AssertionError(f"no history for a {role} message")
    return [
        Message(id=f"msg_{index}", role=role, parts=tuple(parts), created_at=WHEN)  # type: ignore[arg-type]
        for index, (role, parts) in enumerate(specs)
        if parts
    ]


def _cases() -> Iterator[Any]:
    for kind in PART_TYPES:
        for role, allowed in ALLOWED_PARTS.items():
            if kind in allowed:
                yield pytest.param(kind, role, id=f"{_tag(kind)}-in-{role}")


Place = Callable[[list[Message]], Any]


def _encode(name: str) -> Place:
    def run(messages: list[Message]) -> Any:
        return get_codec(name).encode(messages, reasoning="text", unsupported="raise")

    return run


def _normalize(name: str) -> Place:
    def run(messages: list[Message]) -> Any:
        codec: Any = get_codec(name)  # the Codec protocol names the three wire functions
        return codec.normalize_for_round_trip(messages, reasoning="text", unsupported="raise")

    return run


def _untrusted(messages: list[Message]) -> Any:
    """What a client sent: read back from JSON under the untrusted limits, then sanitized."""
    return sanitize_untrusted(load_json(dump_json(messages), limits=Limits.untrusted()))


def _transcript(messages: list[Message]) -> Any:
    return list(render_transcript(messages, Style(False), full=True))


def _view(messages: list[Message]) -> Any:
    return render_page(messages, title="dispatch")


def _langchain(messages: list[Message]) -> Any:
    require_module("langchain_core", 'pip install "threadline[langchain]"')
    from threadline.interop.langchain import to_langchain

    return [message.model_dump() for message in to_langchain(messages)]


def _vercel(messages: list[Message]) -> Any:
    from threadline.interop.vercel import to_ui_messages

    return to_ui_messages(messages)


def _otel(messages: list[Message]) -> Any:
    from threadline.interop.otel import to_otel_messages

    return to_otel_messages(messages)


def _pydantic_ai(messages: list[Message]) -> Any:
    require_module("pydantic_ai", 'pip install "threadline[pydantic-ai]"')
    from threadline.interop.pydantic_ai import to_pydantic_ai

    return to_pydantic_ai(messages)


def _openai_agents(messages: list[Message]) -> Any:
    require_module("agents", 'pip install "threadline[openai-agents]"')
    from threadline.interop.openai_agents import items_of

    return items_of(messages)


PLACES: dict[str, Place] = {
    **{f"encode:{name}": _encode(name) for name in codec_names()},
    **{f"normalize_for_round_trip:{name}": _normalize(name) for name in codec_names()},
    "sanitize_untrusted": _untrusted,
    "prepare_messages": prepare_messages,
    "tokens.measure": lambda messages: [measure(message) for message in messages],
    "cli.render_transcript": _transcript,
    "view.render_page": _view,
    "interop.langchain": _langchain,
    "interop.vercel": _vercel,
    "interop.otel": _otel,
    "interop.pydantic_ai": _pydantic_ai,
    "interop.openai_agents": _openai_agents,
}
"""Every place that branches on part type, by the name this test reports."""

_CODECS = tuple(name for name in PLACES if name.startswith(("encode:", "normalize_for")))
_EVERY_ROLE = tuple(ALLOWED_PARTS)

_NEVER_SENT = (*_CODECS, "prepare_messages", "sanitize_untrusted", "interop.openai_agents")
_NOT_CONVERTED = ("interop.langchain", "interop.vercel", "interop.otel", "interop.pydantic_ai")

DOCUMENTED_DROPS: dict[tuple[type[Any], str], tuple[str, ...]] = {
    # internal messages and hook parts never reach a model: codecs (codecs/_policies.py),
    # integrity's internal-message and internal-part (docs/integrity.md), sanitize_untrusted
    # (docs/integrity.md), the adapters (their docstrings); content_chars counts hooks zero
    (HookPart, "assistant"): (*_NEVER_SENT, "tokens.measure", "interop.langchain", "interop.otel"),
    (HookPart, "internal"): (*_NEVER_SENT, *_NOT_CONVERTED, "tokens.measure"),
    (TextPart, "internal"): (*_NEVER_SENT, *_NOT_CONVERTED),
    # sanitize_untrusted drops system messages and provider tool parts (its docstring);
    # content_chars counts provider tool parts zero
    (TextPart, "system"): ("sanitize_untrusted",),
    (ProviderToolCallPart, "assistant"): ("sanitize_untrusted", "tokens.measure"),
    (ProviderToolResultPart, "assistant"): ("sanitize_untrusted", "tokens.measure"),
    # the Agents SDK items are the OpenAI Responses codec's with reasoning="auto", which drops
    # another provider's reasoning (the replay rule, docs/providers.md)
    (ReasoningPart, "assistant"): ("interop.openai_agents",),
}
"""(part type, role) -> the places whose docs say they leave such a part out."""


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize(("kind", "role"), list(_cases()))
def test_every_place_handles_or_refuses_every_part_type(
    kind: type[Any], role: str, place: str
) -> None:
    run = PLACES[place]
    try:
        with_part = run(history(kind, role, include=True))
    except AssertionError as error:  # assert_never: the place has no branch for the type
        pytest.fail(f"{place} has no branch for a {kind.__name__} in a {role} message: {error}")
    except ThreadlineError as error:  # refused loudly: the error says which part
        refusal: str | None = str(error)
    else:
        refusal = None
    if refusal is not None:
        assert "messages[" in refusal or _tag(kind) in refusal, refusal
        return
    without = run(history(kind, role, include=False))
    documented = place in DOCUMENTED_DROPS.get((kind, role), ())
    assert (with_part == without) == documented, (
        f"{place} {'drops' if with_part == without else 'keeps'} a {kind.__name__} in a {role} "
        f"message, but DOCUMENTED_DROPS says it {'does not' if not documented else 'does'}"
    )


# -- a part type no place knows yet -------------------------------------------------------------


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=PART_CONFIG)
class _Stranger(_PartBase):
    """A part type added to ``messages.py`` before any place has a branch for it."""

    type: Literal["stranger"] = "stranger"
    text: str = "a forged part"
    metadata: Any = dataclasses.field(default_factory=dict)


def _forged(role: Literal["user", "assistant"]) -> list[Message]:
    """A history holding a ``_Stranger`` (``model_construct``: validation would refuse it)."""
    first = Message(id="msg_0", role="user", parts=(TextPart(text="Hi"),), created_at=WHEN)
    parts: Any = (TextPart(text="Hello"), _Stranger())
    stranger = Message.model_construct(id="msg_1", role=role, parts=parts, created_at=WHEN)
    return [first, stranger]


_DISPATCHES: dict[str, Place] = {
    **{name: place for name, place in PLACES.items() if name.startswith("encode:")},
    "sanitize": lambda messages: sanitized(
        messages, Untrusted.policy(keep_metadata=(), allow_private_urls=False)
    ),
    "repair.scan_messages": scan_messages,
    "tokens.measure": PLACES["tokens.measure"],
    "cli.render_transcript": _transcript,
    "view.render_page": _view,
    "interop.vercel": _vercel,
    "interop.otel": _otel,
    "interop.langchain": _langchain,
    "interop.pydantic_ai": _pydantic_ai,
}
"""The dispatches that end in ``assert_never``, called directly (the public entry points
validate their input first, and validation refuses a part type it does not know)."""


def _stranger_cases() -> Iterator[Any]:
    for place in _DISPATCHES:
        for role in ("user", "assistant"):
            if place == "repair.scan_messages" and role == "user":
                continue  # the scan tells apart the parts of assistant messages only
            yield pytest.param(place, role, id=f"{place}-{role}")


@pytest.mark.parametrize(("place", "role"), list(_stranger_cases()))
def test_a_part_type_without_a_branch_is_refused_not_dropped(
    place: str, role: Literal["user", "assistant"]
) -> None:
    with pytest.raises(AssertionError, match=r"_Stranger|stranger"):
        _DISPATCHES[place](_forged(role))
