"""Reading the GenAI semantic conventions' message attributes (private): the reader behind
``threadline.interop.otel.from_otel_messages``, and the names both directions share."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Final

from threadline.codecs._media import decode_base64
from threadline.codecs._media import parse_data_url
from threadline.codecs._reading import Reader
from threadline.limits import Layout
from threadline.limits import Limits
from threadline.limits import enforce_limits
from threadline.limits import parse_arguments
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

__all__ = ["CARRY", "FILE_TYPES", "FINISH", "FORMAT", "Reading", "modality"]

FORMAT: Final = "OpenTelemetry GenAI"
CARRY: Final = "otel."
"""The metadata prefix of properties threadline has no field for."""
FINISH: Final = "otel.finish_reason"
"""The metadata key of an output message's ``finish_reason``."""
_WHAT: Final = "otel.from_otel_messages"
_LAYOUT: Final = Layout("messages", ("parts",))

_ROLES: Final = {
    "system": "system",
    "developer": "system",  # OpenAI's name for system instructions in the history
    "user": "user",
    "assistant": "assistant",
    "model": "assistant",  # Gemini's name for the assistant
    "tool": "tool",
}
_PART_FIELDS: Final = {
    # The properties each part type is read from; any other is carried in the part's metadata.
    "text": ("type", "content"),
    "reasoning": ("type", "content"),
    "tool_call": ("type", "id", "name", "arguments"),
    "tool_call_response": ("type", "id", "response", "name", "is_error"),
    "blob": ("type", "modality", "mime_type", "content", "filename"),
    "uri": ("type", "modality", "mime_type", "uri", "filename"),
    "server_tool_call": ("type", "id", "name", "server_tool_call", "provider"),
    "server_tool_call_response": (
        "type",
        "id",
        "server_tool_call_response",
        "provider",
        "is_error",
    ),
}
FILE_TYPES: Final = ("blob", "uri")
_UNKNOWN_MEDIA: Final = "application/octet-stream"
_MODALITIES: Final = (("image/", "image"), ("video/", "video"), ("audio/", "audio"))


def modality(media_type: str) -> str:
    """The conventions' ``modality`` of a media type: image, video, audio, else document."""
    lowered = media_type.lower()
    for prefix, kind in _MODALITIES:
        if lowered.startswith(prefix):
            return kind
    return "document"


