"""The reasoning and unsupported-content policies, the same for every format (private).

A format declares what it can carry as a `Capabilities`; `resolve` applies both
policies to a message in one neutral pass, so the format's part loop only maps parts it is
sure to carry: reasoning it replays, text (including reasoning sent as text under
``reasoning="text"``), `Placeholder` texts, and the other parts it takes. Hook parts
never reach a model and are left out here.

``reasoning_action`` is the replay rule, ``downgrade_reasoning`` the text a ``reasoning="text"``
policy sends, ``unsupported_part`` the ``unsupported`` policy and its placeholder text, and
``inline_text_file`` the text a refused text file is sent as under ``text_files="inline"``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Final
from typing import Literal
from typing import TypeAlias
from typing import TypeGuard
from typing import Union

from threadline.codecs.base import EncodeOptions
from threadline.errors import UnsupportedContentError
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import Part as Part
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

ProviderToolPart: TypeAlias = Union[ProviderToolCallPart, ProviderToolResultPart]  # noqa: UP007

NOT_IN_USER_MESSAGES: Final = (
    ReasoningPart,
    ToolCallPart,
    ToolResultPart,
    HookPart,
    ProviderToolCallPart,
    ProviderToolResultPart,
)
"""The part types a user or system message never holds (``Message`` checks parts per role):
what a part loop over such a message names before it ends in ``assert_never``."""

ReasoningAction: TypeAlias = Literal["replay", "text", "drop"]


def reasoning_action(
    part: ReasoningPart, options: EncodeOptions, *, replayable: bool
) -> ReasoningAction:
    """Decide what a format does with a reasoning part.

    Opaque state is replayed only to the provider that produced it, only when the target
    ``model`` is unknown or is the part's model, and only when the format can carry it
    (``replayable``: Anthropic needs a signature, OpenAI Chat has no field at all). Otherwise
    ``reasoning="text"`` sends the readable text as plain text and ``"auto"`` drops it.
    """
    if options.reasoning == "drop":
        return "drop"
    if (
        replayable
        and part.provider == options.provider
        and (options.model is None or for_model(options.model, part.model))
    ):
        return "replay"
    return "text" if options.reasoning == "text" else "drop"


def for_model(target: str | None, produced: object) -> bool:
    """Whether state ``produced`` by a model (a part's or a message's ``model``) may go to
    ``target``: always when the target is unknown, else when both name the same model
    (`same_model`)."""
    return target is None or (isinstance(produced, str) and same_model(target, produced))


_SNAPSHOT = re.compile(
    r"(?P<alias>.+?)(?:-latest|-\d{4}-\d{2}-\d{2}|[-@]\d{8}|-\d{4}|-\d{3})"
    r"(?P<suffix>-v\d+(?::\d+)?)?"
)
"""A model id with its snapshot mark: ``-latest``, an OpenAI date (``-2025-08-07``), an
Anthropic one (``-20250929``; ``@20250929`` on Vertex), a Mistral ``-YYMM`` or a Gemini
``-NNN`` version, before a Bedrock ``-v1:0`` version."""
_INFERENCE_PROFILE = re.compile(r"(?:us|us-gov|eu|apac|au|ca|jp|global)\.(?P<base>[a-z0-9-]+\..+)")
"""A Bedrock cross-region inference profile id: a geography, then the base model id."""


def model_id(model: str) -> str:
    """``model`` without what only says where it runs: the path of an ARN or resource name
    (``arn:aws:bedrock:...:inference-profile/``, ``models/``) and a Bedrock inference
    profile's geography (``us.``)."""
    model = model.rsplit("/", 1)[-1]
    profile = _INFERENCE_PROFILE.fullmatch(model)
    return profile.group("base") if profile else model


def _untagged(model: str) -> str:
    """``model`` without Ollama's default tag ``:latest`` (``qwen3:latest`` is ``qwen3``)."""
    return model.removesuffix(":latest")


