"""Issue 39: ``encode`` trusts a `prepare_messages` result only while it is unchanged; whatever
a caller does to the list in between, the body (or the error) is that of a full pass."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.property._defects import REPAIRABLE
from tests.property._defects import Defective
from tests.property._defects import defective_conversations
from tests.support import examples
from threadline import IntegrityError
from threadline import Message
from threadline import encode
from threadline.codecs import codec_names
from threadline.integrity import prepare_messages

PROVIDERS = codec_names()

# One mutation of the list: (kind, position, other position); positions are taken modulo the
# list's length when applied.
mutations = st.lists(
    st.tuples(
        st.sampled_from(["pop", "swap", "dup", "reverse", "insert_from_raw", "same"]),
        st.integers(0, 50),
        st.integers(0, 50),
    ),
    max_size=3,
)


def mutate(prepared: list[Message], raw: list[Message], steps: list[tuple[str, int, int]]) -> None:
    for kind, first, second in steps:
        if not prepared:
            return
        i, j = first % len(prepared), second % len(prepared)
        if kind == "pop":
            prepared.pop(i)
        elif kind == "swap":
            prepared[i], prepared[j] = prepared[j], prepared[i]
        elif kind == "dup":
            prepared.insert(j, prepared[i])
        elif kind == "reverse":
            prepared.reverse()
        elif kind == "insert_from_raw" and raw:
            prepared.insert(i, raw[second % len(raw)])
        else:  # the same object put back where it was
            prepared[i] = prepared[i]


def outcome(messages: list[Message], provider: str, integrity: str) -> str:
    try:
        body = encode(messages, provider=provider, integrity=integrity)  # type: ignore[arg-type]
    except IntegrityError as error:
        return f"IntegrityError {[issue.code for issue in error.issues]}"
    return json.dumps(body, default=repr)  # Bedrock bodies hold bytes


@settings(max_examples=examples(100))
@given(
    defective_conversations(REPAIRABLE, min_defects=0),
    mutations,
    st.sampled_from(PROVIDERS),
    st.sampled_from(["auto", "strict"]),
)
def test_encode_of_a_prepared_list_is_encode_of_its_plain_copy(
    case: Defective, steps: list[tuple[str, int, int]], provider: str, integrity: Any
) -> None:
    prepared = prepare_messages(case.messages)
    mutate(prepared, case.messages, steps)
    plain = list(prepared)  # a plain list: always the full pass
    assert outcome(prepared, provider, integrity) == outcome(plain, provider, integrity)
