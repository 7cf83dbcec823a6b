"""Unit tests for threadline.context.masking (ToolResultMasking) and read-time plugins."""

from __future__ import annotations

import copy
import gc
import pickle
from typing import Any

import pytest

import threadline as tl
from threadline.context import Plugin
from threadline.context import ToolDefinition
from threadline.context import ToolResultMasking
from threadline.context.masking import MASKED_KEY
from threadline.context.masking import RETRIEVE_TOOL_NAME
from threadline.history import History
from threadline.integrity import prepare_messages

PNG = tl.file_part(b"\x89PNG", "image/png")


def run(*tools: tuple[str, Any]) -> list[tl.Message]:
    """A user question, then one call and result per (tool name, result content)."""
    out = [tl.user_message("go", id="u")]
    for n, (name, content) in enumerate(tools):
        out.append(tl.assistant_message(tl.tool_call_part(f"c{n}", name, {"n": n}), id=f"a{n}"))
        out.append(tl.tool_message(tl.tool_result_part(f"c{n}", content), id=f"t{n}"))
    return out


def masked_ids(messages: list[tl.Message]) -> list[str]:
    return [p.call_id for m in messages for p in m.tool_results if p.metadata.get(MASKED_KEY)]


class TestMasking:
    def test_keeps_the_newest_results_and_masks_the_rest(self) -> None:
        messages = run(*[("read_file", f"contents {n}") for n in range(5)])
        shown = ToolResultMasking(keep_recent=2).apply(messages)
        assert masked_ids(shown) == ["c0", "c1", "c2"]
        assert shown[-1] is messages[-1]  # untouched messages are the same objects
        assert shown[0] is messages[0]

    def test_a_marker_names_the_call_and_keeps_the_pairing(self) -> None:
        messages = run(("read_file", "x" * 400), ("read_file", "y"))
        shown = ToolResultMasking(keep_recent=1).apply(messages)
        part = shown[2].parts[0]
        assert isinstance(part, tl.ToolResultPart)
        assert part.call_id == "c0"
        assert isinstance(part.content, str)
        assert "'c0'" in part.content
        assert "read_file" in part.content
        assert "100 tokens" in part.content
        assert RETRIEVE_TOOL_NAME in part.content
        assert part.metadata[MASKED_KEY] is True
        assert shown[2].id == messages[2].id
        prepare_messages(shown, "strict")

    def test_the_masked_copy_keeps_name_error_flag_and_metadata(self) -> None:
        result = tl.tool_result_part("c0", "boom", name="read_file", is_error=True)
        result = result.with_metadata(note="kept")
        messages = [*run(), tl.assistant_message(tl.tool_call_part("c0", "read_file", {}))]
        messages.append(tl.tool_message(result))
        part = ToolResultMasking(keep_recent=0).apply(messages)[-1].parts[0]
        assert isinstance(part, tl.ToolResultPart)
        assert (part.name, part.is_error, part.metadata["note"]) == ("read_file", True, "kept")

    def test_keep_recent_zero_masks_every_result(self) -> None:
        messages = run(("a", "1"), ("b", "2"))
        assert masked_ids(ToolResultMasking(keep_recent=0).apply(messages)) == ["c0", "c1"]

    def test_include_masks_only_those_tools(self) -> None:
        messages = run(("search", "s0"), ("read_file", "r0"), ("search", "s1"), ("read_file", "r1"))
        masking = ToolResultMasking(keep_recent=1, include=["read_file"])
        # read_file results only: the newest (c3) keeps its slot, c1 is masked; searches stay.
        assert masked_ids(masking.apply(messages)) == ["c1"]

    def test_excluded_results_do_not_use_a_slot(self) -> None:
        messages = run(("read_file", "r0"), ("read_file", "r1"), ("plan", "p"), ("plan", "q"))
        masking = ToolResultMasking(keep_recent=1, exclude={"plan"})
        assert masked_ids(masking.apply(messages)) == ["c0"]

    def test_a_single_name_is_one_tool_not_its_letters(self) -> None:
        messages = run(("ab", "1"), ("a", "2"), ("ab", "3"))
        assert masked_ids(ToolResultMasking(keep_recent=0, include="ab").apply(messages)) == [
            "c0",
            "c2",
        ]

    def test_small_results_are_never_masked_and_do_not_use_a_slot(self) -> None:
        messages = run(("f", "x" * 400), ("f", "ok"), ("f", "y" * 400), ("f", "ok"))
        masking = ToolResultMasking(keep_recent=1, min_tokens=50)
        assert masked_ids(masking.apply(messages)) == ["c0"]

    def test_files_in_results_count_toward_min_tokens(self) -> None:
        messages = run(("screenshot", (tl.text_part("here"), PNG)), ("f", "z"))
        masking = ToolResultMasking(keep_recent=0, min_tokens=200)
        assert masked_ids(masking.apply(messages)) == ["c0"]

    def test_the_tool_name_comes_from_the_call(self) -> None:
        messages = run(("read_file", "r"))
        # The result carries no name; the call does.
        assert messages[-1].tool_results[0].name is None
        masking = ToolResultMasking(keep_recent=0, include={"read_file"})
        assert masked_ids(masking.apply(messages)) == ["c0"]

    def test_the_input_is_never_changed(self) -> None:
        messages = run(("f", "1"), ("f", "2"))
        before = copy.deepcopy(messages)
        ToolResultMasking(keep_recent=0).apply(messages)
        assert messages == before

    @pytest.mark.parametrize(
        ("options", "error", "match"),
        [
            ({"include": ["a"], "exclude": ["b"]}, ValueError, "not both"),
            ({"keep_recent": -1}, ValueError, "keep_recent"),
            ({"min_tokens": -1}, ValueError, "min_tokens"),
            ({"keep_recent": 1.5}, TypeError, "keep_recent"),
            ({"include": [1]}, TypeError, "include"),
        ],
    )
    def test_bad_options(self, options: dict[str, Any], error: type[Exception], match: str) -> None:
        with pytest.raises(error, match=match):
            ToolResultMasking(**options)

    def test_repr_and_properties(self) -> None:
        masking = ToolResultMasking(keep_recent=3, exclude=["b", "a"], min_tokens=10)
        assert (
            repr(masking) == "ToolResultMasking(keep_recent=3, exclude=['a', 'b'], min_tokens=10)"
        )
        assert (masking.keep_recent, masking.include, masking.exclude, masking.min_tokens) == (
            3,
            None,
            frozenset({"a", "b"}),
            10,
        )

    def test_a_custom_marker(self) -> None:
        class Short(ToolResultMasking):
            def marker(self, call_id: str, name: str | None, tokens: int) -> str:
                return f"<hidden {call_id}>"

        shown = Short(keep_recent=0).apply(run(("f", "1")))
        assert shown[-1].parts[0].content == "<hidden c0>"  # type: ignore[union-attr]


