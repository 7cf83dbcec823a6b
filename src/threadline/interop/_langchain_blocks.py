"""LangChain content blocks <-> threadline parts (private; the contract is interop.langchain).

A block becomes one part. What the part has no field for stays in the part's metadata under
``langchain.*`` keys, so the block comes back as it was:

- ``langchain.block``: the block without the values the part holds (its *form*: an OpenAI
  ``image_url`` block with its ``detail``, a v0 block with its ``source_type``, a text block
  with its ``id`` or ``annotations``). Absent when the block had the default form, which is
  what a part without the key is written as (the v1 standard form; Anthropic ``thinking`` for
  reasoning only Anthropic can replay);
- ``langchain.string``: the text came as a bare string item of a content list;
- ``langchain.no_mime_type``: a URL block had no ``mime_type`` (the part's media type was
  guessed from the URL).

A block's ``extras`` (provider-specific details, the v1 forms' slot for them) is the part's
``metadata``; a few extras have a field of their own (a reasoning ``signature``, a file's
``filename``).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any
from typing import NoReturn

from typing_extensions import assert_never

from threadline.codecs._media import data_url
from threadline.codecs._media import encode_base64
from threadline.codecs._media import media_type_from_url
from threadline.errors import ErrorDetail
from threadline.errors import ValidationError
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Part
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart
from threadline.messages import is_media_type

__all__ = [
    "BLOCK",
    "NO_MIME_TYPE",
    "STRING",
    "UNKNOWN_PROVIDER",
    "block_of",
    "fail",
    "file_block",
    "part_of",
]

BLOCK = "langchain.block"
STRING = "langchain.string"
NO_MIME_TYPE = "langchain.no_mime_type"
_MARKERS = frozenset({BLOCK, STRING, NO_MIME_TYPE})

# Reasoning fields that ride in a v1 reasoning block's extras.
_REASONING_EXTRAS = {
    "signature": "signature",
    "encrypted_content": "encrypted",
    "threadline.redacted": "redacted",
    "threadline.provider": "provider",
    "threadline.model": "model",
    "threadline.summary": "summary",
}
_DATA_KINDS = ("image", "audio", "video", "file")
_REFUSAL = "openai.refusal"
UNKNOWN_PROVIDER = "langchain"
"""The provider of a server tool block that does not name one in ``extras``."""


def fail(path: str, problem: str) -> NoReturn:
    """Raise the [`ValidationError`][threadline.ValidationError] for the value at ``path``."""
    detail = ErrorDetail(path, problem, "langchain")
    raise ValidationError(f"cannot convert from LangChain: {detail}", [detail])


# ---------------------------------------------------------------------------------------------
# LangChain -> threadline


def part_of(block: object, path: str, allowed: frozenset[str]) -> dict[str, Any]:
    """The part a content item becomes, as the mapping of its fields (validated with its
    message, in one call: far cheaper than building each part); a ``str`` is a text part.

    ``allowed`` names the part kinds the message may hold: ``text``, ``file``, ``reasoning``,
    ``provider``.

    Raises:
        threadline.ValidationError: a block no part can carry, naming ``path``.
    """
    if isinstance(block, str):
        return {"type": "text", "text": block, "metadata": {STRING: True}}
    if not isinstance(block, Mapping):
        fail(path, f"a content item is a str or a dict, not {type(block).__name__}")
    kind = block.get("type")
    reader = _READERS.get(kind) if isinstance(kind, str) else None
    if reader is None:
        reader = _file_reader(block)
    if reader is None:
        fail(
            path,
            f"threadline cannot carry a content block of type {kind!r}; the blocks it reads "
            "are text, refusal, image/audio/video/file/text-plain (v1 and v0 forms), "
            "image_url, file and input_audio (OpenAI forms), reasoning, thinking, "
            "redacted_thinking, server_tool_call and server_tool_result",
        )
    group, read = reader
    if group not in allowed:
        fail(path, f"a {kind!r} block cannot be in this message ({_WHERE[group]})")
    return read(block, path)


_WHERE = {
    "text": "",
    "file": "files go in human messages and tool results",
    "reasoning": "reasoning goes in AI messages",
    "provider": "server tool blocks go in AI messages",
}


def _metadata(
    extras: object, template: dict[str, Any], default: Mapping[str, Any], **markers: Any
) -> dict[str, Any]:
    metadata: dict[str, Any] = dict(extras) if isinstance(extras, Mapping) and extras else {}
    if extras is not None and not metadata:
        template["extras"] = extras  # an empty or odd extras comes back as it was
    if template != default:
        metadata[BLOCK] = template
    metadata.update({key: value for key, value in markers.items() if value})
    return metadata


def _left(original: object, extras: dict[str, Any]) -> object:
    """What is left of a block's ``extras`` once threadline's own keys are taken out: ``None``
    when they were all it held (so the block does not come back with an empty ``extras``)."""
    if not extras and isinstance(original, Mapping) and original:
        return None
    return extras if isinstance(original, Mapping) else original


def _rest(block: Mapping[str, Any], *payload: str) -> dict[str, Any]:
    return {key: value for key, value in block.items() if key not in payload}


def _string(block: Mapping[str, Any], key: str, path: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        fail(f"{path}.{key}", f"expected a str, got {type(value).__name__}")
    return value


def _text(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    text = _string(block, "text", path)
    template = _rest(block, "text", "extras")
    metadata = _metadata(block.get("extras"), template, {"type": "text"})
    return {"type": "text", "text": text, "metadata": metadata}


def _refusal(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    text = _string(block, "refusal", path)
    template = _rest(block, "refusal", "extras")
    metadata = _metadata(block.get("extras"), template, {"type": "refusal"})
    metadata[_REFUSAL] = True
    return {"type": "text", "text": text, "metadata": metadata}


def _thinking(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    signature = block.get("signature")
    if signature is not None and not isinstance(signature, str):
        fail(f"{path}.signature", f"expected a str, got {type(signature).__name__}")
    template = _rest(block, "thinking", "signature")
    return {
        "type": "reasoning",
        "text": _string(block, "thinking", path),
        "signature": signature,
        "provider": "anthropic",
        "metadata": _metadata(None, template, {"type": "thinking"}),
    }


def _redacted_thinking(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    template = _rest(block, "data")
    return {
        "type": "reasoning",
        "encrypted": _string(block, "data", path),
        "redacted": True,
        "provider": "anthropic",
        "metadata": _metadata(None, template, {"type": "redacted_thinking"}),
    }


def _reasoning(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    fields: dict[str, Any] = {"type": "reasoning"}
    text = block.get("reasoning", "")
    if not isinstance(text, str):
        fail(f"{path}.reasoning", f"expected a str, got {type(text).__name__}")
    fields["text"] = text
    template = _rest(block, "reasoning", "extras")
    item_id = block.get("id")
    if isinstance(item_id, str):
        fields["item_id"] = item_id
        del template["id"]
    original = block.get("extras")
    extras = dict(original) if isinstance(original, Mapping) else {}
    for key, field in _REASONING_EXTRAS.items():
        if key in extras:
            value = extras.pop(key)
            fields[field] = tuple(value) if field == "summary" else value
    fields["metadata"] = _metadata(_left(original, extras), template, {"type": "reasoning"})
    return fields


def _server_tool_call(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    original = block.get("extras")
    extras = dict(original) if isinstance(original, Mapping) else {}
    provider = extras.pop("threadline.provider", None) or UNKNOWN_PROVIDER
    value = extras.pop("threadline.input", block.get("args"))
    template = _rest(block, "id", "name", "args", "extras")
    return {
        "type": "provider_tool_call",
        "id": _string(block, "id", path),
        "name": _string(block, "name", path),
        "input": value,
        "provider": provider,
        "metadata": _metadata(_left(original, extras), template, {"type": "server_tool_call"}),
    }


def _server_tool_result(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    original = block.get("extras")
    extras = dict(original) if isinstance(original, Mapping) else {}
    provider = extras.pop("threadline.provider", None) or UNKNOWN_PROVIDER
    template = _rest(block, "tool_call_id", "status", "output", "extras")
    if block.get("status") != "error":
        template.pop("status", None)
    return {
        "type": "provider_tool_result",
        "call_id": _string(block, "tool_call_id", path),
        "content": block.get("output"),
        "provider": provider,
        "is_error": block.get("status") == "error",
        "metadata": _metadata(_left(original, extras), template, {"type": "server_tool_result"}),
    }


def _bytes(text: object, path: str) -> bytes:
    if not isinstance(text, str):
        fail(path, f"expected base64 text, got {type(text).__name__}")
    try:
        if "-" in text or "_" in text:
            return base64.b64decode(text, altchars=b"-_", validate=True)
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        fail(path, f"not valid base64 ({error})")


def _media_type(value: object, path: str) -> str:
    if not isinstance(value, str) or not is_media_type(value):
        fail(path, f"{value!r} is not a media type such as 'image/png'")
    return value


def _from_data_url(url: str, path: str) -> tuple[str, bytes]:
    header, comma, body = url[5:].partition(",")
    if not comma or not header.endswith(";base64"):
        fail(path, "threadline reads base64 data: URLs (data:<media type>;base64,<data>)")
    return _media_type(header[: -len(";base64")], path), _bytes(body, path)


def _file(
    source: str | bytes, media_type: str, template: dict[str, Any], extras: object, **more: Any
) -> dict[str, Any]:
    filename = more.pop("filename", None)
    if isinstance(extras, Mapping) and isinstance(extras.get("filename"), str) and filename is None:
        left = dict(extras)
        filename = left.pop("filename")
        extras = _left(extras, left)
    default = {"type": _kind(media_type)}  # what a part without a stored form is written as
    metadata = _metadata(extras, template, default, **more)
    part = {"type": "file", "media_type": media_type, "filename": filename, "metadata": metadata}
    part["data" if isinstance(source, bytes) else "url"] = source
    return part


def _v1_file(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    kind = block["type"]
    template = _rest(block, "base64", "url", "mime_type", "extras")
    if "file_id" in block:
        fail(
            f"{path}.file_id",
            "threadline holds files by bytes or URL, not by a provider's file id; "
            "pass the bytes (base64) or a URL",
        )
    mime = block.get("mime_type")
    if "base64" in block:
        if mime is None:
            fail(f"{path}.mime_type", "a base64 block needs its mime_type")
        data = _bytes(block["base64"], f"{path}.base64")
        return _file(data, _media_type(mime, f"{path}.mime_type"), template, block.get("extras"))
    url = _string(block, "url", path)
    if mime is None:
        guessed = media_type_from_url(url, f"{kind}/*" if kind != "file" else "application/*")
        return _file(url, guessed, template, block.get("extras"), **{NO_MIME_TYPE: True})
    return _file(url, _media_type(mime, f"{path}.mime_type"), template, block.get("extras"))


def _text_plain(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    if "text" not in block:
        return _v1_file(block, path)
    template = _rest(block, "text", "mime_type", "extras")
    mime = _media_type(block.get("mime_type", "text/plain"), f"{path}.mime_type")
    data = _string(block, "text", path).encode("utf-8", "surrogatepass")
    return _file(data, mime, template, block.get("extras"))


def _v0_file(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    source_type = block.get("source_type")
    template = _rest(block, "data", "url", "mime_type")
    mime = block.get("mime_type")
    if source_type == "base64":
        data = _bytes(block.get("data"), f"{path}.data")
        return _file(data, _media_type(mime, f"{path}.mime_type"), template, None)
    if source_type == "url":
        url = _string(block, "url", path)
        if url.startswith("data:") and mime is None:
            media_type, data = _from_data_url(url, f"{path}.url")
            return _file(url, media_type, template, None, **{NO_MIME_TYPE: True})
        if mime is None:
            guessed = media_type_from_url(url, f"{block['type']}/*")
            return _file(url, guessed, template, None, **{NO_MIME_TYPE: True})
        return _file(url, _media_type(mime, f"{path}.mime_type"), template, None)
    fail(f"{path}.source_type", f"threadline reads source_type base64 or url, not {source_type!r}")


def _image_url(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    inner = block.get("image_url")
    url = inner.get("url") if isinstance(inner, Mapping) else inner
    if not isinstance(url, str):
        fail(f"{path}.image_url", "an image_url block needs image_url.url (a str)")
    template = _rest(block, "image_url", "extras")
    template["image_url"] = _rest(inner, "url") if isinstance(inner, Mapping) else None
    if url.startswith("data:"):
        media_type, data = _from_data_url(url, f"{path}.image_url.url")
        return _file(data, media_type, template, block.get("extras"))
    guessed = media_type_from_url(url, "image/*")
    media_type = guessed if guessed.startswith("image/") else "image/*"
    return _file(url, media_type, template, block.get("extras"))


def _openai_file(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    inner = block["file"]
    file_data = inner.get("file_data")
    if not isinstance(file_data, str):
        fail(
            f"{path}.file",
            "threadline reads a file block with file_data (a base64 data: URL), not a file_id",
        )
    media_type, data = _from_data_url(file_data, f"{path}.file.file_data")
    filename = inner.get("filename")
    template = _rest(block, "file", "extras")
    template["file"] = _rest(inner, "file_data", "filename")
    return _file(data, media_type, template, block.get("extras"), filename=filename)


def _input_audio(block: Mapping[str, Any], path: str) -> dict[str, Any]:
    inner = block.get("input_audio")
    if not isinstance(inner, Mapping) or not isinstance(inner.get("format"), str):
        fail(f"{path}.input_audio", "an input_audio block needs input_audio.data and .format")
    data = _bytes(inner.get("data"), f"{path}.input_audio.data")
    template = _rest(block, "input_audio", "extras")
    template["input_audio"] = _rest(inner, "data")
    media_type = _media_type(f"audio/{inner['format']}", f"{path}.input_audio.format")
    return _file(data, media_type, template, block.get("extras"))


_Reader = tuple[str, Callable[[Mapping[str, Any], str], dict[str, Any]]]
_READERS: dict[str, _Reader] = {
    "text": ("text", _text),
    "refusal": ("text", _refusal),
    "thinking": ("reasoning", _thinking),
    "redacted_thinking": ("reasoning", _redacted_thinking),
    "reasoning": ("reasoning", _reasoning),
    "server_tool_call": ("provider", _server_tool_call),
    "server_tool_result": ("provider", _server_tool_result),
    "image_url": ("file", _image_url),
    "input_audio": ("file", _input_audio),
    "text-plain": ("file", _text_plain),
}


def _file_reader(block: Mapping[str, Any]) -> _Reader | None:
    kind = block.get("type")
    if kind == "file" and isinstance(block.get("file"), Mapping):
        return ("file", _openai_file)
    if kind in _DATA_KINDS:
        if "source_type" in block:
            return ("file", _v0_file)
        if "source" not in block and "image" not in block:  # Anthropic / Bedrock forms
            return ("file", _v1_file)
    return None


# ---------------------------------------------------------------------------------------------
# threadline -> LangChain


def _split(metadata: Mapping[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The part's stored block form, and the rest of its metadata (the block's extras)."""
    template = metadata.get(BLOCK)
    extras = {key: value for key, value in metadata.items() if key not in _MARKERS}
    return (dict(template) if isinstance(template, Mapping) else None), extras


