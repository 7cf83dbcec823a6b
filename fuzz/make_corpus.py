"""Regenerate the seed corpus in ``fuzz/corpus`` (checked in; run this after a format change).

``corpus/load_json``: threadline JSON, from the deterministic sample conversations of
``threadline.testing`` plus a few edge cases. ``corpus/codecs``: for each codec the registry
lists (``threadline.codecs.codec_names``), what ``encode`` writes for those conversations
(``<codec>.decode.<n>.json``) and the provider responses of :data:`RESPONSES`, shaped like the
real APIs' (``<codec>.decode_response.<n>.json``). The files are plain JSON, keys sorted;
``run.py`` adds the selector byte the codec harness expects.

The run is repeatable: the same tree writes the same bytes, and a file whose bytes would not
change is not written. It owns only the files it generates (``<codec>.<function>.<n>.json``,
``envelope.<n>.json``, ``bare.json``, ``empty.json``): a hand-written seed under another name
(``gemini.decode.values.json``) stays, and ``--format`` touches that format's seeds only.

    python fuzz/make_corpus.py                          # every format, and load_json
    python fuzz/make_corpus.py --format gemini          # gemini's seeds, nothing else
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import sys
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import threadline as tl
from threadline.codecs import codec_names
from threadline.codecs import get_codec
from threadline.testing._conversations import hostile_id_conversation
from threadline.testing._conversations import sample_conversations

CORPUS = Path(__file__).resolve().parent / "corpus"

_USAGE_OPENAI = {"prompt_tokens": 120, "completion_tokens": 35, "total_tokens": 155}
_CALLS_OPENAI = [
    {
        "id": "call_w",
        "type": "function",
        "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
    },
    {"id": "call_t", "type": "function", "function": {"name": "time", "arguments": '{"tz": "Eu'}},
]

RESPONSES: Mapping[str, list[dict[str, Any]]] = {
    "openai_chat": [
        {
            "id": "chatcmpl-abc123",
            "object": "chat.completion",
            "created": 1_770_000_000,
            "model": "gpt-4.1-2025-04-14",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": "Checking both.",
                        "tool_calls": _CALLS_OPENAI,
                    },
                }
            ],
            "usage": _USAGE_OPENAI,
        },
        {
            "id": "chatcmpl-2",
            "object": "chat.completion",
            "created": 1_770_000_000,
            "model": "gpt-4.1",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "refusal": "I can't help with that.",
                        "annotations": [
                            {
                                "type": "url_citation",
                                "url_citation": {
                                    "start_index": 0,
                                    "end_index": 4,
                                    "url": "https://example.com",
                                    "title": "Example",
                                },
                            }
                        ],
                    },
                }
            ],
        },
    ],
    "mistral": [
        {
            "id": "cmpl-e5cc70bb28c444948073e77776eb30ef",
            "object": "chat.completion",
            "model": "magistral-medium-2509",
            "created": 1_770_000_000,
            "usage": _USAGE_OPENAI,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "thinking",
                                "thinking": [{"type": "text", "text": "Two tools."}],
                                "signature": "sg",
                            },
                            {"type": "text", "text": "Checking both."},
                        ],
                        "tool_calls": [
                            {
                                "id": "D681PevKs",
                                "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
                            }
                        ],
                    },
                }
            ],
        },
        {
            "id": "cmpl-2",
            "object": "chat.completion",
            "model": "mistral-large-latest",
            "created": 1_770_000_000,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "Paris."},
                }
            ],
        },
    ],
    "anthropic": [
        {
            "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [
                {"type": "thinking", "thinking": "Need the weather.", "signature": "EqQBCgIY"},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3"},
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_01A", "name": "weather", "input": {"c": "P"}},
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {
                "input_tokens": 2095,
                "output_tokens": 503,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 1800,
            },
        },
        {
            "id": "msg_2",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_1",
                    "name": "web_search",
                    "input": {"query": "news"},
                },
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": "srvtoolu_1",
                    "content": [
                        {
                            "type": "web_search_result",
                            "url": "https://example.com/news",
                            "title": "News",
                            "encrypted_content": "abc",
                        }
                    ],
                },
                {
                    "type": "text",
                    "text": "Here is the news.",
                    "citations": [
                        {
                            "type": "web_search_result_location",
                            "url": "https://example.com/news",
                            "title": "News",
                            "encrypted_index": "xyz",
                            "cited_text": "news",
                        }
                    ],
                },
            ],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
    ],
    "gemini": [
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"text": "Two calls.", "thought": True, "thoughtSignature": "c2ln"},
                            {
                                "functionCall": {
                                    "id": "fc_1",
                                    "name": "weather",
                                    "args": {"city": "Paris"},
                                },
                                "thoughtSignature": "c2ln",
                            },
                            {"functionCall": {"name": "time", "args": {}}},
                        ],
                    },
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "modelVersion": "gemini-3-pro-preview",
            "responseId": "resp-123",
            "usageMetadata": {
                "promptTokenCount": 100,
                "candidatesTokenCount": 20,
                "thoughtsTokenCount": 50,
                "totalTokenCount": 170,
            },
        },
        {"promptFeedback": {"blockReason": "SAFETY"}, "modelVersion": "gemini-2.5-flash"},
    ],
    "bedrock": [
        {
            "ResponseMetadata": {"RequestId": "4c2b7a70", "HTTPStatusCode": 200},
            "output": {
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "reasoningContent": {
                                "reasoningText": {"text": "Weather first.", "signature": "sig"}
                            }
                        },
                        {"text": "Checking."},
                        {
                            "toolUse": {
                                "toolUseId": "tooluse_1",
                                "name": "weather",
                                "input": {"city": "Paris"},
                            }
                        },
                    ],
                }
            },
            "stopReason": "tool_use",
            "usage": {"inputTokens": 120, "outputTokens": 35, "totalTokens": 155},
            "metrics": {"latencyMs": 640},
        },
        {
            "output": {
                "message": {
                    "role": "assistant",
                    "content": [{"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}}],
                }
            },
            "stopReason": "end_turn",
        },
    ],
    "openai_responses": [
        {
            "id": "resp_abc",
            "object": "response",
            "created_at": 1_770_000_000,
            "model": "gpt-5-2025-08-07",
            "status": "completed",
            "output": [
                {
                    "type": "reasoning",
                    "id": "rs_9",
                    "summary": [{"type": "summary_text", "text": "Two tools."}],
                    "encrypted_content": "gAAAAB-enc",
                },
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_w",
                    "name": "weather",
                    "arguments": '{"city":"Paris"}',
                },
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [
                        {"type": "output_text", "text": "Checking.", "annotations": []},
                        {"type": "refusal", "refusal": "Not that."},
                    ],
                },
            ],
            "usage": {
                "input_tokens": 120,
                "input_tokens_details": {"cached_tokens": 64},
                "output_tokens": 35,
                "output_tokens_details": {"reasoning_tokens": 20},
                "total_tokens": 155,
            },
        },
        {
            "id": "resp_2",
            "object": "response",
            "model": "gpt-5",
            "status": "completed",
            "output": [
                {
                    "type": "web_search_call",
                    "id": "ws_1",
                    "status": "completed",
                    "action": {"type": "search", "query": "news"},
                }
            ],
        },
    ],
    "cohere": [
        {
            "id": "c14c80c3-18eb-4519-9460-6c92edd8cfb4",
            "finish_reason": "TOOL_CALL",
            "message": {
                "role": "assistant",
                "tool_plan": "I will look up the weather in Toronto.",
                "tool_calls": [
                    {
                        "id": "get_weather_1byjy32y4hvq",
                        "type": "function",
                        "function": {
                            "name": "get_weather",
                            "arguments": '{"location":"Toronto"}',
                        },
                    }
                ],
            },
            "usage": {
                "billed_units": {"input_tokens": 37, "output_tokens": 28},
                "tokens": {"input_tokens": 913, "output_tokens": 83},
            },
        },
        {
            "id": "6e6ae7d4-9b8a-4a0e-9b1b-0c1d1b0c1d1b",
            "finish_reason": "COMPLETE",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "It is 24 degrees in Toronto."}],
                "citations": [
                    {
                        "start": 6,
                        "end": 16,
                        "text": "24 degrees",
                        "type": "TEXT_CONTENT",
                        "sources": [
                            {
                                "type": "tool",
                                "id": "get_weather_1byjy32y4hvq:0",
                                "tool_output": {"temperature": 24},
                            }
                        ],
                    }
                ],
            },
            "usage": {
                "billed_units": {"input_tokens": 61, "output_tokens": 9},
                "tokens": {"input_tokens": 1011, "output_tokens": 41},
                "cached_tokens": 896,
            },
        },
    ],
    "ollama": [
        {
            "model": "qwen3:8b",
            "created_at": "2025-10-17T23:14:07.414671Z",
            "message": {
                "role": "assistant",
                "content": "",
                "thinking": "Two tools.",
                "tool_calls": [
                    {"function": {"name": "weather", "arguments": {"city": "Paris"}}},
                    {"function": {"name": "time", "arguments": {"tz": "Europe/Paris"}}},
                ],
            },
            "done": True,
            "done_reason": "stop",
            "total_duration": 4883583458,
            "load_duration": 1334875,
            "prompt_eval_count": 120,
            "prompt_eval_duration": 342546000,
            "eval_count": 35,
            "eval_duration": 4535599000,
        },
        {
            "model": "llama3.2",
            "created_at": "2025-10-17T23:14:08Z",
            "message": {"role": "assistant", "content": "Paris."},
            "done": True,
            "done_reason": "stop",
        },
    ],
    **{
        name: [
            {
                "id": f"{name}-1",
                "object": "chat.completion",
                "model": "reasoner",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "tool_calls",
                        "message": {
                            "role": "assistant",
                            "content": "<think>Plan.</think>Checking.",
                            field: "Look it up.",
                            "tool_calls": [
                                {
                                    "id": "call_00_a",
                                    "type": "function",
                                    "function": {"name": "lookup", "arguments": '{"q": "x"}'},
                                }
                            ],
                        },
                    }
                ],
            }
        ]
        for name, field in (
            ("deepseek", "reasoning_content"),
            ("openrouter", "reasoning"),
            ("vllm", "reasoning_content"),
            ("groq", "reasoning"),
            ("qwen", "reasoning_content"),
            ("moonshot", "reasoning_content"),
            ("xai", "reasoning_content"),
            ("together", "reasoning"),
        )
    },
}
"""Per registered format, responses shaped like its API's (the ``decode_response`` seeds); a
format the registry lists without an entry here fails ``tests/fuzz/test_make_corpus.py``."""


def _json_default(value: object) -> str:
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")  # the HTTP API's form of Bedrock bytes
    raise TypeError(f"{type(value).__name__} is not JSON")


def _json(document: Any) -> bytes:
    """One seed's bytes: keys sorted, so that a codec writing its keys in another order (no
    change on the wire) leaves the corpus as it is."""
    text = json.dumps(document, default=_json_default, ensure_ascii=False, sort_keys=True)
    return (text + "\n").encode("utf-8")


class CorpusError(Exception):
    """The corpus cannot be made: a format without seed responses, an unknown format."""


def _conversations() -> list[list[tl.Message]]:
    return [*sample_conversations(13, 4), hostile_id_conversation()]


def missing_responses(names: Sequence[str] | None = None) -> list[str]:
    """The registered formats (or ``names``) with no seed responses in :data:`RESPONSES`."""
    return [name for name in (codec_names() if names is None else names) if not RESPONSES.get(name)]


def _check_formats(formats: Sequence[str]) -> None:
    registered = codec_names()
    unknown = [name for name in formats if name not in registered]
    if unknown:
        raise CorpusError(
            f"--format {unknown[0]!r} is not a registered format; the formats are "
            f"{', '.join(registered)}"
        )
    missing = missing_responses(formats)
    if missing:
        raise CorpusError(
            f"no seed responses for the format {missing[0]!r}: add a list of responses shaped "
            "like the real API's under that name to RESPONSES in fuzz/make_corpus.py"
        )


def seeds(formats: Sequence[str] | None = None) -> dict[str, bytes]:
    """The generated seeds, as ``{path under the corpus: bytes}``: every registered format's
    and the ``load_json`` ones, or, with ``formats``, those formats' only.

    Raises:
        CorpusError: a name in ``formats`` is not registered, or a format has no seed
            responses in :data:`RESPONSES`.
    """
    names = codec_names() if formats is None else tuple(dict.fromkeys(formats))
    _check_formats(names)
    conversations = _conversations()
    out: dict[str, bytes] = {}
    if formats is None:
        for index, messages in enumerate(conversations):
            out[f"load_json/envelope.{index}.json"] = _json(json.loads(tl.dump_json(messages)))
        bare = json.loads(tl.dump_json(conversations[0]))["messages"]
        out["load_json/bare.json"] = _json(bare)
        out["load_json/empty.json"] = _json({"format": "threadline", "version": 1, "messages": []})
    for name in names:
        codec = get_codec(name)
        for index, messages in enumerate(conversations):
            out[f"codecs/{name}.decode.{index}.json"] = _json(codec.encode(messages))
        for index, response in enumerate(RESPONSES[name]):
            codec.decode_response(response)  # a seed that does not decode fuzzes little
            out[f"codecs/{name}.decode_response.{index}.json"] = _json(response)
    return out


def _owned(corpus: Path, formats: Sequence[str] | None) -> list[Path]:
    """The files under ``corpus`` a run for ``formats`` generates and so may replace or remove:
    numbered seeds of those formats (and the load_json seeds on a full run); never a
    hand-written seed."""
    names = codec_names() if formats is None else formats
    if not names:
        return []
    pattern = re.compile(
        rf"(?:{'|'.join(map(re.escape, names))})\.(?:decode|decode_response)\.[0-9]+\.json"
    )
    owned = [path for path in (corpus / "codecs").glob("*.json") if pattern.fullmatch(path.name)]
    if formats is None:
        load_json = re.compile(r"envelope\.[0-9]+\.json|bare\.json|empty\.json")
        owned.extend(
            path for path in (corpus / "load_json").glob("*.json") if load_json.fullmatch(path.name)
        )
    return sorted(owned)


def write(corpus: Path = CORPUS, formats: Sequence[str] | None = None) -> list[str]:
    """Bring the seeds of ``formats`` (default: all, and load_json) under ``corpus`` up to
    date: write each generated seed whose bytes differ, remove the numbered seeds of those
    formats it no longer generates. Other files are not touched.

    Args:
        corpus: the corpus directory (``fuzz/corpus``; a test passes a temporary one).
        formats: registered format names; ``None`` for every format and the load_json seeds.

    Returns:
        The paths under ``corpus`` written or removed, sorted; empty when nothing changed.

    Raises:
        CorpusError: as :func:`seeds`, before anything is written.
    """
    wanted = seeds(formats)
    changed: list[str] = []
    for relative, data in wanted.items():
        path = corpus / relative
        if path.is_file() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        changed.append(relative)
    for path in _owned(corpus, formats):
        relative = path.relative_to(corpus).as_posix()
        if relative not in wanted:
            path.unlink()
            changed.append(relative)
    return sorted(changed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--format",
        action="append",
        dest="formats",
        metavar="NAME",
        help="only this format's seeds (repeatable); default: every format and load_json",
    )
    parser.add_argument("--out", type=Path, default=CORPUS, help="the corpus directory")
    args = parser.parse_args(argv)
    try:
        changed = write(args.out, args.formats)
    except CorpusError as error:
        print(f"make_corpus: {error}", file=sys.stderr)
        return 2
    for relative in changed:
        print(f"updated {relative}")
    print(f"{len(changed)} seed files changed in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
