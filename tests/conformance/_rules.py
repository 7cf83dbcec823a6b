"""The rules judge: the live-API rules that no SDK type checks, one check per rule.

The SDK-type judges (:mod:`tests.conformance.judges` and its siblings) ask whether the
official request types take a payload. The live APIs refuse some payloads those types take,
with a 400 whose text is quoted in public issue threads. Each such rule is a [`Rule`] here:
an ``id`` (``<format>.<rule>``), the API's error text as quoted, and a ``check(payload)``
that returns one line per violation. The checks read the wire payload only; they know
nothing of threadline, so a codec cannot pass by agreeing with itself.

Most rules hold for what ``encode`` returns (a history fragment). Some are about the whole
request (``scope="request"``): Bedrock's ``toolConfig``, Anthropic's thinking-first rule, the
prompt-cache breakpoints (tools, system and messages together) and thinking with a forced
tool choice depend on fields the caller adds, so they are judged on request bodies only
(the checks of the last two are in ``_rules_requests.py``).

``KNOWN_VIOLATIONS`` names the rules today's encoders break. The conformance suites and the
property test tolerate those rules (and count each payload that breaks one, reported at the
end of the run); each has a strict-xfail reproducer in ``test_rules_known.py``, so the fix
of an encoder flips that test, and its entry here must then go.

The formats are the codec registry's (``threadline.codecs.codec_names``): each has its rules in
``RULES`` or an entry in ``NO_RULES`` saying why it has none (``test_rules_coverage.py`` checks
both), and judging a payload of a format in neither raises :class:`NoRulesError` rather than
passing it unjudged.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Literal

from tests.conformance._rules_dialects import no_reasoning_content_for
from tests.conformance._rules_dialects import no_reasoning_fields
from tests.conformance._rules_dialects import reasoning_content_on_every_assistant
from tests.conformance._rules_dialects import reasoning_content_on_tool_calls
from tests.conformance._rules_dialects import reasoning_details_well_formed
from tests.conformance._rules_dialects import reasoning_details_with_tool_calls_for
from tests.conformance._rules_gemini import gemini_json_schema_enum_values
from tests.conformance._rules_gemini import gemini_json_schema_ref_alone
from tests.conformance._rules_gemini import gemini_json_schema_ref_loops_optional
from tests.conformance._rules_gemini import gemini_schema_fields_exclusive
from tests.conformance._rules_gemini import gemini_subset_enum_only_for_strings
from tests.conformance._rules_gemini import gemini_subset_known_fields
from tests.conformance._rules_gemini import gemini_subset_objects_have_properties
from tests.conformance._rules_requests import CACHE_TTL_ERROR
from tests.conformance._rules_requests import FORCED_THINKING_ERROR
from tests.conformance._rules_requests import anthropic_breakpoints
from tests.conformance._rules_requests import anthropic_no_forced_tool_with_thinking
from tests.conformance._rules_requests import at_most_four
from tests.conformance._rules_requests import bedrock_breakpoints
from tests.conformance._rules_requests import bedrock_no_forced_tool_with_thinking
from tests.conformance._rules_requests import ttl_order
from tests.conformance.judges import WireError
from threadline.codecs import codec_names

__all__ = [
    "FORMATS",
    "KNOWN_VIOLATIONS",
    "NO_RULES",
    "RULES",
    "TOLERATED",
    "NoRulesError",
    "Rule",
    "judge_rules",
    "rule",
    "rules_for",
    "violations",
]

FORMATS: tuple[str, ...] = codec_names()
"""The formats judged: every one the codec registry lists (read through its public listing)."""

Check = Callable[[Mapping[str, Any]], list[str]]
DEEPSEEK_R1 = ("deepseek-r1",)
"""The DeepSeek model family that refused ``reasoning_content`` back."""
_anthropic_breakpoints = anthropic_breakpoints  # their old names here (test_codecs_cache_ttl.py)
_bedrock_breakpoints = bedrock_breakpoints
Scope = Literal["fragment", "request"]


@dataclasses.dataclass(frozen=True)
class Rule:
    """One rule a live API enforces and the SDK types do not."""

    id: str
    """``<format>.<rule>``: what ``KNOWN_VIOLATIONS`` and test ids name."""
    error: str
    """The API's error text, as quoted in public issue threads, and where."""
    check: Check
    """The violations in a payload, one line each; empty when the payload keeps the rule."""
    scope: Scope = "fragment"
    """``fragment``: holds for what ``encode`` returns. ``request``: depends on fields the
    caller adds (``toolConfig``, ``thinking``), so judged on request bodies only."""

    @property
    def format(self) -> str:
        return self.id.split(".", 1)[0]


