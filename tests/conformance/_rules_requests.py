"""The rules judge's request-scope checks of prompt caching and forced tools (issue 37 items 3
and 4): Anthropic ``cache_control`` and Bedrock ``cachePoint`` breakpoints (order of TTLs, at
most four), and thinking with a forced tool choice. They depend on fields the caller adds
(tools, system, ``thinking``, ``toolConfig``), so their rules are ``scope="request"``. The
checks read the wire payload only; the rules (with the quoted errors) are in ``_rules.RULES``.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

Check = Callable[[Mapping[str, Any]], list[str]]
Breakpoints = Callable[[Mapping[str, Any]], list[tuple[str, Mapping[str, Any]]]]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _messages(payload: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [_dict(message) for message in _list(payload.get("messages"))]


# ---------------------------------------------------------------------------------------------
# issue 37 item 3: prompt-cache breakpoints (Anthropic ``cache_control``, Bedrock ``cachePoint``)

MAX_BREAKPOINTS = 4
CACHE_TTL_ERROR = (
    "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note "
    "that blocks are processed in the following order: `tools`, `system`, `messages`."
)


def anthropic_breakpoints(payload: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(path, ``cache_control``) of every marked block, in the API's processing order: the
    tools, the system blocks, then the messages (a tool result's inner blocks included)."""
    found: list[tuple[str, Mapping[str, Any]]] = []

    def visit(where: str, block: Any) -> None:
        block = _dict(block)
        if "cache_control" in block:
            found.append((f"{where}.cache_control", _dict(block["cache_control"])))
        if block.get("type") == "tool_result":
            for number, inner in enumerate(_list(block.get("content"))):
                visit(f"{where}.content.{number}", inner)

    for index, tool in enumerate(_list(payload.get("tools"))):
        visit(f"tools.{index}", tool)
    for index, block in enumerate(_list(payload.get("system"))):
        visit(f"system.{index}", block)
    for index, message in enumerate(_messages(payload)):
        for number, block in enumerate(_list(message.get("content"))):
            visit(f"messages.{index}.content.{number}", block)
    return found


def bedrock_breakpoints(payload: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(path, ``cachePoint``) of every cache point, in processing order: ``toolConfig.tools``,
    ``system``, then the messages."""
    lists = [("toolConfig.tools", _list(_dict(payload.get("toolConfig")).get("tools")))]
    lists.append(("system", _list(payload.get("system"))))
    for index, message in enumerate(_messages(payload)):
        lists.append((f"messages.{index}.content", _list(message.get("content"))))
    return [
        (f"{where}.{number}.cachePoint", _dict(_dict(block)["cachePoint"]))
        for where, blocks in lists
        for number, block in enumerate(blocks)
        if "cachePoint" in _dict(block)
    ]


def ttl_order(breakpoints: Breakpoints) -> Check:
    """The check that no one-hour breakpoint comes after a five-minute one (no ``ttl`` is five
    minutes), in the order ``breakpoints`` lists them."""

    def check(payload: Mapping[str, Any]) -> list[str]:
        out = []
        short = None
        for where, mark in breakpoints(payload):
            ttl = mark.get("ttl", "5m")  # no ttl is the default five minutes
            if ttl == "1h" and short is not None:
                out.append(f"{where}.ttl: {CACHE_TTL_ERROR} (the 5m block: {short})")
            elif ttl != "1h" and short is None:
                short = where
        return out

    return check


def at_most_four(breakpoints: Breakpoints) -> Check:
    """The check that ``breakpoints`` finds at most ``MAX_BREAKPOINTS`` in a request."""

    def check(payload: Mapping[str, Any]) -> list[str]:
        found = len(breakpoints(payload))
        if found <= MAX_BREAKPOINTS:
            return []
        return [
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {found}."
        ]

    return check


# ---------------------------------------------------------------------------------------------
# issue 37 item 4: thinking with a forced tool choice (Anthropic, Bedrock)

FORCED_THINKING_ERROR = "Thinking may not be enabled when tool_choice forces tool use."


def _thinking_on(thinking: Any) -> bool:
    return _dict(thinking).get("type") in ("enabled", "adaptive")


def anthropic_no_forced_tool_with_thinking(payload: Mapping[str, Any]) -> list[str]:
    """With thinking enabled, ``tool_choice`` is ``auto`` or ``none``: never ``any`` or a
    named tool (a forced tool is how a structured output was once asked for)."""
    choice = _dict(payload.get("tool_choice")).get("type")
    if _thinking_on(payload.get("thinking")) and choice in ("any", "tool"):
        return [f"tool_choice: {{'type': {choice!r}}}: {FORCED_THINKING_ERROR}"]
    return []


def bedrock_no_forced_tool_with_thinking(payload: Mapping[str, Any]) -> list[str]:
    """As for Anthropic, with thinking in ``additionalModelRequestFields.thinking`` and the
    choice in ``toolConfig.toolChoice`` (``any`` or ``tool`` force one)."""
    thinking = _dict(payload.get("additionalModelRequestFields")).get("thinking")
    choice = _dict(_dict(payload.get("toolConfig")).get("toolChoice"))
    forced = sorted(key for key in choice if key in ("any", "tool"))
    if _thinking_on(thinking) and forced:
        return [
            f"toolConfig.toolChoice.{forced[0]}: The model returned the following errors: "
            f"{FORCED_THINKING_ERROR}"
        ]
    return []