class TestMaskingInAHistory:
    def test_only_the_model_view_is_masked(self) -> None:
        messages = run(*[("read_file", f"contents {n}") for n in range(4)])
        history = History(messages, plugins=[ToolResultMasking(keep_recent=1)])
        view = history.messages_for_model()
        assert masked_ids(view) == ["c0", "c1", "c2"]
        assert list(history) == messages
        assert history.get_tool_result("c0") == messages[2].parts[0]
        assert history.to_json() == tl.dump_json(messages)

    def test_retrieve_tool_returns_the_original(self) -> None:
        masking = ToolResultMasking(keep_recent=0)
        history = History(run(("read_file", "the whole file"), ("shot", ("caption", PNG))))
        history.use(masking)
        tool = masking.retrieve_tool
        assert isinstance(tool, ToolDefinition)
        assert tool.name == RETRIEVE_TOOL_NAME
        assert tool.parameters["required"] == ["call_id"]
        assert tool(call_id="c0") == "the whole file"
        assert tool.function is not None
        assert tool.function(call_id="c1") == "caption\n[1 file(s) not shown: image/png]"
        assert "No tool result" in tool(call_id="nope")
        with pytest.raises(TypeError, match="call_id"):
            tool(call_id=3)

    def test_retrieve_tool_parameters_are_a_json_schema(self) -> None:
        jsonschema = pytest.importorskip("jsonschema")
        schema = ToolResultMasking().retrieve_tool_for(History()).parameters
        jsonschema.Draft202012Validator.check_schema(schema)
        jsonschema.validate({"call_id": "c1"}, schema)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"id": "c1"}, schema)

    def test_retrieve_tool_needs_exactly_one_history(self) -> None:
        masking = ToolResultMasking()
        with pytest.raises(tl.PluginError, match="0 histories"):
            masking.retrieve_tool  # noqa: B018
        first = History(run(("f", "one"))).use(masking)
        second = first.copy()  # registers the plugin with the copy too
        with pytest.raises(tl.PluginError, match="retrieve_tool_for"):
            masking.retrieve_tool  # noqa: B018
        assert masking.retrieve_tool_for(second)(call_id="c0") == "one"
        del second
        gc.collect()
        assert masking.retrieve_tool(call_id="c0") == "one"  # histories are held weakly

    def test_pickling_a_history_with_masking(self) -> None:
        history = History(run(("f", "1"), ("f", "2")), plugins=[ToolResultMasking(keep_recent=1)])
        thawed = pickle.loads(pickle.dumps(history))
        assert masked_ids(thawed.messages_for_model()) == ["c0"]
        (masking,) = thawed.plugins
        assert isinstance(masking, ToolResultMasking)
        assert masking.retrieve_tool(call_id="c0") == "1"


