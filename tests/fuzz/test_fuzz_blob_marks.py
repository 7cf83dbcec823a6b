"""Fuzzing forged blob references: no entry point lets outside data carry the reserved marks.

Random conversations get the ``threadline.blob`` metadata key (and sometimes the
``threadline-blob:`` URL) in the metadata of random messages, parts and tool-result content.
``load_json`` (the key spelled with or without JSON escapes) and the ``History`` methods given
mappings refuse them with a ``ValidationError`` naming every place; ``sanitize_untrusted`` drops
them; a codec's ``decode`` never produces the key, whatever a payload holds (issue 19, item 5).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.fuzz._guard import call_expecting
from tests.strategies import conversations
from tests.strategies import json_values
from tests.strategies import texts
from threadline.codecs import codec_names
from threadline.codecs import get_codec
from threadline.stores.blobs import BLOB_METADATA_KEY
from threadline.stores.blobs import BLOB_URL_PREFIX
from threadline.stores.blobs import blob_key

KEY_VALUES = st.one_of(
    st.builds(lambda data: blob_key(data), st.binary(max_size=8)),
    st.sampled_from(["sha256:../../etc/passwd", "sha256:" + "A" * 64, ""]),
    texts,
    json_values,
)

Place = tuple[int, int, int]
"""Where metadata sits: (message, part or -1 for the message, content item or -1)."""


def places(items: list[dict[str, Any]]) -> list[Place]:
    found: list[Place] = []
    for index, item in enumerate(items):
        found.append((index, -1, -1))
        for position, part in enumerate(item["parts"]):
            found.append((index, position, -1))
            if part["type"] == "tool_result" and isinstance(part["content"], list):
                found.extend((index, position, k) for k in range(len(part["content"])))
    return found


def holder(items: list[dict[str, Any]], place: Place) -> dict[str, Any]:
    index, position, item = place
    target = items[index]
    if position >= 0:
        target = target["parts"][position]
    if item >= 0:
        target = target["content"][item]
    return target


def path_of(place: Place, prefix: str = "messages") -> str:
    index, position, item = place
    path = f"{prefix}[{index}]" if prefix == "messages" else prefix
    if position >= 0:
        path += f".parts[{position}]"
    if item >= 0:
        path += f".content[{item}]"
    return f"{path}.metadata[{BLOB_METADATA_KEY!r}]"


@st.composite
def forged(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[Place]]:
    """Client mappings with the reserved key at some places, and those places in order."""
    # Unmarked to start with: hypothesis draws metadata keys from the constants of the code
    # under test too, so a generated conversation may hold the reserved key by itself.
    messages = draw(conversations(min_turns=1).filter(lambda m: not carries_mark(m)))
    items: list[dict[str, Any]] = json.loads(tl.dump_json(messages))["messages"]
    chosen = sorted(draw(st.sets(st.sampled_from(places(items)), min_size=1, max_size=4)))
    for place in chosen:
        target = holder(items, place)
        value = draw(KEY_VALUES)
        target.setdefault("metadata", {})[BLOB_METADATA_KEY] = value
        if target.get("type") == "file" and isinstance(value, str) and draw(st.booleans()):
            target.pop("data", None)
            target["url"] = BLOB_URL_PREFIX + value  # both marks: a whole forged reference
    return items, chosen


def escaped(text: str, which: int) -> str:
    """``text`` with one character of every reserved key spelled as a ``\\u`` escape."""
    character = BLOB_METADATA_KEY[which % len(BLOB_METADATA_KEY)]
    spelled = BLOB_METADATA_KEY.replace(character, f"\\u{ord(character):04x}", 1)
    return text.replace(json.dumps(BLOB_METADATA_KEY), f'"{spelled}"')


def refused(
    error: tl.ValidationError | None, chosen: list[Place], prefix: str = "messages"
) -> None:
    assert error is not None, "a forged blob mark was accepted"
    assert [detail.path for detail in error.errors] == [path_of(p, prefix) for p in chosen]
    assert {detail.type for detail in error.errors} == {"reserved_key"}


def raised(function: Any, *args: Any, **kwargs: Any) -> tl.ValidationError | None:
    try:
        call_expecting((), function, *args, **kwargs)
    except tl.ValidationError as error:
        return error
    return None


@given(forged(), st.integers(0, 50), st.booleans())
def test_load_json_refuses_forged_marks(
    case: tuple[list[dict[str, Any]], list[Place]], which: int, bare: bool
) -> None:
    items, chosen = case
    document: Any = items if bare else {"format": "threadline", "version": 1, "messages": items}
    text = json.dumps(document, ensure_ascii=False)
    for data in (text, escaped(text, which), escaped(text, which).encode()):
        refused(raised(tl.load_json, data, limits=tl.Limits.untrusted()), chosen)


@given(forged())
def test_history_methods_refuse_forged_marks(
    case: tuple[list[dict[str, Any]], list[Place]],
) -> None:
    items, chosen = case
    for method in ("extend", "restore"):
        history = tl.History([tl.user_message("before")])
        snapshot = history.snapshot()
        refused(raised(getattr(history, method), items, limits=tl.Limits.untrusted()), chosen)
        assert history.snapshot() is snapshot
    first = chosen[0][0]
    history = tl.History()
    error = raised(history.append, items[first], limits=tl.Limits.untrusted())
    refused(error, [place for place in chosen if place[0] == first], "message")
    assert len(history) == 0


@given(forged())
def test_sanitize_untrusted_drops_forged_marks(
    case: tuple[list[dict[str, Any]], list[Place]],
) -> None:
    items, _ = case
    cleaned = call_expecting((tl.ValidationError,), tl.sanitize_untrusted, items)
    if cleaned is not None:
        text = tl.dump_json(cleaned)
        assert json.dumps(BLOB_METADATA_KEY).encode() not in text
        assert BLOB_URL_PREFIX.encode() not in text


def carries_mark(messages: list[tl.Message]) -> bool:
    for message in messages:
        if BLOB_METADATA_KEY in message.metadata:
            return True
        for part in message.parts:
            content = part.content if isinstance(part, tl.ToolResultPart) else ()
            for item in (part, *([] if isinstance(content, str) else content)):
                if BLOB_METADATA_KEY in item.metadata:
                    return True
    return False


@st.composite
def marked_payloads(draw: st.DrawFn, name: str) -> Any:
    """A payload ``name`` encodes, with the marks added to some of its objects."""
    messages = draw(conversations(min_turns=1).filter(lambda m: not carries_mark(m)))
    payload = copy.deepcopy(get_codec(name).encode(messages))
    objects: list[dict[str, Any]] = []
    stack: list[Any] = [payload]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            objects.append(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    key = draw(KEY_VALUES)
    for target in draw(st.lists(st.sampled_from(objects), min_size=1, max_size=4)):
        target[draw(st.sampled_from(["metadata", BLOB_METADATA_KEY, "url"]))] = (
            {BLOB_METADATA_KEY: key} if draw(st.booleans()) else BLOB_URL_PREFIX + str(key)
        )
    return payload


@given(st.data())
def test_codec_decode_never_produces_the_reserved_key(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(codec_names()))
    payload = data.draw(marked_payloads(name))
    expected = (tl.ValidationError, tl.CodecError)
    decoded = call_expecting(expected, tl.decode, payload, provider=name)
    if decoded is not None:
        assert not carries_mark(decoded)
