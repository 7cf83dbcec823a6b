"""Seals made before ``replay`` was sealed still verify, and the recipe's forgery fails.

``SEAL`` was computed on main at f2d304d (before the flag was covered) over ``history()``:
the canonical form of a message with ``replay=False`` must never change, or every seal a
server handed out would stop verifying.
"""

from __future__ import annotations

import json
from datetime import datetime
from datetime import timezone

import pytest

import threadline as tl
from threadline.sealing import canonical_message

KEY = bytes(range(32))
SEAL = "v1.2026.5.pT_0MbejUscWBuX_U48GPMshyNOVNuClCR54LKrvCB8"
CANONICAL_M2 = (
    b'{"created_at":null,"id":"m2","metadata":{"usage":{"out":9}},"parts":[{"encrypted":null,'
    b'"item_id":null,"metadata":{},"model":"m-1","provider":"anthropic","redacted":false,'
    b'"signature":"sig","summary":[],"text":"thinking","type":"reasoning"},{"arguments":'
    b'{"city":"Paris"},"id":"call_1","metadata":{},"name":"weather","raw_arguments":null,'
    b'"type":"tool_call"}],"role":"assistant"}'
)


def history() -> list[tl.Message]:
    return [
        tl.system_message("Be brief.", id="s1"),
        tl.user_message(
            "Weather in Paris? é 日本",
            tl.file_part(b"\xfb\xff", "image/png"),
            id="m1",
            created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc),
        ),
        tl.assistant_message(
            tl.reasoning_part("thinking", signature="sig", provider="anthropic", model="m-1"),
            tl.tool_call_part("call_1", "weather", {"city": "Paris"}),
            id="m2",
            metadata={"usage": {"out": 9}},
        ),
        tl.tool_message(tl.tool_result_part("call_1", "21 °C, clear"), id="m3"),
        tl.assistant_message("It is 21 °C.", id="m4"),
    ]


def test_a_seal_made_before_replay_was_sealed_still_verifies() -> None:
    tl.verify(history(), SEAL, {"2026": KEY}, conversation_id="conv-1")
    assert tl.seal(history(), KEY, conversation_id="conv-1", key_id="2026") == SEAL
    assert canonical_message(history()[2]) == CANONICAL_M2


def test_it_verifies_after_a_json_round_trip() -> None:
    loaded = tl.load_json(tl.dump_json(history()), limits=tl.Limits.untrusted())
    sealed, tail = tl.verify_prefix(loaded, SEAL, {"2026": KEY}, conversation_id="conv-1")
    assert sealed == history()
    assert tail == []


def test_a_client_cannot_flip_replay_on_a_sealed_tool_call() -> None:
    # The documented server recipe: load the client's JSON, then verify the sealed prefix.
    body = json.loads(tl.dump_json(history()))
    body["messages"][2]["replay"] = True
    with pytest.raises(tl.ValidationError, match="runtime-only"):
        tl.load_json(json.dumps(body), limits=tl.Limits.untrusted())
    # Mappings given to verify_prefix directly are read the same way.
    with pytest.raises(tl.ValidationError, match="runtime-only"):
        tl.verify_prefix(body["messages"], SEAL, {"2026": KEY}, conversation_id="conv-1")
    # A server that reads the body with pydantic itself (Python: the flag is kept) is caught
    # by the seal check.
    read = [tl.Message.model_validate(item) for item in body["messages"]]
    assert read[2].replay
    with pytest.raises(tl.SealError, match=r"messages\[2\] has replay=True"):
        tl.verify_prefix(read, SEAL, {"2026": KEY}, conversation_id="conv-1")


def test_a_flipped_replay_flag_breaks_the_seal() -> None:
    messages = history()
    messages[2] = messages[2].model_copy(update={"replay": True})
    with pytest.raises(tl.SealError) as info:
        tl.verify(messages, SEAL, {"2026": KEY}, conversation_id="conv-1")
    assert info.value.reason == "mismatch"