def _alias_of(model: str) -> str | None:
    """The alias a snapshot id stands for (``gpt-5`` for ``gpt-5-2025-08-07``), or ``None``
    for an id without a snapshot mark; ``-latest`` counts as an alias of its own."""
    found = _SNAPSHOT.fullmatch(model)
    if found is None:
        return None
    return found.group("alias") + (found.group("suffix") or "")


def same_model(first: str, second: str) -> bool:
    """Whether two model ids name the same model, for replaying reasoning.

    Equal ids do; so do an alias and a snapshot of it (``claude-sonnet-4-5`` and
    ``claude-sonnet-4-5-20250929``, ``gpt-5`` and ``gpt-5-2025-08-07``, ``gemini-2.0-flash``
    and ``gemini-2.0-flash-001``, ``mistral-medium-latest`` and ``mistral-medium-2508``), and
    a Bedrock inference profile, its ARN and its base model id
    (``us.anthropic.claude-...``, ``anthropic.claude-...``), and an Ollama model and its
    default tag (``qwen3``, ``qwen3:latest``). Two different snapshots do not:
    an alias may have moved from one to the other. A Gemini ``-preview-MM-DD`` model is a
    model of its own, and an application inference profile's ARN names no model.
    """
    first, second = model_id(first), model_id(second)
    if first == second or _untagged(first) == _untagged(second):
        return True
    first_alias, second_alias = _alias_of(first), _alias_of(second)
    if first_alias is not None and second_alias is not None:
        latest = first.endswith("-latest") or second.endswith("-latest")
        return latest and first_alias == second_alias
    return first == second_alias or second == first_alias


def downgrade_reasoning(part: ReasoningPart) -> list[TextPart]:
    """The readable text of a reasoning part as text parts (none for redacted reasoning).

    The text itself when there is one, else one text part per summary entry: parts are never
    joined, so no separator is invented.
    """
    if part.text:
        return [TextPart(text=part.text)]
    return [TextPart(text=entry) for entry in part.summary if entry]


def is_one_of(value: object, choices: Collection[str]) -> TypeGuard[str]:
    """Whether ``value`` is one of the strings ``choices``.

    For values read from metadata or a payload, which may be any JSON: ``value in choices``
    raises ``TypeError`` for a list or an object when ``choices`` is a set or a dict.
    """
    return isinstance(value, str) and value in choices


def is_blank(text: str) -> bool:
    """Empty or whitespace only: text some APIs refuse in a text block."""
    return not text or text.isspace()


def placeholder_text(part: object, provider: str) -> str:
    """``[<media_type> omitted: not supported by <provider>]``.

    For a part that is not a file, the part's ``type`` tag stands in for the media type
    (``[provider_tool_call omitted: ...]``).
    """
    label = part.media_type if isinstance(part, FilePart) else getattr(part, "type", "part")
    return f"[{label} omitted: not supported by {provider}]"


def unsupported_part(
    part: object,
    message: Message,
    position: tuple[int, int],
    options: EncodeOptions,
    *,
    reason: str,
) -> TextPart | None:
    """Apply the ``unsupported`` policy to a part the format cannot carry.

    Returns the placeholder text part, or ``None`` to drop the part.

    Args:
        part: the part (or the file inside a tool result) that cannot be sent.
        message: the prepared message holding it.
        position: its (message index, part index) in the prepared list.
        options: the encode options.
        reason: why the format cannot carry it, for the error message.

    Raises:
        threadline.UnsupportedContentError: ``unsupported="raise"``.
    """
    if options.unsupported == "placeholder":
        return TextPart(text=placeholder_text(part, options.provider))
    if options.unsupported == "drop":
        return None
    label = part.media_type if isinstance(part, FilePart) else getattr(part, "type", "part")
    index, part_index = options.locate(message, part, position)
    raise UnsupportedContentError(
        f"{options.provider} cannot carry the {label} part at messages[{index}].parts"
        f"[{part_index}] (message id {message.id!r}): {reason}. Pass "
        "unsupported='placeholder' to send a placeholder text instead, or 'drop' to leave it out",
        provider=options.provider,
        message_index=index,
        part_index=part_index,
    )


