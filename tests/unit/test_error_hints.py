"""Error messages that say what to do (issue 21, items 5 and 7): a role threadline does not
have, an OpenAI-style ``content`` message, binding a bound history, and a reduce with nothing
to reduce."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import threadline as tl
from threadline import History
from threadline.stores import MemoryStore


def problems(error: tl.ValidationError) -> dict[str, str]:
    return {detail.path: detail.message for detail in error.errors}


DEVELOPER: dict[str, Any] = {"role": "developer", "parts": [{"type": "text", "text": "hi"}]}


class TestAnUnknownRole:
    def test_a_mapping_given_to_history_names_the_roles_and_the_openai_mapping(self) -> None:
        with pytest.raises(tl.ValidationError) as caught:
            History().append(DEVELOPER)
        message = problems(caught.value)["message.role"]
        for role in ("system", "user", "assistant", "tool", "internal"):
            assert role in message
        assert "developer" in message
        assert "OpenAI's developer role is `system`" in message
        assert "provider='openai_chat'" in message

    def test_load_json_says_the_same(self) -> None:
        document = tl.dump_json([tl.user_message("hi")]).replace(b'"user"', b'"developer"')
        with pytest.raises(tl.ValidationError) as caught:
            tl.load_json(document)
        assert "OpenAI's developer role is `system`" in problems(caught.value)["messages[0].role"]

    def test_another_unknown_role_names_the_roles_without_the_developer_hint(self) -> None:
        with pytest.raises(tl.ValidationError) as caught:
            History().append({**DEVELOPER, "role": "model"})
        message = problems(caught.value)["message.role"]
        assert "'model' is not a threadline role" in message
        assert "internal" in message
        assert "developer" not in message


class TestContentInsteadOfParts:
    HINT = (
        "threadline messages hold `parts`, not `content`: build it with user_message(...) or "
        "decode provider payloads with threadline.decode(..., provider='openai_chat')"
    )

    def test_appending_an_openai_style_dict_points_at_the_constructors(self) -> None:
        history = History()
        with pytest.raises(tl.ValidationError) as caught:
            history.append({"role": "user", "content": "hi"})
        assert problems(caught.value) == {"message.parts": self.HINT}
        assert len(history) == 0

    def test_load_json_of_openai_style_messages(self) -> None:
        document = b'[{"role": "user", "content": "hi"}]'
        with pytest.raises(tl.ValidationError) as caught:
            tl.load_json(document)
        assert problems(caught.value) == {"messages[0].parts": self.HINT}

    def test_a_missing_part_without_content_stays_field_required(self) -> None:
        with pytest.raises(tl.ValidationError) as caught:
            History().append({"role": "user"})
        assert problems(caught.value) == {"message.parts": "Field required"}

    def test_content_next_to_parts_is_still_an_unknown_field(self) -> None:
        with pytest.raises(tl.ValidationError) as caught:
            History().append(
                {"role": "user", "parts": [{"type": "text", "text": "a"}], "content": "b"}
            )
        assert list(problems(caught.value)) == ["message.content"]


class TestBindingTwice:
    def test_the_error_names_the_binding_and_how_to_bind_elsewhere(self) -> None:
        store = MemoryStore()
        history = History([tl.user_message("hi")]).bind(store, "first")
        with pytest.raises(RuntimeError) as caught:
            history.bind(MemoryStore(), "second")
        message = str(caught.value)
        assert "'first'" in message
        assert "MemoryStore" in message
        assert "history.copy()" in message

    def test_abind_raises_the_same(self) -> None:
        class AsyncMemory:
            def __init__(self) -> None:
                self.saved: dict[str, list[tl.Message]] = {}

            async def load(self, conversation_id: str) -> list[tl.Message]:
                return list(self.saved.get(conversation_id, []))

            async def append(self, conversation_id: str, messages: list[tl.Message]) -> None:
                self.saved.setdefault(conversation_id, []).extend(messages)

            async def replace(self, conversation_id: str, messages: list[tl.Message]) -> None:
                self.saved[conversation_id] = list(messages)

        async def go() -> None:
            history = await History().abind(AsyncMemory(), "first")  # type: ignore[arg-type]
            with pytest.raises(RuntimeError, match=r"'first'.*history\.copy\(\)"):
                await history.abind(AsyncMemory(), "second")  # type: ignore[arg-type]

        asyncio.run(go())


class TestPartRoleArticle:
    def test_an_assistant_message(self) -> None:
        with pytest.raises(tl.ValidationError) as caught:
            tl.assistant_message(tl.tool_result_part("c", "x"))  # type: ignore[arg-type]
        assert "which an assistant message cannot hold" in str(caught.value)
        assert "a assistant" not in str(caught.value)


class TestReduceWithoutAReducer:
    def test_nothing_to_do(self) -> None:
        history = History([tl.user_message("hi")])
        assert asyncio.run(history.reduce()) is False
        assert asyncio.run(history.reduce(max_messages=0)) is False
        assert len(history) == 1


class TestTheRoleValueShown:
    def test_a_long_or_odd_role_is_cut_short_and_escaped(self) -> None:
        with pytest.raises(tl.ValidationError) as caught:
            History().append({**DEVELOPER, "role": "x\n" * 100})
        message = problems(caught.value)["message.role"]
        assert "\n" not in message
        assert message.startswith("'x\\nx\\n")
        assert "...' is not a threadline role" in message
        assert len(message) < 200

    def test_a_role_that_is_not_text(self) -> None:
        with pytest.raises(tl.ValidationError) as caught:
            History().append({**DEVELOPER, "role": 5})
        assert problems(caught.value)["message.role"].startswith(
            "a value of type int is not a threadline role"
        )
