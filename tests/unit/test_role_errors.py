"""An invalid role names the roles and the fix, however the message is built (issue 21, item 7)."""

from __future__ import annotations

import pydantic
import pytest

import threadline as tl


def test_message_with_the_developer_role_says_to_use_system() -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        tl.Message(role="developer", parts=(tl.text_part("hi"),))  # type: ignore[arg-type]
    text = str(caught.value)
    assert "literal_error" not in text
    assert "errors.pydantic.dev" not in text
    assert "system, user, assistant, tool and internal" in text
    assert "role='system'" in text


@pytest.mark.parametrize("role", ["bot", "", 7])
def test_any_invalid_role_lists_the_roles(role: object) -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        tl.Message.model_validate({"role": role, "parts": [{"type": "text", "text": "x"}]})
    text = str(caught.value)
    assert "is not a threadline role" in text
    assert "errors.pydantic.dev" not in text


def test_the_json_schema_still_lists_the_roles() -> None:
    schema = tl.json_schema()
    assert "developer" not in str(schema)
    assert "internal" in str(schema)


def test_mappings_given_to_threadline_still_say_the_same() -> None:
    with pytest.raises(tl.ValidationError, match=r"messages\[0\]\.role: 'developer' is not"):
        tl.History().extend([{"role": "developer", "parts": [{"type": "text", "text": "x"}]}])