_TEXT_APPLICATION_TYPES = frozenset(
    {"application/json", "application/csv", "application/x-ndjson", "application/jsonl"}
)


def is_text_media_type(media_type: str) -> bool:
    """Whether files of ``media_type`` hold text: ``text/*`` (CSV, Markdown, plain text...),
    JSON (``application/json``, ``application/*+json``), ``application/csv``, JSON Lines."""
    base = media_type.split(";", 1)[0].strip().lower()
    return base.startswith("text/") or base in _TEXT_APPLICATION_TYPES or base.endswith("+json")


def inline_text_file(part: FilePart, options: EncodeOptions) -> TextPart | None:
    """The text a refused file is sent as under ``text_files="inline"``:
    ``<file name="…" media_type="…">\\n{its text}\\n</file>``. ``None`` (the unsupported
    policy applies) for other policies, other media types, files by URL and bytes that are not
    UTF-8."""
    if options.text_files != "inline" or part.data is None:
        return None
    if not is_text_media_type(part.media_type):
        return None
    try:
        text = part.data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    name = "" if part.filename is None else f" name={json.dumps(part.filename, ensure_ascii=False)}"
    media_type = json.dumps(part.media_type, ensure_ascii=False)
    return TextPart(text=f"<file{name} media_type={media_type}>\n{text}\n</file>")


@dataclasses.dataclass(frozen=True, slots=True)
class Placeholder:
    """The text sent where a part the format cannot carry stood (``unsupported="placeholder"``).

    Not a `TextPart`, so a format can still tell a placeholder from the caller's text
    where it writes the two differently (a lone text is a plain string in some formats).
    """

    text: str


def _no_provider_tools(part: ProviderToolPart, before: Sequence[object]) -> bool:
    return False


@dataclasses.dataclass(frozen=True, slots=True)
class Capabilities:
    """What a format can carry, declared once by its module and read by `resolve`.

    Text, reasoning and hook parts are decided by the policies; a tool call always goes, and a
    tool result goes in a tool message only.
    """

    replayable: Callable[[ReasoningPart], bool]
    """Whether the format has a place for this reasoning part's opaque state (a signature,
    encrypted content, an item id); only then can it be replayed to its producer."""
    carries_file: Callable[[FilePart, str], bool]
    """Whether the format takes this file in a message of this role (``tool``: inside a tool
    result)."""
    file_reasons: Mapping[str, str]
    """Why a file is refused, by role; ``user`` stands for every role not named."""
    no_place: str
    """Why any other part is refused."""
    carries_provider_tool: Callable[[ProviderToolPart, Sequence[object]], bool] = _no_provider_tools
    """Whether the format can send a provider tool part back, given the parts before it in its
    message (a result may need its call to have gone)."""
    provider_tool_reason: str | None = None
    """Why a provider tool part is refused, when not for ``no_place``."""

    def refuses(self, part: Part, message: Message, part_index: int) -> str | None:
        """Why the format cannot carry ``part`` (at ``part_index`` of ``message``; for a file in
        a tool result, the result's index), or ``None`` when it can."""
        if isinstance(part, FilePart):
            if self.carries_file(part, message.role):
                return None
            return self.file_reasons.get(message.role, self.file_reasons["user"])
        if isinstance(part, (ProviderToolCallPart, ProviderToolResultPart)):
            if self.carries_provider_tool(part, message.parts[:part_index]):
                return None
            return self.provider_tool_reason or self.no_place
        if isinstance(part, ToolResultPart) and message.role != "tool":
            return self.no_place
        return None


Resolved: TypeAlias = Union[Part, Placeholder]  # noqa: UP007 (Part is Annotated)
"""What `resolve` gives a format to map."""


