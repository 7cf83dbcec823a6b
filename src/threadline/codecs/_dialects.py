"""The OpenAI-compatible dialects: OpenAI Chat Completions with a provider's reasoning rules.

DeepSeek, OpenRouter, vLLM / SGLang, Groq, Qwen (DashScope compatible mode), Moonshot (Kimi),
xAI and Together speak Chat Completions; their messages, files, tool calls and ids are
``threadline.codecs.openai_chat``'s. What differs is reasoning, stated once per dialect in a
`Dialect`:

- where a response, a stream delta or a request's assistant message carries it
  (``reasoning_content``, ``reasoning``, OpenRouter's ``reasoning_details`` list, or
  ``<think>…</think>`` at the start of ``content`` where a server leaves it there);
- whether and where it goes back (``reasoning_content`` for DeepSeek and Moonshot,
  ``reasoning_details`` / ``reasoning`` for OpenRouter, never for the servers that refuse it),
  and whether every assistant message must carry the field (DeepSeek and Kimi thinking
  models refuse an assistant message without it: it is sent empty when the message has no
  reasoning of the dialect's own to replay);
- the model families that refuse it back (DeepSeek-R1), and model aliases (DeepSeek's legacy
  ``deepseek-reasoner`` and ``deepseek-chat`` name V4 models).

Reasoning a dialect reads carries its codec name as ``provider`` (``deepseek``), so the
replay rule is the one every format keeps: it goes back only to the same codec (and model).
Each dialect is a `DialectCodec` the format descriptors name
(``threadline.codecs._dialects:DEEPSEEK``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from threadline._json import EMPTY
from threadline._json import freeze_json_map
from threadline.codecs import openai_chat as chat
from threadline.codecs._policies import Capabilities
from threadline.codecs._policies import model_id
from threadline.codecs._reading import Reader
from threadline.codecs._reading import check_choice
from threadline.codecs._reading import read_payload
from threadline.codecs._reading import read_response
from threadline.codecs._round_trip import Turn
from threadline.codecs._round_trip import read_back
from threadline.codecs._think import split_think
from threadline.codecs.base import IntegrityMode
from threadline.codecs.base import ReasoningPolicy
from threadline.codecs.base import TextFilesPolicy
from threadline.codecs.base import UnsupportedPolicy
from threadline.limits import Limits
from threadline.messages import Message
from threadline.messages import Part
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart

__all__ = ["DETAIL", "DIALECTS", "Dialect", "DialectCodec"]

DETAIL = "openrouter.reasoning_detail"
"""Part metadata of reasoning read from OpenRouter's ``reasoning_details``: the entry as it
came (``type``, ``id``, ``format``, ``index``, ``summary`` / ``data`` / ``text``,
``signature``), sent back unchanged."""
_DETAIL_TYPES = {"reasoning.text": "text", "reasoning.summary": "summary"}


@dataclasses.dataclass(frozen=True)
class Dialect:
    """One OpenAI-compatible dialect: only what differs from Chat Completions."""

    name: str
    """The codec name, and the ``provider`` tag of the reasoning it reads."""
    label: str
    """What the format is called in messages."""
    reads: tuple[str, ...]
    """The message (and delta) fields holding reasoning text, the first present wins."""
    sends: str | None = None
    """The assistant message field own reasoning goes back in; ``None``: never sent back."""
    always: bool = False
    """Every assistant message carries ``sends`` (empty when it replays none)."""
    details: bool = False
    """Reasoning also comes, and goes back, as OpenRouter's ``reasoning_details`` list."""
    think_tags: bool = False
    """``content`` starting with ``<think>…</think>`` holds reasoning first
    (``threadline.codecs._think.split_think``)."""
    refusing: tuple[str, ...] = ()
    """Model-id prefixes (lower case) of families that refuse ``sends`` back."""
    aliases: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Model aliases and the model each stands for (replay treats them as one)."""

    def model(self, model: str | None) -> str | None:
        """``model`` with its alias resolved (``None`` stays ``None``)."""
        return None if model is None else self.aliases.get(model_id(model), model)

    def takes_back(self, model: str | None) -> bool:
        """Whether ``model`` (``None``: unknown) takes reasoning back in ``sends``."""
        if self.sends is None and not self.details:
            return False
        return model is None or not model_id(model).lower().startswith(self.refusing or ("\0",))


class DialectCodec:
    """The codec of one `Dialect`: ``encode``, ``decode``, ``decode_response`` and
    ``normalize_for_round_trip`` as ``threadline.codecs.openai_chat`` has them, with the
    dialect's reasoning."""

    TOOL_NAMES = chat.TOOL_NAMES
    MAX_ID_LENGTH = chat.MAX_ID_LENGTH

    def __init__(self, dialect: Dialect, doc: str) -> None:
        self.dialect = dialect
        self.PROVIDER = dialect.name
        self.FORMAT = dialect.label
        self.__doc__ = doc
        self.CAPABILITIES = self.capabilities(None)
        """What the dialect carries for a target model left unknown."""
        self.ROUND_TRIP = dataclasses.replace(
            chat.ROUND_TRIP,
            label=self.FORMAT,
            provider=dialect.name,
            capabilities=self.CAPABILITIES,
            parts=dataclasses.replace(chat.ROUND_TRIP.parts, reasoning=_reasoning_read_back),
            arrange=functools.partial(self._arrange, audio_first=chat.ROUND_TRIP.arrange),
        )
        """The dialect's round trip (for a target model left unknown): Chat Completions' with
        its reasoning read back."""

    def __repr__(self) -> str:
        return f"<codec {self.dialect.name!r} ({self.dialect.label})>"

    # -- encode --------------------------------------------------------------------------

    def capabilities(self, model: str | None) -> Capabilities:
        """What the dialect carries for the target ``model``: Chat Completions' files, and its
        own reasoning with readable text (or an OpenRouter entry) where the model takes it."""
        dialect = self.dialect
        takes = dialect.takes_back(model)

        def replayable(part: ReasoningPart) -> bool:
            if not takes:
                return False
            if dialect.details and isinstance(part.metadata.get(DETAIL), Mapping):
                return True
            return dialect.sends is not None and bool(part.text)

        return dataclasses.replace(chat.CAPABILITIES, replayable=replayable)

    def encode(
        self,
        messages: Iterable[Message],
        *,
        system: str | None = None,
        model: str | None = None,
        integrity: IntegrityMode = "auto",
        reasoning: ReasoningPolicy = "auto",
        unsupported: UnsupportedPolicy = "placeholder",
        text_files: TextFilesPolicy = "unsupported",
    ) -> dict[str, Any]:
        """Write ``messages`` as ``{"messages": [...]}`` for the dialect's chat completions.

        The options, and what they raise, are those of [`threadline.encode`][threadline.encode];
        what is particular to a dialect: ``reasoning="auto"`` replays the dialect's own
        reasoning (to its model, an alias counting as the model it names) in the field the
        dialect takes it back in, where it takes any.

        Args:
            system: sent first, as its own system message.
            model: the target model: its family decides whether reasoning goes back.
        """
        model = self.dialect.model(model)
        return chat.encode_chat(
            messages,
            provider=self.dialect.name,
            capabilities=self.capabilities(model),
            write_reasoning=functools.partial(self._write, model=model),
            system=system,
            model=model,
            integrity=integrity,
            reasoning=reasoning,
            unsupported=unsupported,
            text_files=text_files,
        )

    def _write(
        self, parts: Sequence[ReasoningPart], item: dict[str, Any], *, model: str | None
    ) -> None:
        dialect = self.dialect
        details = [part.metadata[DETAIL] for part in parts if DETAIL in part.metadata]
        texts = [part.text for part in parts if DETAIL not in part.metadata]
        if dialect.details and details:
            item["reasoning_details"] = [dict(detail) for detail in details]
        if dialect.sends is None:
            return
        if texts or (dialect.always and dialect.takes_back(model) and not details):
            item[dialect.sends] = "".join(texts)

    # -- decode --------------------------------------------------------------------------

    def decode(self, payload: Any, *, limits: Limits | None = None) -> list[Message]:
        """Read ``{"messages": [...]}``, a whole request body, or a bare message list, with
        each assistant message's reasoning.

        Args:
            payload: what ``encode`` returned, a whole request body, or a message list.
            limits: how much to read ([`Limits`][]); ``None`` means the defaults.

        Raises:
            threadline.LimitExceededError: the payload exceeds ``limits``.
            threadline.CodecError: ``payload`` is not a payload of the format; the message
                names the JSON path of the first value that does not fit.
            threadline.ValidationError: a value cannot be stored in a message.
        """
        read = functools.partial(
            chat._decode, format_name=self.FORMAT, read_assistant=self._read_assistant
        )
        return read_payload(read, payload, limits, what=f"{self.dialect.name}.decode")

    def decode_response(
        self,
        response: Any,
        *,
        limits: Limits | None = None,
        choice: int = 0,
        model: str | None = None,
    ) -> Message:
        """Read a chat completion (``choices[choice].message``) into an assistant message, its
        reasoning first, tagged with the dialect's codec name and the response's model.

        Args:
            response: the response: a JSON dict, JSON text or the SDK's response object.
            limits: how much to read ([`Limits`][]); ``None`` means the defaults.
            choice: which of the response's ``choices`` to read.
            model: the model the request went to, for a response that names none.

        Raises:
            threadline.LimitExceededError: the response exceeds ``limits``.
            threadline.CodecError: ``response`` is not a chat completion, or holds no choice
                ``choice``.
            ValueError: ``choice`` is negative.
        """
        check_choice(choice)
        read = functools.partial(
            chat._decode_response,
            choice=choice,
            format_name=self.FORMAT,
            provider=self.dialect.name,
            read_assistant=self._read_assistant,
        )
        return read_response(
            read,
            response,
            limits,
            format_name=self.FORMAT,
            what=f"{self.dialect.name}.decode_response",
            model=model,
        )

    def _read_assistant(
        self,
        item: Mapping[str, Any],
        path: str,
        reader: Reader,
        model: str | None,
        parts: list[Any],
    ) -> list[Any]:
        dialect = self.dialect
        provider, model = dialect.name, dialect.model(model)
        found: list[ReasoningPart] = []
        if dialect.details and item.get("reasoning_details") is not None:
            where = f"{path}.reasoning_details"
            for at, raw in enumerate(reader.expect_list(item["reasoning_details"], where)):
                entry = reader.expect_object(raw, f"{where}[{at}]")
                found.append(_detail_part(entry, provider, model))
        if not found:
            for field in dialect.reads:
                text = reader.optional_str(item, field, path)
                if text:
                    found.append(ReasoningPart(text=text, provider=provider, model=model))
                    break
        if dialect.think_tags:
            parts, thought = _split_think(parts)
            if thought:
                found.append(ReasoningPart(text=thought, provider=provider, model=model))
        return [*found, *parts]

    # -- declared losses -----------------------------------------------------------------

    def normalize_for_round_trip(
        self,
        messages: Sequence[Message],
        *,
        model: str | None = None,
        reasoning: ReasoningPolicy = "auto",
        unsupported: UnsupportedPolicy = "placeholder",
        text_files: TextFilesPolicy = "unsupported",
    ) -> list[Message]:
        """What ``decode(encode(messages, ...))`` reads back, for prepared ``messages``.

        Chat Completions' losses (``threadline.codecs.openai_chat.normalize_for_round_trip``),
        and of reasoning: only the dialect's own is sent (to a model that takes it back), as
        one field per message, so several replayed parts read back as one, first in their
        message, with their text only (an OpenRouter entry reads back as it was sent);
        reasoning text in ``content`` (``reasoning="text"``) that starts with ``<think>``
        reads back as reasoning where the dialect reads tags.
        """
        model = self.dialect.model(model)
        spec = self.ROUND_TRIP
        if model is not None:
            spec = dataclasses.replace(spec, capabilities=self.capabilities(model))
        return read_back(
            messages,
            spec,
            model=model,
            reasoning=reasoning,
            unsupported=unsupported,
            text_files=text_files,
        )

    def _arrange(self, parts: list[Part], turn: Turn, *, audio_first: Any) -> list[Part]:
        if audio_first is not None:
            parts = audio_first(parts, turn)
        if turn.role != "assistant":
            return parts
        rest = [part for part in parts if not isinstance(part, ReasoningPart)]
        if not any(isinstance(part, (TextPart, ToolCallPart)) for part in rest):
            return []  # an assistant message with nothing but reasoning is not sent
        own = [part for part in parts if isinstance(part, ReasoningPart)]
        details = [part for part in own if DETAIL in part.metadata]
        texts = "".join(part.text for part in own if DETAIL not in part.metadata)
        reasoning: list[Part] = []
        if self.dialect.details and details:
            reasoning = list(details)
        elif texts and self.dialect.sends is not None:
            reasoning = [ReasoningPart(text=texts, provider=self.dialect.name)]
        if self.dialect.think_tags:
            rest, thought = _split_think(rest)
            if thought:
                reasoning = [*reasoning, ReasoningPart(text=thought, provider=self.dialect.name)]
        return [*reasoning, *rest]