def _with_extras(block: dict[str, Any], extras: Mapping[str, Any]) -> dict[str, Any]:
    if extras:
        block["extras"] = dict(extras)
    return block


def block_of(part: Part) -> Any:
    """The content item (a block, or a bare ``str``) a text, reasoning, file or provider part
    becomes.

    Raises:
        TypeError: a tool call, a tool result or a hook part, which have no content block (the
            callers write calls and results as LangChain's own fields and leave hooks out).
    """
    if isinstance(part, TextPart):
        return _text_block(part)
    if isinstance(part, FilePart):
        return file_block(part)
    if isinstance(part, ReasoningPart):
        return _reasoning_block(part)
    if isinstance(part, ProviderToolCallPart):
        template, extras = _split(part.metadata)
        if part.provider != UNKNOWN_PROVIDER:
            extras["threadline.provider"] = part.provider
        args = part.input
        if not isinstance(args, dict):
            extras["threadline.input"] = args
            args = {}
        block = {**(template or {"type": "server_tool_call"}), "id": part.id, "name": part.name}
        block["args"] = args
        return _with_extras(block, extras)
    if isinstance(part, ProviderToolResultPart):
        template, extras = _split(part.metadata)
        if part.provider != UNKNOWN_PROVIDER:
            extras["threadline.provider"] = part.provider
        block = {**(template or {"type": "server_tool_result"}), "tool_call_id": part.call_id}
        block["status"] = "error" if part.is_error else "success"
        block["output"] = part.content
        return _with_extras(block, extras)
    if isinstance(part, (ToolCallPart, ToolResultPart, HookPart)):
        raise TypeError(f"no LangChain content block for a {type(part).__name__}")
    assert_never(part)