# ---------------------------------------------------------------------------------------------
# Reading payloads


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _messages(payload: Mapping[str, Any], key: str = "messages") -> list[Mapping[str, Any]]:
    return [_dict(message) for message in _list(payload.get(key))]


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [_dict(block) for block in _list(content)]


def _anthropic_turns(payload: Mapping[str, Any]) -> list[tuple[str, int, list[Mapping[str, Any]]]]:
    """(role, index of the first message, blocks) per turn: the API merges consecutive
    messages of one role before checking."""
    turns: list[tuple[str, int, list[Mapping[str, Any]]]] = []
    for index, message in enumerate(_messages(payload)):
        role = str(message.get("role"))
        if turns and turns[-1][0] == role:
            turns[-1][2].extend(_blocks(message))
        else:
            turns.append((role, index, _blocks(message)))
    return turns


# ---------------------------------------------------------------------------------------------
# Tool names (OpenAI, Anthropic, Mistral, Bedrock; Gemini's own pattern)

TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
GEMINI_TOOL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}")  # issue 37 item 6: 64, not 128


def _defined_names(payload: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """The names of the tool definitions and of a forced ``tool_choice``, in every format."""
    for index, tool in enumerate(_list(payload.get("tools"))):
        tool = _dict(tool)
        if "function" in tool:
            yield f"tools.{index}.function.name", _dict(tool["function"]).get("name")
        elif "functionDeclarations" in tool:
            for number, declaration in enumerate(_list(tool["functionDeclarations"])):
                yield (
                    f"tools.{index}.functionDeclarations.{number}.name",
                    _dict(declaration).get("name"),
                )
        elif "name" in tool:
            yield f"tools.{index}.name", tool.get("name")
    config = _dict(payload.get("toolConfig"))
    for index, tool in enumerate(_list(config.get("tools"))):
        if "toolSpec" in _dict(tool):
            yield f"toolConfig.tools.{index}.toolSpec.name", _dict(tool["toolSpec"]).get("name")
    choice = _dict(payload.get("tool_choice"))
    if "name" in choice or "function" in choice:
        yield "tool_choice.name", choice.get("name", _dict(choice.get("function")).get("name"))
    if "tool" in _dict(config.get("toolChoice")):
        yield "toolConfig.toolChoice.tool.name", _dict(config["toolChoice"]["tool"]).get("name")
    calling = _dict(config.get("functionCallingConfig"))
    for index, name in enumerate(_list(calling.get("allowedFunctionNames"))):
        yield f"toolConfig.functionCallingConfig.allowedFunctionNames.{index}", name


def _openai_chat_names(payload: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    yield from _defined_names(payload)
    for index, message in enumerate(_messages(payload)):
        for number, call in enumerate(_list(message.get("tool_calls"))):
            call = _dict(call)
            for key in ("function", "custom"):
                if key in call:
                    yield (
                        f"messages.{index}.tool_calls.{number}.{key}.name",
                        _dict(call[key]).get("name"),
                    )
        if message.get("role") == "tool" and "name" in message:
            yield f"messages.{index}.name", message.get("name")


def _responses_names(payload: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    yield from _defined_names(payload)
    for index, item in enumerate(_messages(payload, "input")):
        if item.get("type") in ("function_call", "custom_tool_call"):
            yield f"input.{index}.name", item.get("name")


def _anthropic_names(payload: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    yield from _defined_names(payload)
    for index, message in enumerate(_messages(payload)):
        for number, block in enumerate(_blocks(message)):
            if block.get("type") == "tool_use":
                yield f"messages.{index}.content.{number}.name", block.get("name")


def _bedrock_names(payload: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    yield from _defined_names(payload)
    for index, message in enumerate(_messages(payload)):
        for number, block in enumerate(_blocks(message)):
            if "toolUse" in block:
                yield (
                    f"messages.{index}.content.{number}.toolUse.name",
                    _dict(block["toolUse"]).get("name"),
                )


def _gemini_parts(payload: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for index, content in enumerate(_messages(payload, "contents")):
        for number, part in enumerate(_list(content.get("parts"))):
            yield f"contents.{index}.parts.{number}", _dict(part)


def _gemini_names(payload: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    yield from _defined_names(payload)
    for where, part in _gemini_parts(payload):
        for key in ("functionCall", "function_call", "functionResponse", "function_response"):
            if key in part:
                yield f"{where}.{key}.name", _dict(part[key]).get("name")


def _names_check(
    names: Callable[[Mapping[str, Any]], Iterator[tuple[str, Any]]], pattern: re.Pattern[str]
) -> Check:
    def check(payload: Mapping[str, Any]) -> list[str]:
        return [
            f"{where}: tool name {name!r} does not match ^{pattern.pattern}$"
            for where, name in names(payload)
            if not isinstance(name, str) or pattern.fullmatch(name) is None
        ]

    return check


TOOL_NAME_ERROR = (
    "each API refuses a tool name outside ^[a-zA-Z0-9_-]{1,64}$ with a pattern error "
    "(\"string does not match pattern '^[a-zA-Z0-9_-]{1,64}$'\"); mistral_common refuses "
    "'files.read'"
)


# ---------------------------------------------------------------------------------------------
# Mistral


def mistral_nothing_but_assistant_after_tool(payload: Mapping[str, Any]) -> list[str]:
    """After a ``tool`` message comes an ``assistant`` or another ``tool`` message, never a
    ``user`` or ``system`` one: not the user's next question after a repaired call, not
    files moved out of a tool result, not a system message after a result."""
    messages = _messages(payload)
    return [
        f"messages.{index + 1}: Unexpected role {following.get('role')!r} after role 'tool'"
        for index, (message, following) in enumerate(itertools.pairwise(messages))
        if message.get("role") == "tool" and following.get("role") not in ("assistant", "tool")
    ]


# ---------------------------------------------------------------------------------------------
# Anthropic


def _tool_results(payload: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for index, message in enumerate(_messages(payload)):
        for number, block in enumerate(_blocks(message)):
            if block.get("type") == "tool_result":
                yield f"messages.{index}.content.{number}", block


def anthropic_failed_result_is_text_only(payload: Mapping[str, Any]) -> list[str]:
    """A ``tool_result`` with ``is_error: true`` holds text blocks only (or a string)."""
    out = []
    for where, block in _tool_results(payload):
        if block.get("is_error") is True:
            kinds = [_dict(inner).get("type") for inner in _list(block.get("content"))]
            bad = sorted({str(kind) for kind in kinds if kind != "text"})
            if bad:
                out.append(
                    f"{where}: a failed tool_result holds {bad}: all content must be type "
                    "'text' if 'is_error' is true"
                )
    return out


def anthropic_failed_result_is_not_empty(payload: Mapping[str, Any]) -> list[str]:
    """A ``tool_result`` with ``is_error: true`` has content: not missing, ``""`` or ``[]``."""
    return [
        f"{where}: content cannot be empty if 'is_error' is true"
        for where, block in _tool_results(payload)
        if block.get("is_error") is True and block.get("content") in (None, "", [])
    ]


def anthropic_first_message_is_user(payload: Mapping[str, Any]) -> list[str]:
    """The first message has the ``user`` role (a window can leave an assistant turn first)."""
    messages = _messages(payload)
    if messages and messages[0].get("role") != "user":
        return [
            f'messages.0: role {messages[0].get("role")!r}: first message must use the "user" role'
        ]
    return []


THINKING_BLOCKS = ("thinking", "redacted_thinking")


def anthropic_tool_loop_starts_with_thinking(payload: Mapping[str, Any]) -> list[str]:
    """With thinking enabled (the request's ``thinking`` is not disabled), while a tool loop
    is going on (the last turn is a user turn of ``tool_result`` blocks), the assistant turn
    whose calls those results answer starts with a ``thinking`` / ``redacted_thinking`` block.
    An alias of the model that produced the thinking must still have it replayed."""
    thinking = _dict(payload.get("thinking"))
    if thinking.get("type") not in ("enabled", "adaptive"):
        return []
    turns = _anthropic_turns(payload)
    if len(turns) < 2:
        return []
    (last_role, _, last_blocks), (role, index, blocks) = turns[-1], turns[-2]
    in_loop = last_role == "user" and any(b.get("type") == "tool_result" for b in last_blocks)
    if not in_loop or role != "assistant":
        return []
    first = blocks[0].get("type") if blocks else None
    if first in THINKING_BLOCKS:
        return []
    return [
        f"messages.{index}: starts with {first!r}: a final assistant message must start with "
        "a thinking block"
    ]


# ---------------------------------------------------------------------------------------------
# OpenAI Responses


def _is_output_with_id(item: Mapping[str, Any]) -> bool:
    if not item.get("id") or item.get("type") in ("reasoning", "item_reference"):
        return False
    kind = item.get("type", "message")
    if kind == "message":
        return item.get("role") == "assistant"
    return not str(kind).endswith("_output")


def responses_reasoning_has_its_following_item(payload: Mapping[str, Any]) -> list[str]:
    """A ``reasoning`` item is followed right away by the output item it produced, carrying
    that item's id (an assistant message, a function call, a hosted tool call)."""
    items = _messages(payload, "input")
    out = []
    for index, item in enumerate(items):
        if item.get("type") != "reasoning":
            continue
        following = items[index + 1] if index + 1 < len(items) else {}
        if not _is_output_with_id(following):
            out.append(
                f"input.{index}: Item {item.get('id')!r} of type 'reasoning' was provided "
                "without its required following item"
            )
    return out


# ---------------------------------------------------------------------------------------------
# Bedrock

DOCUMENT_NAME = re.compile(r"[A-Za-z0-9()\[\]\- ]+")
"""Alphanumerics, spaces (never two in a row), hyphens, parentheses and square brackets."""


def _bedrock_documents(payload: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    for index, message in enumerate(_messages(payload)):
        for number, block in enumerate(_blocks(message)):
            where = f"messages.{index}.content.{number}"
            if "document" in block:
                yield f"{where}.document.name", _dict(block["document"]).get("name")
            result = _dict(block.get("toolResult"))
            for inner_number, inner in enumerate(_list(result.get("content"))):
                if "document" in _dict(inner):
                    yield (
                        f"{where}.toolResult.content.{inner_number}.document.name",
                        _dict(inner["document"]).get("name"),
                    )


def bedrock_document_names_are_unique(payload: Mapping[str, Any]) -> list[str]:
    """No two documents of a request (messages and tool results alike) share a name."""
    seen: dict[Any, str] = {}
    out = []
    for where, name in _bedrock_documents(payload):
        if name in seen:
            out.append(
                f"{where}: {name!r} also names {seen[name]}: Messages can't contain duplicate "
                "document names"
            )
        else:
            seen[name] = where
    return out


def bedrock_document_names_use_allowed_characters(payload: Mapping[str, Any]) -> list[str]:
    """A document name holds alphanumerics, hyphens, parentheses, square brackets and single
    spaces between them, nothing else."""
    return [
        f"{where}: {name!r}: the document name may only contain alphanumeric characters, "
        "whitespace characters (no more than one in a row), hyphens, parentheses and square "
        "brackets"
        for where, name in _bedrock_documents(payload)
        if not isinstance(name, str) or DOCUMENT_NAME.fullmatch(name) is None or "  " in name
    ]


def bedrock_tool_result_has_content(payload: Mapping[str, Any]) -> list[str]:
    """A ``toolResult`` holds at least one content block."""
    return [
        f"messages.{index}.content.{number}.toolResult.content: empty (ValidationException "
        "from several non-Claude models)"
        for index, message in enumerate(_messages(payload))
        for number, block in enumerate(_blocks(message))
        if "toolResult" in block and not _list(_dict(block["toolResult"]).get("content"))
    ]


def bedrock_tool_config_with_tool_blocks(payload: Mapping[str, Any]) -> list[str]:
    """A request whose messages hold ``toolUse`` or ``toolResult`` blocks has a ``toolConfig``
    (``encode`` does not write it: the caller declares the tools)."""
    if "toolConfig" in payload:
        return []
    found = [
        f"messages.{index}.content.{number}"
        for index, message in enumerate(_messages(payload))
        for number, block in enumerate(_blocks(message))
        if "toolUse" in block or "toolResult" in block
    ]
    if not found:
        return []
    return [
        f"{found[0]}: The toolConfig field must be defined when using toolUse and toolResult "
        "content blocks"
    ]


def bedrock_first_message_is_user(payload: Mapping[str, Any]) -> list[str]:
    """The conversation starts with a user turn (Claude on Bedrock refuses an assistant turn
    first, as the Anthropic API does)."""
    messages = _messages(payload)
    if messages and messages[0].get("role") != "user":
        return [
            f"messages.{0}: role {messages[0].get('role')!r}: A conversation must start with a "
            "user message"
        ]
    return []


# ---------------------------------------------------------------------------------------------
# The rules

_COHERE_KEYS: Mapping[str, frozenset[str]] = {
    "user": frozenset({"role", "content"}),
    "system": frozenset({"role", "content"}),
    "assistant": frozenset({"role", "content", "tool_calls", "tool_plan", "citations"}),
    "tool": frozenset({"role", "tool_call_id", "content"}),
}
_COHERE_ITEMS: Mapping[str, frozenset[str]] = {
    "text": frozenset({"type", "text"}),
    "image_url": frozenset({"type", "image_url"}),
    "thinking": frozenset({"type", "thinking"}),
    "document": frozenset({"type", "document"}),
}


def _unknown(obj: Mapping[str, Any], known: frozenset[str], where: str) -> list[str]:
    return [f"{where}: unknown field {key!r}" for key in sorted(set(obj) - known)]


def cohere_no_unknown_fields(payload: Mapping[str, Any]) -> list[str]:
    """Cohere v2 Chat answers 422 for a key its API does not define, in a message, a content
    item, a tool call, a document or a tool definition (the SDK's types allow extra keys)."""
    out: list[str] = []
    for index, message in enumerate(_messages(payload)):
        where = f"messages.{index}"
        out += _unknown(message, _COHERE_KEYS.get(str(message.get("role")), frozenset()), where)
        content = message.get("content")
        for number, item in enumerate(_list(content)):
            item = _dict(item)
            known = _COHERE_ITEMS.get(str(item.get("type")), frozenset({"type"}))
            out += _unknown(item, known, f"{where}.content.{number}")
            if item.get("type") == "document":
                document = _dict(item.get("document"))
                out += _unknown(document, frozenset({"data", "id"}), f"{where}.content.{number}")
            if item.get("type") == "image_url":
                image = _dict(item.get("image_url"))
                out += _unknown(image, frozenset({"url", "detail"}), f"{where}.content.{number}")
        for number, call in enumerate(_list(message.get("tool_calls"))):
            call = _dict(call)
            out += _unknown(
                call, frozenset({"id", "type", "function"}), f"{where}.tool_calls.{number}"
            )
            function = _dict(call.get("function"))
            out += _unknown(
                function, frozenset({"name", "arguments"}), f"{where}.tool_calls.{number}"
            )
    for index, tool in enumerate(_list(payload.get("tools"))):
        tool = _dict(tool)
        out += _unknown(tool, frozenset({"type", "function"}), f"tools.{index}")
        known = frozenset({"name", "description", "parameters"})
        out += _unknown(_dict(tool.get("function")), known, f"tools.{index}.function")
    return out


RULES: Mapping[str, tuple[Rule, ...]] = {
    "cohere": (
        Rule(
            "cohere.no_unknown_fields",
            "unknown field: parameter 'requires_confirmation' is not a valid field. For proper "
            "usage, please refer to https://docs.cohere.com/reference/chat "
            "(agno-agi/agno#3503)",
            cohere_no_unknown_fields,
        ),
    ),
    "anthropic": (
        Rule(
            "anthropic.failed_result_text_only",
            "all content must be type 'text' if 'is_error' is true "
            "(vellum-ai/vellum-assistant#18387)",
            anthropic_failed_result_is_text_only,
        ),
        Rule(
            "anthropic.failed_result_not_empty",
            "content cannot be empty if 'is_error' is true "
            "(jlevy/markform#153, bytedance/trae-agent#231)",
            anthropic_failed_result_is_not_empty,
        ),
        Rule(
            "anthropic.first_message_user",
            'first message must use the "user" role (lobehub/lobehub#1601)',
            anthropic_first_message_is_user,
        ),
        Rule(
            "anthropic.tool_loop_starts_with_thinking",
            "a final assistant message must start with a thinking block (mastra-ai/mastra#7799)",
            anthropic_tool_loop_starts_with_thinking,
            scope="request",
        ),
        Rule(
            "anthropic.tool_name_pattern",
            TOOL_NAME_ERROR,
            _names_check(_anthropic_names, TOOL_NAME),
        ),
        # issue 37 item 3
        Rule(
            "anthropic.cache_ttl_order",
            f"messages.0.content.4.cache_control.ttl: {CACHE_TTL_ERROR} "
            "(cnighswonger/claude-code-cache-fix#44, headroomlabs-ai/headroom#2939, "
            "vellum-ai/vellum-assistant#22191)",
            ttl_order(anthropic_breakpoints),
            scope="request",
        ),
        Rule(
            "anthropic.cache_breakpoints_at_most_four",
            "A maximum of 4 blocks with cache_control may be provided. Found 5. "
            "(tghamm/Anthropic.SDK#50, Wei-Shaw/sub2api#176)",
            at_most_four(anthropic_breakpoints),
            scope="request",
        ),
        # issue 37 item 4
        Rule(
            "anthropic.no_forced_tool_with_thinking",
            f"{FORCED_THINKING_ERROR} (mastra-ai/mastra#7507, anthropics/claude-code#19414)",
            anthropic_no_forced_tool_with_thinking,
            scope="request",
        ),
    ),
    "bedrock": (
        Rule(
            "bedrock.document_names_unique",
            "Messages can't contain duplicate document names (BerriAI/litellm#30093)",
            bedrock_document_names_are_unique,
        ),
        Rule(
            "bedrock.document_name_characters",
            "ValidationException on a document name outside the documented characters "
            "(alphanumerics, single whitespace, hyphens, parentheses, square brackets)",
            bedrock_document_names_use_allowed_characters,
        ),
        Rule(
            "bedrock.tool_result_not_empty",
            "ValidationException for a toolResult with content: [] (pydantic/pydantic-ai#6115)",
            bedrock_tool_result_has_content,
        ),
        Rule(
            "bedrock.tool_config_with_tool_blocks",
            "The toolConfig field must be defined when using toolUse and toolResult content "
            "blocks (elastic/kibana#277821)",
            bedrock_tool_config_with_tool_blocks,
            scope="request",
        ),
        Rule(
            "bedrock.first_message_user",
            "Claude on Bedrock refuses a conversation that starts with an assistant turn "
            "(anthropic-sdk-typescript#622)",
            bedrock_first_message_is_user,
        ),
        Rule(
            "bedrock.tool_name_pattern",
            TOOL_NAME_ERROR,
            _names_check(_bedrock_names, TOOL_NAME),
        ),
        # issue 37 item 3
        Rule(
            "bedrock.cache_ttl_order",
            f"The model returned the following errors: messages.3.content.0.cache_control.ttl: "
            f"{CACHE_TTL_ERROR} (Portkey-AI/gateway#1762; the Converse order toolConfig, "
            "system, messages in strands-agents/harness-sdk#3758)",
            ttl_order(bedrock_breakpoints),
            scope="request",
        ),
        Rule(
            "bedrock.cache_points_at_most_four",
            "at most 4 cache checkpoints per request (Bedrock user guide, prompt caching; "
            "Claude on Bedrock answers Anthropic's 'A maximum of 4 blocks with cache_control "
            "may be provided')",
            at_most_four(bedrock_breakpoints),
            scope="request",
        ),
        # issue 37 item 4
        Rule(
            "bedrock.no_forced_tool_with_thinking",
            f"The model returned the following errors: {FORCED_THINKING_ERROR} "
            "(can1357/oh-my-pi#341, us.anthropic.claude-sonnet-4-6 on Bedrock)",
            bedrock_no_forced_tool_with_thinking,
            scope="request",
        ),
    ),
    "gemini": (
        Rule(
            "gemini.tool_name_pattern",
            "Invalid function name. Must start with a letter or an underscore. Must be a-z, "
            "A-Z, 0-9, or contain underscores (_), dots (.), colons (:), or dashes (-), with a "
            "maximum length of 64. (kaitranntt/ccs#219, google-gemini/gemini-cli#7869; the "
            "SDK docstring's 128 is not what the API takes)",
            _names_check(_gemini_names, GEMINI_TOOL_NAME),
        ),
        # issue 37 items 1 and 2
        Rule(
            "gemini.subset_object_has_properties",
            "properties: should be non-empty for OBJECT type (pydantic/pydantic-ai#1203, "
            "browser-use/browser-use#3786)",
            gemini_subset_objects_have_properties,
        ),
        Rule(
            "gemini.subset_enum_only_for_strings",
            "enum: only allowed for STRING type (directus/directus#27100, decolua/9router#359)",
            gemini_subset_enum_only_for_strings,
        ),
        Rule(
            "gemini.subset_known_fields",
            'Invalid JSON payload received. Unknown name "const" at ... Cannot find field. '
            "(zed-industries/zed#44875, thClaws/thClaws#172, pydantic/pydantic-ai#1598); "
            "Proto field is not repeating, cannot start list. (voocel/litellm#9)",
            gemini_subset_known_fields,
        ),
        Rule(
            "gemini.schema_fields_exclusive",
            "parametersJsonSchema: This field is mutually exclusive with `parameters`; "
            "response_json_schema: If set, `response_schema` must be omitted (google-genai "
            "3.6.1 types.py: 'Backend will throw error if both response_schema and "
            "response_json_schema are set')",
            gemini_schema_fields_exclusive,
        ),
        Rule(
            "gemini.json_schema_ref_alone",
            "$ref 'QuestionOption' was set alongside unsupported fields. If a schema node has "
            "$ref set, then only description and default can be set alongside it "
            "(anomalyco/opencode#12295, diegosouzapw/OmniRoute#1416)",
            gemini_json_schema_ref_alone,
        ),
        Rule(
            "gemini.json_schema_enum_values",
            "Gemini/Vertex AI rejects the JSON Schema `const` keyword in function declarations "
            "with a 400 error (danny-avila/LibreChat#11784); enum is taken 'for strings and "
            "numbers' (google-genai 3.6.1, response_json_schema)",
            gemini_json_schema_enum_values,
        ),
        Rule(
            "gemini.json_schema_ref_loops_optional",
            "ref loops are only supported if they include optional or nullable property "
            "values, or a potentially-zero-length array items, but a ref loop of required "
            "fields was found at ... (juspay/juspay-mcp#132)",
            gemini_json_schema_ref_loops_optional,
        ),
    ),
    "mistral": (
        Rule(
            "mistral.nothing_but_assistant_after_tool",
            "Unexpected role 'user' after role 'tool' (code 3230; datapizza-labs/datapizza-ai#98, "
            "zed-industries/zed#37021)",
            mistral_nothing_but_assistant_after_tool,
        ),
        Rule(
            "mistral.tool_name_pattern",
            TOOL_NAME_ERROR,
            _names_check(_openai_chat_names, TOOL_NAME),
        ),
    ),
    "openai_chat": (
        Rule(
            "openai_chat.tool_name_pattern",
            TOOL_NAME_ERROR,
            _names_check(_openai_chat_names, TOOL_NAME),
        ),
    ),
    # issue 41 item 1: the OpenAI-compatible dialects
    "deepseek": (
        Rule(
            "deepseek.reasoning_content_on_every_assistant",
            "Missing `reasoning_content` field in the assistant message at message index 2. "
            "For more information, please refer to "
            "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls "
            "(hotovo/aider-desk#529, continuedev/continue#11285: an empty one is taken)",
            reasoning_content_on_every_assistant(refusing=DEEPSEEK_R1),
        ),
        Rule(
            "deepseek.reasoning_passed_back_in_tool_loops",
            "400 The `reasoning_content` in the thinking mode must be passed back to the API. "
            "(Kuberwastaken/claurst#121, FellouAI/eko#281, deepseek-v4-pro)",
            reasoning_content_on_tool_calls,
        ),
        Rule(
            "deepseek.r1_refuses_reasoning_content",
            "if reasoning_content is passed in the input messages the API returns a 400 error "
            "(api-docs.deepseek.com/zh-cn/guides/reasoning_model, deepseek-reasoner R1)",
            no_reasoning_content_for(DEEPSEEK_R1),
            scope="request",
        ),
        Rule(
            "deepseek.tool_name_pattern",
            TOOL_NAME_ERROR,
            _names_check(_openai_chat_names, TOOL_NAME),
        ),
    ),
    "groq": (
        Rule(
            "groq.no_reasoning_fields",
            "'messages.2' : for 'role:assistant' the following must be satisfied"
            "[('messages.2' : property 'reasoning' is unsupported, did you mean 'role'?)] "
            "(karthink/gptel#774); ... property 'reasoning_content' is unsupported "
            "(janhq/jan#8136, NousResearch/hermes-agent#11089)",
            no_reasoning_fields,
        ),
        Rule(
            "groq.tool_name_pattern",
            TOOL_NAME_ERROR,
            _names_check(_openai_chat_names, TOOL_NAME),
        ),
    ),
    "moonshot": (
        Rule(
            "moonshot.reasoning_content_on_tool_calls",
            "thinking is enabled but reasoning_content is missing in assistant tool call "
            "message (looplj/axonhub#1755: Kimi thinking models)",
            reasoning_content_on_tool_calls,
        ),
        Rule(
            "moonshot.tool_name_pattern",
            TOOL_NAME_ERROR,
            _names_check(_openai_chat_names, TOOL_NAME),
        ),
    ),
    "openrouter": (
        Rule(
            "openrouter.gemini_tool_calls_keep_reasoning_details",
            "Gemini models require OpenRouter reasoning details to be preserved in each "
            "request. ... Function call is missing a thought_signature in functionCall parts. "
            "(microsoft/vscode-copilot-chat#2649, dotnet/extensions#7172)",
            reasoning_details_with_tool_calls_for(("gemini-3",)),
            scope="request",
        ),
        Rule(
            "openrouter.reasoning_details_entries",
            "reasoning_details entries are reasoning.text, reasoning.summary or "
            "reasoning.encrypted with their text, summary or data (openrouter.ai/docs/guides/"
            "best-practices/reasoning-tokens, reasoning_details array structure)",
            reasoning_details_well_formed,
        ),
        Rule(
            "openrouter.tool_name_pattern",
            TOOL_NAME_ERROR,
            _names_check(_openai_chat_names, TOOL_NAME),
        ),
    ),
    "openai_responses": (
        Rule(
            "openai_responses.reasoning_has_following_item",
            "Item 'rs_...' of type 'reasoning' was provided without its required following "
            "item (vercel/ai#7099); ... provided without its required 'reasoning' item "
            "(TanStack/ai#1212)",
            responses_reasoning_has_its_following_item,
        ),
        Rule(
            "openai_responses.tool_name_pattern",
            TOOL_NAME_ERROR,
            _names_check(_responses_names, TOOL_NAME),
        ),
    ),
}
"""Per format, its rules."""

NO_RULES: Mapping[str, str] = {
    "ollama": "Ollama's /api/chat renders the messages through the model's chat template and "
    "refuses only what the ollama package's types refuse (a content, thinking or tool_name "
    "that is not a string, arguments that are not an object, images that are not base64): "
    "it has no role-order, pairing or tool-call id rules, so the package judge is the whole "
    "judge",
    "qwen": "DashScope's compatible mode refuses nothing OpenAI's types take that threadline "
    "sends (reasoning never goes back); judged by OpenAI Chat's types and rules",
    "together": "Together refuses nothing OpenAI's types take that threadline sends "
    "(reasoning never goes back); judged by OpenAI Chat's types and rules",
    "vllm": "older vLLM servers refused reasoning_content on a message (QwenLM/Qwen-Agent#470), "
    "which threadline never sends; judged by OpenAI Chat's types and rules",
    "xai": "xAI refuses nothing OpenAI's types take that threadline sends (reasoning never goes "
    "back); judged by OpenAI Chat's types and rules",
}
"""Formats the judge knows and has no rule for, each with why (a dialect judged by its parent's
rules, a format whose API refuses nothing its SDK types take): an explicit entry, so that a
format missing from ``RULES`` is an omission the judge reports, never a silent pass."""


class NoRulesError(LookupError):
    """A payload of a format the rules judge has no checker for: neither ``RULES`` nor
    ``NO_RULES`` names it."""


def rules_for(fmt: str) -> tuple[Rule, ...]:
    """The rules of the format ``fmt``: empty for a format of ``NO_RULES``.

    Raises:
        NoRulesError: ``fmt`` has no rules in ``RULES`` (an empty entry counts as none) and no
            entry in ``NO_RULES``; the message says where to add it.
    """
    rules = RULES.get(fmt)
    if rules:
        return rules
    if fmt in NO_RULES:
        return ()
    raise NoRulesError(
        f"the rules judge has no checker for the format {fmt!r}: add its rules to RULES in "
        "tests/conformance/_rules.py, or an entry to NO_RULES there saying why it has none "
        f"(the judged formats: {', '.join(sorted({*RULES, *NO_RULES}))})"
    )


KNOWN_VIOLATIONS: frozenset[str] = frozenset({})
"""The rules today's encoders break, each with a strict-xfail reproducer in
``test_rules_known.py``. An encoder fix flips that reproducer; remove its id here then."""

TOLERATED: Counter[str] = Counter()
"""Per rule id of ``KNOWN_VIOLATIONS``: how many judged payloads broke it this run."""

JUDGED: Counter[str] = Counter()
"""Per format: how many payloads the rules judge saw this run."""


def rule(rule_id: str) -> Rule:
    """The rule named ``rule_id``."""
    for rules in RULES.values():
        for found in rules:
            if found.id == rule_id:
                return found
    raise KeyError(rule_id)


def violations(
    fmt: str, payload: Mapping[str, Any], *, scope: Scope = "request"
) -> list[tuple[Rule, str]]:
    """Every (rule, violation) of ``payload`` in the format ``fmt``; ``scope="fragment"``
    leaves out the rules about fields only the caller adds.

    Raises:
        NoRulesError: the judge has no checker for ``fmt``.
    """
    return [
        (found, line)
        for found in rules_for(fmt)
        if scope == "request" or found.scope == "fragment"
        for line in found.check(payload)
    ]


def judge_rules(
    fmt: str,
    payload: Mapping[str, Any],
    *,
    scope: Scope = "fragment",
    known: Sequence[str] | frozenset[str] = KNOWN_VIOLATIONS,
) -> None:
    """Raise [`WireError`][tests.conformance.judges.WireError] for each violation of a rule
    not in ``known``; count the payload under each known rule it breaks.

    Raises:
        NoRulesError: the judge has no checker for ``fmt`` (the payload is not counted).
    """
    found = violations(fmt, payload, scope=scope)
    JUDGED[fmt] += 1
    for rule_id in sorted({broken.id for broken, _ in found if broken.id in known}):
        TOLERATED[rule_id] += 1
    problems = [f"[{broken.id}] {line}" for broken, line in found if broken.id not in known]
    if problems:
        raise WireError(f"{fmt} (rules judge)", problems)
