"""The peers, each called the way its documentation tells users to.

pydantic-ai (``pydantic-ai-slim``): its message types and ``ModelMessagesTypeAdapter`` for JSON,
``repair_messages`` before a model call. langchain-core: ``messages_to_dict`` + ``json.dumps``
and ``json.loads`` + ``messages_from_dict`` for JSON (what its chat-history stores do),
``trim_messages`` with ``count_tokens_approximately`` for a token budget.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import messages_from_dict
from langchain_core.messages import messages_to_dict
from langchain_core.messages import trim_messages
from langchain_core.messages.utils import count_tokens_approximately
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.messages import repair_messages


def pydantic_ai_dump(messages: list[Any]) -> bytes:
    """pydantic-ai's JSON: ``ModelMessagesTypeAdapter.dump_json``."""
    return ModelMessagesTypeAdapter.dump_json(messages)


def pydantic_ai_load(data: bytes) -> list[Any]:
    """pydantic-ai's JSON back to messages: ``ModelMessagesTypeAdapter.validate_json``."""
    return ModelMessagesTypeAdapter.validate_json(data)


def pydantic_ai_repair(messages: list[Any]) -> list[Any]:
    """pydantic-ai's history repair (orphaned results dropped, dangling calls answered)."""
    return repair_messages(messages)


def langchain_dump(messages: list[Any]) -> bytes:
    """LangChain's JSON: ``messages_to_dict`` then ``json.dumps`` (encoded to UTF-8 bytes)."""
    return json.dumps(messages_to_dict(messages)).encode()


def langchain_load(data: bytes) -> list[Any]:
    """LangChain's JSON back to messages: ``json.loads`` then ``messages_from_dict``."""
    return messages_from_dict(json.loads(data))


def langchain_trim(messages: list[Any], max_tokens: int) -> list[Any]:
    """``trim_messages`` as LangChain documents it for chat history: newest messages that fit,
    system message kept, starting on a human message, approximate token counting."""
    return trim_messages(
        messages,
        max_tokens=max_tokens,
        token_counter=count_tokens_approximately,
        strategy="last",
        include_system=True,
        start_on="human",
    )


def versions() -> dict[str, str]:
    """Installed versions of the peers and the floors' libraries."""
    from importlib.metadata import version

    names = ("pydantic-ai-slim", "langchain-core", "orjson", "pydantic", "pydantic-core")
    return {name: version(name) for name in names}
