"""How fast can pydantic-core load threadline's JSON at all? The evidence behind one miss.

    python bench/bare_model.py [--size 10000]

Builds a *bare* copy of threadline's data model: the same part classes, fields, tags and JSON
shape as frozen slotted pydantic dataclasses, but with none of threadline's own validation (no
role/part rules, plain ``dict`` instead of read-only JSON maps, pydantic's base64, no
``Limits`` walk, no shared fields set). It times, on the same bytes, in one process:
``load_json``; threadline's envelope validator alone; the bare model; ``orjson.loads``; and the
two peers' loads from ``peers.py``.

Issue 11 asks ``load_json`` to be at least 2x faster than pydantic-ai and langchain-core. The
bare model, the floor for typed objects validated by pydantic-core, is itself only about 2x
faster than langchain-core, so no threadline code can meet the target while it builds its
objects with pydantic-core; see ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Annotated
from typing import Any
from typing import Literal
from typing import Union

import orjson
import pydantic
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import TypeAdapter

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import peers

import threadline as tl
from threadline.serialization import _envelope_adapter

_dataclass = pydantic.dataclasses.dataclass(
    frozen=True, slots=True, kw_only=True, config=ConfigDict(extra="forbid")
)
Map = dict[str, Any]


def _empty() -> Map:
    return {}


@_dataclass
class TextPart:
    type: Literal["text"] = "text"
    text: str
    metadata: Map = dataclasses.field(default_factory=_empty)


@_dataclass
class ReasoningPart:
    type: Literal["reasoning"] = "reasoning"
    text: str = ""
    signature: str | None = None
    encrypted: str | None = None
    redacted: bool = False
    provider: str | None = None
    model: str | None = None
    item_id: str | None = None
    summary: tuple[str, ...] = ()
    metadata: Map = dataclasses.field(default_factory=_empty)


@_dataclass
class ToolCallPart:
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: Map
    raw_arguments: str | None = None
    metadata: Map = dataclasses.field(default_factory=_empty)


@_dataclass
class FilePart:
    type: Literal["file"] = "file"
    media_type: str
    data: bytes | None = None
    url: str | None = None
    filename: str | None = None
    metadata: Map = dataclasses.field(default_factory=_empty)


Content = Annotated[Union[TextPart, FilePart], Field(discriminator="type")]  # noqa: UP007


@_dataclass
class ToolResultPart:
    type: Literal["tool_result"] = "tool_result"
    call_id: str
    content: Union[str, tuple[Content, ...]]  # noqa: UP007
    name: str | None = None
    is_error: bool = False
    metadata: Map = dataclasses.field(default_factory=_empty)


@_dataclass
class HookPart:
    type: Literal["hook"] = "hook"
    name: str
    state: Map
    metadata: Map = dataclasses.field(default_factory=_empty)


@_dataclass
class ProviderToolCallPart:
    type: Literal["provider_tool_call"] = "provider_tool_call"
    id: str
    name: str
    input: Any = None
    provider: str
    metadata: Map = dataclasses.field(default_factory=_empty)


@_dataclass
class ProviderToolResultPart:
    type: Literal["provider_tool_result"] = "provider_tool_result"
    call_id: str
    content: Any = None
    provider: str
    is_error: bool = False
    metadata: Map = dataclasses.field(default_factory=_empty)


Part = Annotated[
    Union[  # noqa: UP007
        TextPart,
        ReasoningPart,
        ToolCallPart,
        ToolResultPart,
        FilePart,
        HookPart,
        ProviderToolCallPart,
        ProviderToolResultPart,
    ],
    Field(discriminator="type"),
]


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", val_json_bytes="base64")
    id: str
    role: Literal["system", "user", "assistant", "tool", "internal"]
    parts: tuple[Part, ...]
    created_at: datetime | None = None
    metadata: Map = Field(default_factory=_empty)


class Envelope(BaseModel):
    format: Literal["threadline"]
    version: int
    messages: list[Message]


def median_ms(fn: Callable[[], object], samples: int) -> float:
    times = []
    for _ in range(samples):
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
        gc.enable()
    return statistics.median(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=9)
    args = parser.parse_args()
    spec = data.conversation(args.size)
    blob = tl.dump_json(data.to_threadline(spec))
    bare = TypeAdapter(Envelope)
    loaded = bare.validate_json(blob)
    if len(loaded.messages) != len(tl.load_json(blob, limits=tl.Limits.none())):
        raise AssertionError("the bare model did not read the same messages")
    pai = peers.pydantic_ai_dump(data.to_pydantic_ai(spec))
    lc = peers.langchain_dump(data.to_langchain(spec))
    envelope = _envelope_adapter()
    none = tl.Limits.none()
    gc.collect()
    gc.freeze()
    candidates: dict[str, Callable[[], object]] = {
        "load_json": lambda: tl.load_json(blob, limits=none),
        "threadline validator alone": lambda: envelope.validate_json(blob),
        "bare model": lambda: bare.validate_json(blob),
        "orjson.loads": lambda: orjson.loads(blob),
        "pydantic-ai": lambda: peers.pydantic_ai_load(pai),
        "langchain-core": lambda: peers.langchain_load(lc),
    }
    taken = {name: median_ms(fn, args.samples) for name, fn in candidates.items()}
    print(f"{args.size:,} messages, {len(blob):,} bytes; median of {args.samples}")
    for name, ms in taken.items():
        print(f"  {name:28} {ms:8.1f} ms")
    for subject in ("load_json", "bare model"):
        for peer in ("pydantic-ai", "langchain-core"):
            print(f"  {peer} ÷ {subject}: {taken[peer] / taken[subject]:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
