"""threadline: typed, validated, provider-neutral conversation history for LLM agents.

This module only re-exports. Heavier parts (codecs, stores, context management) load on first
use, so ``import threadline`` imports pydantic and nothing optional.
"""

import importlib as _importlib
import typing as _typing

from threadline.errors import (
    CodecError,
    ConflictError,
    ConversationReplacedError,
    ErrorDetail,
    IntegrityError,
    LimitExceededError,
    PluginError,
    SealError,
    StoreError,
    StoreRecoveryWarning,
    ThreadlineError,
    ThreadlineWarning,
    UnknownProviderError,
    UnsupportedContentError,
    UnsupportedVersionError,
    ValidationError,
)
from threadline.history import History, HistoryEvent, Snapshot
from threadline.integrity import (
    IntegrityIssue,
    IntegrityReport,
    Repaired,
    check_messages,
    prepare_messages,
    repair_messages,
    sanitize_untrusted,
)
from threadline.limits import Limits
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
from threadline.sealing import seal, verify, verify_prefix
from threadline.serialization import dump_json, json_schema, load_json
from threadline.tokens import TokenCounter, estimate_tokens
from threadline.usage import Usage

if _typing.TYPE_CHECKING:
    from threadline.codecs import decode, decode_response, encode
    from threadline.context import (
        Plugin,
        RollingSummary,
        ToolResultMasking,
        Trimmed,
        trim_messages,
    )
    from threadline.stores import (
        AsyncStore,
        FileBlobStore,
        JsonlStore,
        MemoryStore,
        SQLiteBlobStore,
        SQLiteStore,
        Store,
    )
    from threadline.streaming import (
        AsyncStream,
        Finish,
        PartEnd,
        PartStart,
        ReasoningDelta,
        StreamAssembler,
        StreamEvent,
        TextDelta,
        ToolCallDelta,
        assemble,
        astream,
    )
    from threadline.tools import ToolDefinition, tool_from_function, tool_from_model

__version__ = "0.1.0.dev0"

# Names whose modules load on first use, so `import threadline` stays light.
_LAZY: dict[str, str] = {
    "Plugin": "threadline.context",
    "RollingSummary": "threadline.context",
    "ToolDefinition": "threadline.tools",
    "ToolResultMasking": "threadline.context",
    "Trimmed": "threadline.context",
    "trim_messages": "threadline.context",
    "AsyncStore": "threadline.stores",
    "FileBlobStore": "threadline.stores",
    "JsonlStore": "threadline.stores",
    "MemoryStore": "threadline.stores",
    "SQLiteBlobStore": "threadline.stores",
    "SQLiteStore": "threadline.stores",
    "Store": "threadline.stores",
    "AsyncStream": "threadline.streaming",
    "Finish": "threadline.streaming",
    "PartEnd": "threadline.streaming",
    "PartStart": "threadline.streaming",
    "ReasoningDelta": "threadline.streaming",
    "StreamAssembler": "threadline.streaming",
    "StreamEvent": "threadline.streaming",
    "TextDelta": "threadline.streaming",
    "ToolCallDelta": "threadline.streaming",
    "assemble": "threadline.streaming",
    "astream": "threadline.streaming",
    "decode": "threadline.codecs",
    "decode_response": "threadline.codecs",
    "encode": "threadline.codecs",
    "tool_from_function": "threadline.tools",
    "tool_from_model": "threadline.tools",
}


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'threadline' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AsyncStore",
    "AsyncStream",
    "CodecError",
    "ConflictError",
    "ConversationReplacedError",
    "ErrorDetail",
    "FileBlobStore",
    "FilePart",
    "Finish",
    "History",
    "HistoryEvent",
    "HookPart",
    "IntegrityError",
    "IntegrityIssue",
    "IntegrityReport",
    "JsonlStore",
    "LimitExceededError",
    "Limits",
    "MemoryStore",
    "Message",
    "Part",
    "PartEnd",
    "PartStart",
    "Plugin",
    "PluginError",
    "ProviderToolCallPart",
    "ProviderToolResultPart",
    "ReasoningDelta",
    "ReasoningPart",
    "Repaired",
    "Role",
    "RollingSummary",
    "SQLiteBlobStore",
    "SQLiteStore",
    "SealError",
    "Snapshot",
    "Store",
    "StoreError",
    "StoreRecoveryWarning",
    "StreamAssembler",
    "StreamEvent",
    "TextDelta",
    "TextPart",
    "ThreadlineError",
    "ThreadlineWarning",
    "TokenCounter",
    "ToolCallDelta",
    "ToolCallPart",
    "ToolDefinition",
    "ToolResultMasking",
    "ToolResultPart",
    "Trimmed",
    "UnknownProviderError",
    "UnsupportedContentError",
    "UnsupportedVersionError",
    "Usage",
    "ValidationError",
    "__version__",
    "assemble",
    "assistant_message",
    "astream",
    "check_messages",
    "decode",
    "decode_response",
    "dump_json",
    "encode",
    "estimate_tokens",
    "file_part",
    "hook_part",
    "internal_message",
    "json_schema",
    "load_json",
    "prepare_messages",
    "reasoning_part",
    "repair_messages",
    "same_content",
    "sanitize_untrusted",
    "seal",
    "system_message",
    "text_part",
    "tool_call_part",
    "tool_from_function",
    "tool_from_model",
    "tool_message",
    "tool_result_part",
    "trim_messages",
    "use_id_factory",
    "user_message",
    "verify",
    "verify_prefix",
]