def _text_block(part: TextPart) -> Any:
    template, extras = _split(part.metadata)
    if part.metadata.get(STRING) is True and template is None and len(extras) == 0:
        return part.text
    if extras.get(_REFUSAL) is True:
        del extras[_REFUSAL]
        block = {**(template or {"type": "refusal"}), "refusal": part.text}
        return _with_extras(block, extras)
    return _with_extras({**(template or {"type": "text"}), "text": part.text}, extras)


def _reasoning_block(part: ReasoningPart) -> dict[str, Any]:
    template, extras = _split(part.metadata)
    kind = template.get("type") if template is not None else None
    # Anthropic's own blocks carry text, signature and redacted data, nothing more.
    anthropic = (
        part.provider == "anthropic"
        and part.model is None
        and part.item_id is None
        and not part.summary
        and not extras
    )
    if anthropic and kind in (None, "thinking") and not part.redacted and part.encrypted is None:
        block = {**(template or {"type": "thinking"}), "thinking": part.text}
        if part.signature is not None:
            block["signature"] = part.signature
        return block
    if (
        anthropic
        and kind in (None, "redacted_thinking")
        and part.redacted
        and part.text == ""
        and part.signature is None
        and part.encrypted is not None
    ):
        return {**(template or {"type": "redacted_thinking"}), "data": part.encrypted}
    block = {"type": "reasoning"}
    if kind == "reasoning" and template is not None:
        block = dict(template)
    if part.text:
        block["reasoning"] = part.text
    if part.item_id is not None:
        block["id"] = part.item_id
    for key, field in _REASONING_EXTRAS.items():
        value = getattr(part, field)
        if value not in (None, False, ()):
            extras[key] = list(value) if field == "summary" else value
    return _with_extras(block, extras)


