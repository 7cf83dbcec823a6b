"""threadline: typed, validated, provider-neutral conversation history for LLM agents.

This module only re-exports. Heavier parts (codecs, stores, context management) load on first
use, so ``import threadline`` imports pydantic and nothing optional.
"""

from __future__ import annotations

from threadline.errors import (
    CodecError,
    ErrorDetail,
    IntegrityError,
    PluginError,
    StoreError,
    StoreRecoveryWarning,
    ThreadlineError,
    ThreadlineWarning,
    UnknownProviderError,
    UnsupportedContentError,
    UnsupportedVersionError,
    ValidationError,
)
from threadline.messages import (
    FilePart,
    HookPart,
    Message,
    Part,
    ProviderToolCallPart,
    ProviderToolResultPart,
    ReasoningPart,
    Role,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    assistant_message,
    file_part,
    hook_part,
    internal_message,
    reasoning_part,
    same_content,
    system_message,
    text_part,
    tool_call_part,
    tool_message,
    tool_result_part,
    use_id_factory,
    user_message,
)
from threadline.serialization import dump_json, json_schema, load_json

__version__ = "0.1.0.dev0"

__all__ = [
    "CodecError",
    "ErrorDetail",
    "FilePart",
    "HookPart",
    "IntegrityError",
    "Message",
    "Part",
    "PluginError",
    "ProviderToolCallPart",
    "ProviderToolResultPart",
    "ReasoningPart",
    "Role",
    "StoreError",
    "StoreRecoveryWarning",
    "TextPart",
    "ThreadlineError",
    "ThreadlineWarning",
    "ToolCallPart",
    "ToolResultPart",
    "UnknownProviderError",
    "UnsupportedContentError",
    "UnsupportedVersionError",
    "ValidationError",
    "__version__",
    "assistant_message",
    "dump_json",
    "file_part",
    "hook_part",
    "internal_message",
    "json_schema",
    "load_json",
    "reasoning_part",
    "same_content",
    "system_message",
    "text_part",
    "tool_call_part",
    "tool_message",
    "tool_result_part",
    "use_id_factory",
    "user_message",
]
