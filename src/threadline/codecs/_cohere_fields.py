"""Cohere v2 Chat's request fields, structured output and usage reader (private): the pieces
its descriptor names beside the codec module (``threadline.codecs.cohere``).

- ``tools``: ``[{"type": "function", "function": {"name", "description", "parameters"}}]``;
  ``tool_choice``: ``REQUIRED`` or ``NONE`` (``auto`` is the default, left out); Cohere
  cannot force one named tool.
- structured output: ``response_format: {"type": "json_object", "json_schema": ...}``.
- usage: ``tokens`` (what the model read and wrote), else ``billed_units``; ``cached_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any

from threadline.usage import Usage

if TYPE_CHECKING:
    from threadline.codecs._requests import ToolRequest
    from threadline.tools import ToolDefinition

__all__ = ["output_schema", "request_fields", "usage_reader"]

_CHOICES = {"required": "REQUIRED", "none": "NONE"}


def request_fields(request: ToolRequest, body: Mapping[str, Any]) -> dict[str, Any]:
    """``tools`` + ``tool_choice`` of Cohere v2 Chat.

    Raises:
        threadline.UnsupportedContentError: ``tool_choice`` names a tool: Cohere's is
            ``REQUIRED`` or ``NONE`` only.
    """
    from threadline.codecs._requests import _listed
    from threadline.codecs._requests import _refuse

    fields: dict[str, Any] = {}
    if request.tools:
        fields["tools"] = _listed(request, _tool)
    choice = request.choice
    if choice in _CHOICES:
        fields["tool_choice"] = _CHOICES[choice]
    elif choice is not None and choice != "auto":
        raise _refuse(
            "cohere",
            choice,
            "Cohere's tool_choice is REQUIRED or NONE (or left out); to have this tool "
            "called, send it alone with tool_choice='required'",
        )
    return fields


def _tool(tool: ToolDefinition, request: ToolRequest) -> dict[str, Any]:
    from threadline.codecs._requests import _described
    from threadline.codecs._requests import _parameters

    function: dict[str, Any] = {"name": request.wire_name(tool.name)}
    _described(tool, function)
    function["parameters"] = _parameters(tool, "standard")
    return {"type": "function", "function": function}


def output_schema(out: dict[str, Any], definition: ToolDefinition) -> None:
    """``response_format``: a JSON object following the schema."""
    from threadline.tools import adapted_parameters

    schema = adapted_parameters(definition, "standard")
    out["response_format"] = {"type": "json_object", "json_schema": schema}


def usage_reader(count: Any) -> Usage:
    """Cohere's ``usage`` (``threadline._usage_readers``' counts of it)."""
    return Usage(
        input_tokens=count.first(("tokens", "input_tokens"), ("billed_units", "input_tokens")),
        output_tokens=count.first(("tokens", "output_tokens"), ("billed_units", "output_tokens")),
        cache_read_tokens=count("cached_tokens"),
    )