def resolve(
    message: Message, index: int, options: EncodeOptions, capabilities: Capabilities
) -> Sequence[Resolved]:
    """Apply the reasoning and unsupported policies to ``message``, part by part, in order.

    Replayed reasoning stays a `ReasoningPart`; reasoning sent as text becomes text
    parts; a part the format refuses becomes a `Placeholder` or is dropped, and so does a
    refused file inside a tool result (as a text item of the result); with
    ``text_files="inline"``, a refused text file becomes a text part of its text instead
    (`inline_text_file`). Hook parts are left out.

    Args:
        message: a prepared message.
        index: its index in the prepared list, for errors.
        options: the encode options.
        capabilities: what the format can carry.

    Raises:
        threadline.UnsupportedContentError: ``unsupported="raise"`` and the first part the
            format refuses.
    """
    ready = _ready(message, index, options, capabilities)
    if ready is not None:
        return ready if ready is message.parts else list(ready)
    return [part for _, part in resolve_parts(message, index, options, capabilities)]


def resolve_indexed(
    message: Message, index: int, options: EncodeOptions, capabilities: Capabilities
) -> Sequence[tuple[int, Resolved]]:
    """`resolve`, each part with the index in ``message.parts`` of the part it stands for:
    the text parts of reasoning sent as text, a placeholder and an inlined file share the
    index of the part they replace. For a format whose mapping depends on where a part was
    (OpenAI Responses ties the item ids after a reasoning part to it)."""
    ready = _ready(message, index, options, capabilities)
    if ready is not None:
        return list(enumerate(message.parts))[len(message.parts) - len(ready) :]
    return resolve_parts(message, index, options, capabilities)


def _ready(
    message: Message, index: int, options: EncodeOptions, capabilities: Capabilities
) -> Sequence[Resolved] | None:
    """`Scan.ready` for ``message`` alone (a prepared history's loop takes it from
    `PreparedHistory.parts` instead; this is for a changed copy, such as a system note)."""
    found: list[Sequence[Resolved] | None] = []
    _scan_into((message,), options, capabilities, found, {}, {})
    return found[0]


@dataclasses.dataclass(frozen=True, slots=True)
class Scan:
    """What one walk over the prepared messages found: `scan`'s result."""

    ready: list[Sequence[Resolved] | None]
    """Per message, what `resolve` gives for it when nothing in it is to be resolved: its
    parts, or the ones after its leading dropped reasoning; else
    ``None``."""
    call_ids: dict[str, None]
    """The ids of the tool calls and tool results, each once, in order of appearance."""
    tool_names: dict[str, None]
    """The names of the tool calls and named tool results, each once."""


def scan(messages: Sequence[Message], options: EncodeOptions, capabilities: Capabilities) -> Scan:
    """Walk ``messages`` once for everything an ``encode`` needs of each message before it
    maps it: `resolve`'s shortcut, the tool-call ids and the tool names.

    The shortcut is for the messages most histories hold, which have nothing to resolve. When
    every part is one every format carries as it is (text, tool calls, a text result in a tool
    message) or reasoning that is replayed, except for reasoning that is dropped and comes
    before all of them: how many parts that dropped reasoning is (often 0). ``None`` when
    anything else needs `resolve_parts`, which decides the same way, part by part.
    """
    out = Scan([], {}, {})
    _scan_into(messages, options, capabilities, out.ready, out.call_ids, out.tool_names)
    return out


def _scan_into(
    messages: Sequence[Message],
    options: EncodeOptions,
    capabilities: Capabilities,
    found: list[Sequence[Resolved] | None],
    call_ids: dict[str, None],
    tool_names: dict[str, None],
) -> None:
    provider = options.provider
    model = options.model
    replayable = capabilities.replayable
    drop_all = options.reasoning == "drop"
    drop_foreign = options.reasoning == "auto"
    add = found.append
    for message in messages:
        parts = message.parts
        leading: int | None = 0
        kept = False
        tool = message.role == "tool"
        for part in parts:
            # ``Message`` admits each part class itself, never a subclass: ``type(part) is``
            # tests cost less than ``isinstance`` calls; a tool message's results first, then
            # the assistant's parts in the order they usually come
            if tool and type(part) is ToolResultPart:
                call_ids[part.call_id] = None
                if part.name is not None:
                    tool_names[part.name] = None
                if leading is None:  # decided: only the ids and names are still looked for
                    pass
                elif type(part.content) is str:
                    kept = True
                else:
                    leading = None
            elif type(part) is TextPart:
                kept = True
            elif type(part) is ReasoningPart:
                if leading is None:
                    pass
                elif drop_all or (drop_foreign and part.provider != provider):
                    if kept:
                        leading = None
                    else:
                        leading += 1  # never replayed, never sent as text: dropped
                elif (
                    part.provider == provider
                    and (model is None or for_model(model, part.model))
                    and replayable(part)
                ):
                    kept = True
                else:
                    leading = None  # not replayed (`reasoning_action`): resolved part by part
            elif type(part) is ToolCallPart:
                kept = True
                call_ids[part.id] = None
                tool_names[part.name] = None
            else:
                leading = None
        add(None if leading is None else parts[leading:] if leading else parts)