class Reading:
    """One ``from_otel_messages`` call: its reader, limits and the span's provider, and the
    tool calls that came without an id (answered, in order, by responses without one)."""

    __slots__ = ("limits", "pending", "provider", "reader", "serial")

    def __init__(self, reader: Reader, limits: Limits, provider: str | None) -> None:
        self.reader = reader
        self.limits = limits
        self.provider = provider
        self.pending: list[str] = []
        self.serial = 0

    def document(self, attributes: Mapping[str, Any], key: str, *, layout: bool) -> Any:
        value = attributes.get(key)
        if value is None:
            return None
        return enforce_limits(
            value,
            self.limits,
            what=_WHAT,
            layout=_LAYOUT if layout else None,
            path=key,
            depth=1,
        )

    # -- messages

    def chat_message(self, raw: Any, path: str, *, output: bool) -> list[Message]:
        reader = self.reader
        item = reader.expect_object(raw, path)
        given = reader.str_field(item, "role", path)
        role = _ROLES.get(given)
        if role is None:
            reader.fail(
                f"{path}.role",
                f"unknown role {given!r} (system, user, assistant or tool; developer is read "
                "as system and model as assistant)",
            )
        if output and role != "assistant":
            reader.fail(f"{path}.role", f"an output message is the model's, not {given!r}")
        carried = {
            CARRY + key: value
            for key, value in item.items()
            if key not in ("role", "parts", "finish_reason")
        }
        if given != role:
            carried[CARRY + "role"] = given
        if output:
            reason = item.get("finish_reason")
            if reason is not None:
                carried[FINISH] = reader.expect_str(reason, f"{path}.finish_reason")
        parts: list[Any] = []
        results: list[ToolResultPart] = []
        for where, block, kind in reader.tagged_objects(
            reader.field(item, "parts", path), f"{path}.parts"
        ):
            if kind == "tool_call_response":
                results.append(self.tool_result(block, where))
            else:
                parts.append(self.part(block, kind, where, role))
        if role == "tool" and parts:
            reader.fail(
                f"{path}.parts",
                "a tool message holds tool_call_response parts only; put other content in a "
                "user or assistant message",
            )
        out: list[Message] = []
        if results and role != "assistant":
            out.append(self.message("tool", results, carried if not parts else {}, path))
        if parts:
            out.append(self.message(role, parts, carried, path))
        if results and role == "assistant":
            out.append(self.message("tool", results, {}, path))
        if not out:
            reader.fail(f"{path}.parts", "a message needs at least one part")
        return out

    def message(
        self, role: str, parts: Sequence[Any], metadata: Mapping[str, Any], path: str
    ) -> Message:
        fields: dict[str, Any] = {"role": role, "parts": tuple(parts)}
        if metadata:
            fields["metadata"] = metadata
        return self.reader.part(Message, dict(metadata), path, **fields)

    def system_parts(self, document: Any, path: str) -> list[TextPart]:
        return [
            self.text(block, where)
            if kind == "text"
            else self.refuse(kind, where, "system instructions hold text parts only")
            for where, block, kind in self.reader.tagged_objects(document, path)
        ]

    # -- parts

    def part(self, block: Mapping[str, Any], kind: str, path: str, role: str) -> Any:
        if kind == "text":
            return self.text(block, path)
        if role == "system":
            return self.refuse(kind, path, "a system message holds text parts only")
        if kind in FILE_TYPES:
            return self.file(block, kind, path)
        if role != "assistant":
            return self.refuse(kind, path, f"a {role} message holds text, blob and uri parts")
        if kind == "reasoning":
            content = self.reader.str_field(block, "content", path)
            return self.build(ReasoningPart, block, kind, path, text=content)
        if kind == "tool_call":
            return self.tool_call(block, path)
        if kind == "server_tool_call":
            return self.server_call(block, path)
        if kind == "server_tool_call_response":
            return self.server_result(block, path)
        state = {key: value for key, value in block.items() if key != "type"}
        return self.reader.part(HookPart, block, path, name=CARRY + kind, state=state)

    def refuse(self, kind: str, path: str, rule: str) -> Any:
        if kind == "file":
            problem = (
                "a file part refers to a file uploaded to the provider by id, which threadline "
                "cannot hold outside an assistant message; record the file as a blob or uri "
                "part, or remove the part before loading"
            )
        else:
            problem = f"{rule}, not {kind!r}; remove the part or map it before loading"
        self.reader.fail(f"{path}.type", problem)

    def build(self, cls: Any, block: Mapping[str, Any], kind: str, path: str, **fields: Any) -> Any:
        used = _PART_FIELDS[kind]
        carried = {CARRY + key: value for key, value in block.items() if key not in used}
        if carried:
            fields["metadata"] = carried
        return self.reader.part(cls, block, path, **fields)

    def text(self, block: Mapping[str, Any], path: str) -> TextPart:
        content = self.reader.str_field(block, "content", path)
        part: TextPart = self.build(TextPart, block, "text", path, text=content)
        return part

    def file(self, block: Mapping[str, Any], kind: str, path: str) -> FilePart:
        reader = self.reader
        mime = reader.optional_str(block, "mime_type", path)
        media_type = reader.media_type(mime, f"{path}.mime_type") if mime else _UNKNOWN_MEDIA
        fields: dict[str, Any] = {"media_type": media_type}
        filename = reader.optional_str(block, "filename", path)
        if filename is not None:
            fields["filename"] = filename
        if kind == "blob":
            content = reader.str_field(block, "content", path)
            fields["data"] = decode_base64(content, reader, f"{path}.content")
        else:
            url = reader.str_field(block, "uri", path)
            inline = parse_data_url(url, reader, f"{path}.uri")
            if inline is not None:
                fields["data"] = inline[1]
            else:
                fields["url"] = url
        given = block.get("modality")
        part: FilePart = self.build(FilePart, block, kind, path, **fields)
        if given is not None and given != modality(media_type):
            part = part.with_metadata({CARRY + "modality": given})
        return part

    def next_id(self) -> str:
        self.serial += 1
        return f"otel_call_{self.serial}"

    def tool_call(self, block: Mapping[str, Any], path: str) -> ToolCallPart:
        reader = self.reader
        call_id = reader.optional_str(block, "id", path)
        if call_id is None:
            call_id = self.next_id()
            self.pending.append(call_id)
        name = reader.str_field(block, "name", path)
        value = block.get("arguments")
        raw: str | None = None
        if value is None:
            arguments: Any = {}
        elif isinstance(value, Mapping):
            arguments = value
        elif isinstance(value, str):
            parsed = parse_arguments(value, self.limits, what=_WHAT, path=f"{path}.arguments")
            arguments, raw = (parsed, None) if parsed is not None else ({}, value)
        else:
            arguments, raw = {}, reader.json_text(value, f"{path}.arguments")
        part: ToolCallPart = self.build(
            ToolCallPart,
            block,
            "tool_call",
            path,
            id=call_id,
            name=name,
            arguments=arguments,
            raw_arguments=raw,
        )
        return part

    def tool_result(self, block: Mapping[str, Any], path: str) -> ToolResultPart:
        reader = self.reader
        call_id = reader.optional_str(block, "id", path)
        if call_id is None:
            if not self.pending:
                reader.fail(
                    f"{path}.id",
                    "a tool_call_response without an id answers a tool_call without one, and "
                    "no such call is waiting for its response",
                )
            call_id = self.pending.pop(0)
        key = "response" if "response" in block or "result" not in block else "result"
        if key not in block:
            reader.fail(f"{path}.response", "required but missing")
        value = block[key]
        content: Any
        if isinstance(value, str):
            content = value
        elif _is_parts(value):
            content = tuple(
                self.result_item(item, f"{path}.{key}[{i}]") for i, item in enumerate(value)
            )
        else:
            content = reader.json_text(value, f"{path}.{key}")
        fields: dict[str, Any] = {"call_id": call_id, "content": content}
        name = reader.optional_str(block, "name", path)
        if name is not None:
            fields["name"] = name
        is_error = block.get("is_error", False)
        if not isinstance(is_error, bool):
            reader.fail(f"{path}.is_error", "expected true or false")
        fields["is_error"] = is_error
        if key == "result":  # read as the response: not carried besides
            block = {name: value for name, value in block.items() if name != "result"}
        part: ToolResultPart = self.build(
            ToolResultPart, block, "tool_call_response", path, **fields
        )
        return part

    def result_item(self, item: Mapping[str, Any], path: str) -> TextPart | FilePart:
        kind = item["type"]
        return self.text(item, path) if kind == "text" else self.file(item, kind, path)

    def server_call(self, block: Mapping[str, Any], path: str) -> ProviderToolCallPart:
        reader = self.reader
        details = reader.expect_object(
            reader.field(block, "server_tool_call", path), f"{path}.server_tool_call"
        )
        part: ProviderToolCallPart = self.build(
            ProviderToolCallPart,
            block,
            "server_tool_call",
            path,
            id=reader.optional_str(block, "id", path) or self.next_id(),
            name=reader.str_field(block, "name", path),
            input=_unwrap(details, "input"),
            provider=self.part_provider(block, path),
        )
        return part

    def server_result(self, block: Mapping[str, Any], path: str) -> ProviderToolResultPart:
        reader = self.reader
        where = f"{path}.server_tool_call_response"
        details = reader.expect_object(
            reader.field(block, "server_tool_call_response", path), where
        )
        call_id = reader.optional_str(block, "id", path)
        if call_id is None:
            reader.fail(f"{path}.id", "a server_tool_call_response needs the id of its call")
        is_error = block.get("is_error", False)
        if not isinstance(is_error, bool):
            reader.fail(f"{path}.is_error", "expected true or false")
        part: ProviderToolResultPart = self.build(
            ProviderToolResultPart,
            block,
            "server_tool_call_response",
            path,
            call_id=call_id,
            content=_unwrap(details, "content"),
            provider=self.part_provider(block, path),
            is_error=is_error,
        )
        return part

    def part_provider(self, block: Mapping[str, Any], path: str) -> str:
        given = self.reader.optional_str(block, "provider", path)
        return given or self.provider or "otel"


def _is_parts(value: Any) -> bool:
    """Whether a tool response is a list of text, blob and uri parts (a result made of parts,
    as ``to_otel_messages`` writes one), not some other JSON value."""
    return (
        isinstance(value, (list, tuple))
        and bool(value)
        and all(
            isinstance(item, Mapping) and item.get("type") in ("text", *FILE_TYPES)
            for item in value
        )
    )


def _unwrap(details: Mapping[str, Any], key: str) -> Any:
    """A provider tool's input or result: what ``to_otel_messages`` wrapped as
    ``{"type": name, key: value}``, or the details object itself."""
    if set(details) == {"type", key}:
        return details[key]
    return details
