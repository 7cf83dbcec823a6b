"""threadline: typed, validated, provider-neutral conversation history for LLM agents.

This module only re-exports. Heavier parts (codecs, stores, context management) load on first
use, so ``import threadline`` imports pydantic and nothing optional.
"""

import typing as _typing

from threadline._lazy import lazy_attributes as _lazy_attributes
from threadline.errors import CodecError
from threadline.errors import ConflictError
from threadline.errors import ConversationReplacedError
from threadline.errors import ErrorDetail
from threadline.errors import IntegrityError
from threadline.errors import LimitExceededError
from threadline.errors import PluginError
from threadline.errors import SealError
from threadline.errors import StoreError
from threadline.errors import StoreRecoveryWarning
from threadline.errors import ThreadlineError
from threadline.errors import ThreadlineWarning
from threadline.errors import UnknownProviderError
from threadline.errors import UnsupportedContentError
from threadline.errors import UnsupportedVersionError
from threadline.errors import ValidationError
from threadline.history import History
from threadline.history import HistoryEvent
from threadline.history import Snapshot
from threadline.integrity import IntegrityIssue
from threadline.integrity import IntegrityReport
from threadline.integrity import Repaired
from threadline.integrity import check_messages
from threadline.integrity import pending_calls
from threadline.integrity import prepare_messages
from threadline.integrity import repair_messages
from threadline.integrity import sanitize_untrusted
from threadline.limits import Limits
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import Part
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import Role
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart
from threadline.messages import assistant_message
from threadline.messages import file_part
from threadline.messages import hook_part
from threadline.messages import internal_message
from threadline.messages import reasoning_part
from threadline.messages import same_content
from threadline.messages import system_message
from threadline.messages import text_part
from threadline.messages import tool_call_part
from threadline.messages import tool_message
from threadline.messages import tool_result_part
from threadline.messages import use_id_factory
from threadline.messages import user_message
from threadline.sealing import seal
from threadline.sealing import verify
from threadline.sealing import verify_prefix
from threadline.serialization import dump_json
from threadline.serialization import json_schema
from threadline.serialization import load_json
from threadline.tokens import TokenCounter
from threadline.tokens import estimate_tokens
from threadline.usage import Usage

if _typing.TYPE_CHECKING:
    from threadline._history_cache import AsyncHistoryCache
    from threadline._history_cache import HistoryCache
    from threadline._running import arun_tool_calls
    from threadline._running import run_tool_calls
    from threadline.codecs import decode
    from threadline.codecs import decode_response
    from threadline.codecs import encode
    from threadline.context import Plugin
    from threadline.context import RollingSummary
    from threadline.context import ToolResultMasking
    from threadline.context import Trimmed
    from threadline.context import trim_messages
    from threadline.stores import Appended
    from threadline.stores import AsyncStore
    from threadline.stores import ConversationInfo
    from threadline.stores import FileBlobStore
    from threadline.stores import JsonlStore
    from threadline.stores import MemoryStore
    from threadline.stores import SQLiteBlobStore
    from threadline.stores import SQLiteStore
    from threadline.stores import Store
    from threadline.streaming import AsyncStream
    from threadline.streaming import Finish
    from threadline.streaming import PartEnd
    from threadline.streaming import PartStart
    from threadline.streaming import ReasoningDelta
    from threadline.streaming import StreamAssembler
    from threadline.streaming import StreamEvent
    from threadline.streaming import TextDelta
    from threadline.streaming import ToolCallDelta
    from threadline.streaming import assemble
    from threadline.streaming import astream
    from threadline.tools import ToolDefinition
    from threadline.tools import tool_from_function
    from threadline.tools import tool_from_model

__version__ = "0.1.0.dev0"

# Names whose modules load on first use, so `import threadline` stays light.
_LAZY: dict[str, str] = {
    "Plugin": "threadline.context",
    "RollingSummary": "threadline.context",
    "ToolDefinition": "threadline.tools",
    "ToolResultMasking": "threadline.context",
    "Trimmed": "threadline.context",
    "trim_messages": "threadline.context",
    "AsyncHistoryCache": "threadline._history_cache",
    "HistoryCache": "threadline._history_cache",
    "Appended": "threadline.stores",
    "AsyncStore": "threadline.stores",
    "ConversationInfo": "threadline.stores",
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
    "arun_tool_calls": "threadline._running",
    "run_tool_calls": "threadline._running",
    "decode": "threadline.codecs",
    "decode_response": "threadline.codecs",
    "encode": "threadline.codecs",
    "tool_from_function": "threadline.tools",
    "tool_from_model": "threadline.tools",
}


__getattr__, __dir__ = _lazy_attributes("threadline", _LAZY, globals())

__all__ = [
    "Appended",
    "AsyncHistoryCache",
    "AsyncStore",
    "AsyncStream",
    "CodecError",
    "ConflictError",
    "ConversationInfo",
    "ConversationReplacedError",
    "ErrorDetail",
    "FileBlobStore",
    "FilePart",
    "Finish",
    "History",
    "HistoryCache",
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
    "arun_tool_calls",
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
    "pending_calls",
    "prepare_messages",
    "reasoning_part",
    "repair_messages",
    "run_tool_calls",
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