def _kind(media_type: str) -> str:
    major = media_type.split("/", 1)[0]
    return major if major in ("image", "audio", "video") else "file"


def file_block(part: FilePart) -> dict[str, Any]:
    """The block a file part becomes: in the form it came in, else the v1 standard form."""
    template, extras = _split(part.metadata)
    guessed = part.metadata.get(NO_MIME_TYPE) is True
    kind = (template or {}).get("type")
    if kind == "image_url":
        assert template is not None
        url = part.url if part.url is not None else data_url(part.media_type, part.data or b"")
        inner = template.get("image_url")
        template["image_url"] = url if inner is None else {**inner, "url": url}
        return _with_extras(template, extras)
    if kind == "input_audio" and part.data is not None:
        assert template is not None
        inner = {"format": part.media_type.split("/", 1)[1], **template["input_audio"]}
        template["input_audio"] = {**inner, "data": encode_base64(part.data)}
        return _with_extras(template, extras)
    openai_file = template is not None and isinstance(template.get("file"), Mapping)
    if kind == "file" and openai_file and part.data is not None:
        assert template is not None
        inner = {**template["file"], "file_data": data_url(part.media_type, part.data)}
        if part.filename is not None:
            inner["filename"] = part.filename
        template["file"] = inner
        return _with_extras(template, extras)
    if template is not None and "source_type" in template:
        block = {**template, "source_type": "url" if part.url is not None else "base64"}
        block.update({"url": part.url} if part.url is not None else {"data": _b64(part)})
        if not guessed:
            block["mime_type"] = part.media_type
        return block
    if kind == "text-plain" and part.data is not None:
        try:
            text = part.data.decode("utf-8")
        except UnicodeDecodeError:
            template = None
        else:
            block = {**(template or {}), "text": text, "mime_type": part.media_type}
            return _with_extras(block, extras)
    block = {"type": _kind(part.media_type)} if template is None else template
    if "type" not in block or block["type"] not in (*_DATA_KINDS, "text-plain") or "file" in block:
        block = {"type": _kind(part.media_type)}
    block.update({"url": part.url} if part.url is not None else {"base64": _b64(part)})
    if not guessed:
        block["mime_type"] = part.media_type
    if part.filename is not None:
        extras["filename"] = part.filename
    return _with_extras(block, extras)


def _b64(part: FilePart) -> str:
    return encode_base64(part.data or b"")