def _reasoning_read_back(part: ReasoningPart, turn: Turn) -> ReasoningPart:
    detail = part.metadata.get(DETAIL)
    if isinstance(detail, Mapping):
        return _detail_part(detail, turn.history.options.provider, None)
    return ReasoningPart(text=part.text, provider=turn.history.options.provider)


def _detail_part(entry: Mapping[str, Any], provider: str, model: str | None) -> ReasoningPart:
    """An OpenRouter ``reasoning_details`` entry as a reasoning part: its text (a summary's
    as its summary), ``data`` as ``encrypted``, its ``signature``; the entry itself kept."""
    kind = entry.get("type")
    field = _DETAIL_TYPES.get(kind) if isinstance(kind, str) else None
    text = entry.get(field) if field is not None else None
    text = text if isinstance(text, str) else ""
    data = entry.get("data")
    signature = entry.get("signature")
    return ReasoningPart(
        text=text if field == "text" else "",
        summary=(text,) if field == "summary" and text else (),
        encrypted=data if isinstance(data, str) else None,
        signature=signature if isinstance(signature, str) else None,
        redacted=kind == "reasoning.encrypted",
        metadata=freeze_json_map({DETAIL: dict(entry)}) or EMPTY,
        provider=provider,
        model=model,
    )


def _split_think(parts: list[Any]) -> tuple[list[Any], str | None]:
    """``parts`` without the ``<think>…</think>`` that starts the first text part, and the
    reasoning inside (``None`` when there is none; see `split_think`)."""
    if not parts or type(parts[0]) is not TextPart or parts[0].metadata:
        return parts, None
    thought, answer = split_think(parts[0].text)
    if thought is None:
        return parts, None
    rest = [TextPart(text=answer)] if answer else []
    return [*rest, *parts[1:]], thought


