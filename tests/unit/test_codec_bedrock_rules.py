"""Bedrock Converse: the live-API rules the SDK types do not check (wire-formats.md, section 9).

Document names are unique within a request and use only the characters Converse allows; a
``toolResult`` never has empty content. Each case also reads back.
"""

from __future__ import annotations

from typing import Any

import pytest

import threadline as tl
from threadline.codecs import bedrock


def pdf(filename: str | None, data: bytes = b"%PDF-1.4") -> tl.FilePart:
    return tl.FilePart(media_type="application/pdf", data=data, filename=filename)


def document_names(payload: dict[str, Any]) -> list[str]:
    names = []
    for message in payload["messages"]:
        for block in message["content"]:
            if "document" in block:
                names.append(block["document"]["name"])
            for inner in block.get("toolResult", {}).get("content", []):
                if "document" in inner:
                    names.append(inner["document"]["name"])
    return names


def test_two_files_of_one_name_get_two_document_names() -> None:
    history = [tl.user_message("Compare these.", pdf("report.pdf"), pdf("report.pdf", b"%PDF-2"))]
    assert document_names(bedrock.encode(history)) == ["report", "report (2)"]


def test_names_are_unique_across_the_request_and_tool_results() -> None:
    history = [
        tl.user_message("Read these.", pdf("notes.pdf"), pdf(None), pdf(None)),
        tl.assistant_message(tl.tool_call_part("c1", "fetch", {})),
        tl.tool_message(tl.tool_result_part("c1", [pdf("notes.pdf"), pdf("Notes.pdf")])),
        tl.user_message(pdf("report (2).pdf"), pdf("report.pdf"), pdf("report.pdf")),
    ]
    names = document_names(bedrock.encode(history))
    assert names == [
        "notes",
        "document",
        "document (2)",
        "notes (2)",
        "Notes (3)",
        "report (2)",
        "report",
        "report (3)",
    ]
    assert len({name.lower() for name in names}) == len(names)


def test_a_suffixed_name_stays_within_200_characters() -> None:
    long = "a" * 250 + ".pdf"
    names = document_names(bedrock.encode([tl.user_message("x", pdf(long), pdf(long))]))
    assert names == ["a" * 200, "a" * 196 + " (2)"]


def test_unique_names_read_back_as_the_declared_losses_say() -> None:
    history = [tl.user_message("Compare these.", pdf("report.pdf"), pdf("report.pdf", b"%PDF-2"))]
    decoded = bedrock.decode(bedrock.encode(history))
    expected = bedrock.normalize_for_round_trip(tl.prepare_messages(history))
    assert [m.parts for m in decoded] == [m.parts for m in expected]
    files = [part for part in decoded[0].parts if isinstance(part, tl.FilePart)]
    assert [(f.filename, f.data) for f in files] == [
        ("report.pdf", b"%PDF-1.4"),
        ("report (2).pdf", b"%PDF-2"),
    ]


@pytest.mark.parametrize("content", ["", " ", (), [""]])
@pytest.mark.parametrize("is_error", [False, True])
def test_an_empty_tool_result_holds_one_text_and_reads_back_empty(
    content: Any, is_error: bool
) -> None:
    history = [
        tl.user_message("Go."),
        tl.assistant_message(tl.tool_call_part("c1", "fetch", {})),
        tl.tool_message(tl.tool_result_part("c1", content, is_error=is_error)),
    ]
    result = bedrock.encode(history)["messages"][2]["content"][0]["toolResult"]
    assert result["content"] == [{"text": "[no content]"}]
    back = bedrock.decode(bedrock.encode(history))[2].parts[0]
    assert isinstance(back, tl.ToolResultPart)
    assert (back.content, back.is_error) == ("", is_error)


def test_a_result_whose_only_file_is_dropped_is_not_empty() -> None:
    audio = tl.FilePart(media_type="audio/wav", data=b"RIFF....WAVE")
    history = [
        tl.user_message("Go."),
        tl.assistant_message(tl.tool_call_part("c1", "fetch", {})),
        tl.tool_message(tl.tool_result_part("c1", [audio])),
    ]
    result = bedrock.encode(history, unsupported="drop")["messages"][2]["content"][0]
    assert result["toolResult"]["content"] == [{"text": "[no content]"}]