def resolve_parts(
    message: Message, index: int, options: EncodeOptions, capabilities: Capabilities
) -> list[tuple[int, Resolved]]:
    """`resolve_indexed` decided part by part, without the shortcut (for a message the
    shortcut of `scan` found something to resolve in)."""
    out: list[tuple[int, Resolved]] = []
    for part_index, part in enumerate(message.parts):
        if isinstance(part, TextPart):
            out.append((part_index, part))
        elif isinstance(part, HookPart):
            pass  # UI state: never sent
        elif isinstance(part, ReasoningPart):
            action = reasoning_action(part, options, replayable=capabilities.replayable(part))
            if action == "replay":
                out.append((part_index, part))
            elif action == "text":
                out.extend((part_index, text) for text in downgrade_reasoning(part))
        elif (reason := capabilities.refuses(part, message, part_index)) is not None:
            if (
                isinstance(part, FilePart)
                and (inlined := inline_text_file(part, options)) is not None
            ):
                out.append((part_index, inlined))
                continue
            replacement = unsupported_part(
                part, message, (index, part_index), options, reason=reason
            )
            if replacement is not None:
                out.append((part_index, Placeholder(replacement.text)))
        elif isinstance(part, ToolResultPart):
            result = _resolve_result(part, message, (index, part_index), options, capabilities)
            out.append((part_index, result))
        else:
            out.append((part_index, part))
    return out


def unanchored_reasoning(part: ReasoningPart, options: EncodeOptions) -> list[TextPart]:
    """What replayable reasoning sends when nothing after it can name it as its producer.

    A format may link a reasoning item to the output items it produced by their ids (OpenAI
    Responses does, and refuses a reasoning item the next item of which carries no id): such
    reasoning goes out only when followed by an output item with an id. Otherwise it is
    reasoning the format cannot replay, and the reasoning policy decides as for any other:
    its text under ``reasoning="text"``, nothing else.
    """
    return downgrade_reasoning(part) if options.reasoning == "text" else []


def _resolve_result(
    part: ToolResultPart,
    message: Message,
    position: tuple[int, int],
    options: EncodeOptions,
    capabilities: Capabilities,
) -> ToolResultPart:
    if isinstance(part.content, str):
        return part
    items: list[TextPart | FilePart] = []
    changed = False
    for item in part.content:
        reason = (
            None if isinstance(item, TextPart) else capabilities.refuses(item, message, position[1])
        )
        if reason is None:
            items.append(item)
            continue
        changed = True
        if isinstance(item, FilePart) and (inlined := inline_text_file(item, options)) is not None:
            items.append(inlined)
            continue
        replacement = unsupported_part(item, message, position, options, reason=reason)
        if replacement is not None:
            items.append(replacement)
    return dataclasses.replace(part, content=tuple(items)) if changed else part


def carried(block: dict[str, Any] | None) -> dict[str, Any]:
    """``block``, the wire form of a part `resolve` kept, which is never ``None``."""
    if block is None:
        raise AssertionError("resolve kept a part the format refuses")
    return block


def never_refused(part: FilePart) -> dict[str, Any] | None:
    """The unsupported hook for tool-result helpers after `resolve`: never called."""
    raise AssertionError(f"resolve kept a {part.media_type} file the format refuses")