# -- read-time plugins in general ---------------------------------------------------------------


class Upper(Plugin):
    def transform(self, history: History, messages: list[tl.Message]) -> list[tl.Message]:
        return [
            tl.user_message(m.text.upper(), id=m.id) if m.role == "user" else m for m in messages
        ]


class Exclaim(Plugin):
    def transform(self, history: History, messages: list[tl.Message]) -> list[tl.Message]:
        return [tl.user_message(m.text + "!", id=m.id) if m.role == "user" else m for m in messages]


class Broken(Plugin):
    def transform(self, history: History, messages: list[tl.Message]) -> list[tl.Message]:
        raise RuntimeError("broken transform")


class TestTransforms:
    def test_transforms_run_in_registration_order_before_prepare(self) -> None:
        history = History([tl.user_message("hi", id="u"), tl.internal_message("ui", id="i")])
        history.use(Upper()).use(Exclaim())
        view = history.messages_for_model()
        assert [m.text for m in view] == ["HI!"]  # internal dropped by prepare_messages
        history2 = History([tl.user_message("hi", id="u")], plugins=[Exclaim(), Upper()])
        assert history2.messages_for_model()[0].text == "HI!"
        assert history2.messages_for_model()[0].text == history2.messages_for_model()[0].text

    def test_a_failing_transform_is_skipped_and_reported(self) -> None:
        errors: list[tuple[Any, ...]] = []
        broken = Broken()
        history = History(
            [tl.user_message("hi")],
            plugins=[broken, Exclaim()],
            on_plugin_error=lambda *args: errors.append(args),
        )
        assert history.messages_for_model()[0].text == "hi!"
        ((error, plugin, hook),) = errors
        assert isinstance(error, RuntimeError)
        assert (plugin, hook) == (broken, "transform")

    def test_the_default_handler_logs(self, caplog: pytest.LogCaptureFixture) -> None:
        history = History([tl.user_message("hi")], plugins=[Broken()])
        with caplog.at_level("ERROR", logger="threadline"):
            assert history.messages_for_model()[0].text == "hi"
        assert "transform" in caplog.text
        assert "broken transform" in caplog.text

    def test_a_raising_error_handler_is_logged(self, caplog: pytest.LogCaptureFixture) -> None:
        def handler(*args: Any) -> None:
            raise ValueError("handler broke")

        history = History([tl.user_message("hi")], plugins=[Broken()], on_plugin_error=handler)
        with caplog.at_level("ERROR", logger="threadline"):
            history.messages_for_model()
        assert "on_plugin_error" in caplog.text

    def test_a_duck_typed_plugin_works(self) -> None:
        class OnlyTransform:
            def transform(self, history: History, messages: list[tl.Message]) -> list[tl.Message]:
                return messages[-1:]

        history = History([tl.user_message("a"), tl.user_message("b")])
        history.use(OnlyTransform())  # type: ignore[arg-type]
        assert [m.text for m in history.messages_for_model()] == ["b"]

    def test_default_hooks_are_not_called(self) -> None:
        history = History().use(Upper())
        assert history._plugins.after_append == ()
        assert history._plugins.reducers == ()
        assert len(history._plugins.transforms) == 1