_CHAT = "OpenAI Chat Completions, as ``threadline.codecs.openai_chat`` writes it"

DEEPSEEK = DialectCodec(
    Dialect(
        name="deepseek",
        label="DeepSeek chat completions",
        reads=("reasoning_content",),
        sends="reasoning_content",
        always=True,
        refusing=("deepseek-r1",),
        aliases={"deepseek-reasoner": "deepseek-v4-flash", "deepseek-chat": "deepseek-v4-flash"},
    ),
    f"""DeepSeek (``api.deepseek.com``): {_CHAT}, with ``reasoning_content``.

Responses and stream deltas carry the reasoning in ``reasoning_content``. In thinking mode
(the default of the V4 models) every assistant message must carry ``reasoning_content`` back:
its own reasoning, else an empty one (``Missing `reasoning_content` field in the assistant
message at message index 2``; ``The reasoning_content in the thinking mode must be passed back
to the API.``). The DeepSeek-R1 family (``deepseek-r1*``) refused the field back (400): it is
never sent to such a model. ``deepseek-reasoner`` and ``deepseek-chat`` are aliases of
``deepseek-v4-flash`` for replay.""",
)
OPENROUTER = DialectCodec(
    Dialect(
        name="openrouter",
        label="OpenRouter chat completions",
        reads=("reasoning",),
        sends="reasoning",
        details=True,
    ),
    f"""OpenRouter (``openrouter.ai/api/v1``): {_CHAT}, with ``reasoning_details``.

Responses and stream deltas carry ``reasoning`` (text) and ``reasoning_details``: a list of
``reasoning.text``, ``reasoning.summary`` and ``reasoning.encrypted`` entries (``id``,
``format``, ``index``, ``signature``) that must come back unchanged for the upstream model to
continue (Gemini 3 and Claude refuse a tool loop without them). Each entry is one reasoning
part keeping the entry in ``metadata["openrouter.reasoning_detail"]``, sent back as it came;
reasoning with text only goes back as ``reasoning``.""",
)
VLLM = DialectCodec(
    Dialect(
        name="vllm",
        label="vLLM chat completions",
        reads=("reasoning_content", "reasoning"),
        think_tags=True,
    ),
    f"""vLLM and SGLang servers: {_CHAT}.

With a reasoning parser the reasoning comes in ``reasoning_content`` (``reasoning`` in newer
vLLM); without one it stays in ``content`` as ``<think>…</think>``, read as reasoning. It is
never sent back: older servers refuse ``reasoning_content`` on a message, and the chat
templates drop past reasoning.""",
)
GROQ = DialectCodec(
    Dialect(name="groq", label="Groq chat completions", reads=("reasoning",), think_tags=True),
    f"""Groq (``api.groq.com/openai/v1``): {_CHAT}.

Reasoning comes in ``reasoning`` (``reasoning_format="parsed"``) or as ``<think>…</think>`` in
``content`` (``"raw"``). Groq refuses both ``reasoning`` and ``reasoning_content`` on an
assistant message (``property 'reasoning' is unsupported``): none is ever sent back.""",
)
QWEN = DialectCodec(
    Dialect(name="qwen", label="Qwen chat completions", reads=("reasoning_content",)),
    f"""Qwen on DashScope's compatible mode (``dashscope…/compatible-mode/v1``): {_CHAT}.

Reasoning comes in ``reasoning_content`` (``enable_thinking``); the documented multi-turn
exchange sends the answer back without it, so it is never sent back.""",
)
MOONSHOT = DialectCodec(
    Dialect(
        name="moonshot",
        label="Moonshot chat completions",
        reads=("reasoning_content",),
        sends="reasoning_content",
        always=True,
    ),
    f"""Moonshot / Kimi (``api.moonshot.ai/v1``): {_CHAT}, with ``reasoning_content``.

Kimi thinking models return ``reasoning_content`` and refuse an assistant tool-call message
without it (``thinking is enabled but reasoning_content is missing in assistant tool call
message``): every assistant message carries its own, else an empty one.""",
)
XAI = DialectCodec(
    Dialect(name="xai", label="xAI chat completions", reads=("reasoning_content",)),
    f"""xAI (``api.x.ai/v1``): {_CHAT}.

``grok-3-mini`` returns ``reasoning_content``; the Grok 4 models return none. It is never
sent back.""",
)
TOGETHER = DialectCodec(
    Dialect(
        name="together",
        label="Together chat completions",
        reads=("reasoning",),
        think_tags=True,
    ),
    f"""Together AI (``api.together.xyz/v1``): {_CHAT}.

Reasoning models return ``reasoning``; DeepSeek-R1 and its distills leave
``<think>…</think>`` in ``content``, read as reasoning. It is never sent back.""",
)

DIALECTS: Mapping[str, DialectCodec] = {
    codec.dialect.name: codec
    for codec in (DEEPSEEK, OPENROUTER, VLLM, GROQ, QWEN, MOONSHOT, XAI, TOGETHER)
}
"""The dialects by codec name."""
