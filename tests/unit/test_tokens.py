"""Unit tests for threadline.tokens: the default estimator and plugging in another counter."""

from __future__ import annotations

import math
from typing import Any

import pytest

import threadline as tl
from threadline.context import trim_messages
from threadline.history import History
from threadline.tokens import FILE_TOKENS
from threadline.tokens import MESSAGE_TOKENS
from threadline.tokens import TokenCounter
from threadline.tokens import check_count
from threadline.tokens import checked_counter
from threadline.tokens import content_chars
from threadline.tokens import estimate_tokens
from threadline.tokens import measure
from threadline.tokens import result_tokens

PNG = tl.file_part(b"\x89PNG", "image/png")
PDF = tl.file_part("https://example.com/a.pdf", "application/pdf")


class TestEstimate:
    def test_numbers_are_the_documented_ones(self) -> None:
        assert (MESSAGE_TOKENS, FILE_TOKENS) == (4, 256)

    def test_an_empty_text_costs_the_message_overhead(self) -> None:
        assert estimate_tokens(tl.user_message("")) == 4

    @pytest.mark.parametrize(("text", "expected"), [("a", 5), ("abcd", 5), ("abcde", 6)])
    def test_text_rounds_up_per_four_characters(self, text: str, expected: int) -> None:
        assert estimate_tokens(tl.user_message(text)) == expected

    def test_characters_are_summed_over_parts_then_rounded_once(self) -> None:
        # 3 + 3 characters: one ceil over 6 (2 tokens), not ceil(3/4) twice (2 tokens too) ...
        assert estimate_tokens(tl.user_message("abc", "abc")) == 4 + 2
        # ... and 1 + 1 + 1 + 1: one token, where per-part rounding would say four.
        assert estimate_tokens(tl.user_message("a", "b", "c", "d")) == 4 + 1

    def test_every_counted_kind_of_content(self) -> None:
        message = tl.assistant_message(
            tl.reasoning_part("think", signature="sig" * 50),
            "hello",
            tl.tool_call_part("c1", "get_weather", {"city": "Zürich"}),
        )
        chars = len("think") + len("hello") + len('{"city":"Zürich"}')
        assert content_chars(message) == chars
        assert estimate_tokens(message) == 4 + math.ceil(chars / 4)

    def test_raw_arguments_count_as_their_text(self) -> None:
        call = tl.ToolCallPart(id="c", name="f", arguments={}, raw_arguments="{not json")
        message = tl.assistant_message(call)
        assert content_chars(message) == len("{not json")

    def test_empty_arguments_count_as_two_braces(self) -> None:
        assert content_chars(tl.assistant_message(tl.tool_call_part("c", "f", {}))) == 2

    def test_files_cost_256_each_also_inside_tool_results(self) -> None:
        assert estimate_tokens(tl.user_message("abcd", PNG, PDF)) == 4 + 1 + 2 * 256
        result = tl.tool_result_part("c", (tl.text_part("abcdefgh"), PNG))
        assert estimate_tokens(tl.tool_message(result)) == 4 + 2 + 256
        assert measure(tl.tool_message(result)) == (8, 1)

    def test_hooks_provider_tools_ids_names_and_metadata_count_zero(self) -> None:
        message = tl.assistant_message(
            tl.hook_part("approval", {"pending": "x" * 400}),
            tl.ProviderToolCallPart(
                id="s1", name="web_search", input={"q": "x" * 400}, provider="openai"
            ),
            id="msg_" + "x" * 400,
            metadata={"note": "y" * 400},
        )
        assert estimate_tokens(message) == 4

    def test_result_tokens_has_no_message_overhead(self) -> None:
        assert result_tokens(tl.tool_result_part("c", "x" * 9)) == 3
        assert result_tokens(tl.tool_result_part("c", (tl.text_part("abc"), PNG))) == 1 + 256

    def test_estimate_is_a_token_counter(self) -> None:
        counter: TokenCounter = estimate_tokens
        assert counter(tl.user_message("abcd")) == 5


class TestCheckedCounter:
    def test_default_is_the_estimator(self) -> None:
        assert checked_counter(None) is estimate_tokens

    def test_a_custom_counter_is_called(self) -> None:
        count = checked_counter(lambda message: len(message.text.split()))
        assert count(tl.user_message("three little words")) == 3

    @pytest.mark.parametrize(
        ("value", "error"),
        [(1.5, TypeError), (True, TypeError), ("3", TypeError), (-1, ValueError)],
    )
    def test_a_bad_count_names_the_counter(self, value: Any, error: type[Exception]) -> None:
        def bad_counter(message: tl.Message) -> Any:
            return value

        count = checked_counter(bad_counter)
        with pytest.raises(error, match="bad_counter"):
            count(tl.user_message("x"))

    def test_an_int_subclass_is_accepted_as_an_int(self) -> None:
        class Tokens(int):
            pass

        assert type(check_count(Tokens(3), "counter")) is int

    def test_not_callable(self) -> None:
        with pytest.raises(TypeError, match="callable"):
            checked_counter(3)  # type: ignore[arg-type]


class TestCustomCounterRecipe:
    """The recipe in docs/context.md: any callable Message -> int plugs in."""

    def test_history_total_tokens_uses_the_counter(self) -> None:
        def words(message: tl.Message) -> int:
            return 3 + len(message.text.split())

        history = History([tl.user_message("one two")], token_counter=words)
        history.append(tl.assistant_message("three four five"))
        assert history.total_tokens == (3 + 2) + (3 + 3)

    def test_a_window_trims_by_the_custom_count(self) -> None:
        history = History(max_tokens=10, token_counter=lambda message: 4)
        for index in range(5):
            history.append(tl.user_message(f"q{index}"))
        assert [m.text for m in history] == ["q3", "q4"]
        assert history.total_tokens == 8

    def test_trim_messages_uses_the_counter(self) -> None:
        messages = [tl.user_message(f"q{index}") for index in range(5)]
        trimmed = trim_messages(messages, max_tokens=3, counter=lambda message: 1)
        assert [m.text for m in trimmed.messages] == ["q2", "q3", "q4"]

    def test_an_object_with_call_works_too(self) -> None:
        class Counter:
            def __init__(self) -> None:
                self.calls = 0

            def __call__(self, message: tl.Message) -> int:
                self.calls += 1
                return 7

        counter = Counter()
        history = History(token_counter=counter)
        history.extend([tl.user_message("a"), tl.user_message("b")])
        assert counter.calls == 0  # without a window counting waits for a read
        assert history.total_tokens == 14
        assert history.total_tokens == 14
        assert counter.calls == 2  # each message counted once

    def test_a_bad_counter_fails_the_append_with_a_window_and_changes_nothing(self) -> None:
        history = History(max_tokens=100, token_counter=lambda message: -1)
        with pytest.raises(ValueError, match="negative"):
            history.append(tl.user_message("x"))
        assert len(history) == 0
        assert history.version == 0
