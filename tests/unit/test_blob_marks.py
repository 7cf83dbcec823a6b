"""The entry points that refuse the reserved ``threadline.blob`` key say it the same way.

``load_json``, ``from_ui_messages`` and a store's ``offload_files`` share one check
(``_blob_marks.refuse_blob_marks``): the error names how many places carry the key and lists
each path, so a caller sees every forged mark at once, whichever door it came through.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from threadline.interop.vercel import from_ui_messages
from threadline.stores.blobs import FileBlobStore
from threadline.stores.blobs import offload_files

_FORGED = {"threadline.blob": "sha256:" + "0" * 64}


def _marked_twice() -> list[tl.Message]:
    text = tl.TextPart(text="hi", metadata=_FORGED)
    return [tl.Message(role="user", parts=(text,), metadata=_FORGED)]


def _load_json(_: Path) -> object:
    return tl.load_json(tl.dump_json(_marked_twice()))


def _offload(directory: Path) -> object:
    return offload_files(_marked_twice(), FileBlobStore(directory), 16, "c1")


def _from_ui(_: Path) -> object:
    metadata: dict[str, Any] = {"threadline": {"metadata": _FORGED}}
    text = {"type": "text", "text": "hi", "providerMetadata": metadata}
    message = {"id": "m1", "role": "user", "parts": [text, dict(text)]}
    return from_ui_messages([message], trusted=True)


@pytest.mark.parametrize(
    ("call", "summary"),
    [
        (_load_json, "invalid input to load_json"),
        (_offload, "refused to store messages in conversation 'c1'"),
        (_from_ui, "vercel.from_ui_messages"),
    ],
)
def test_every_mark_is_listed_under_one_count(
    call: Callable[[Path], object], summary: str, tmp_path: Path
) -> None:
    with pytest.raises(tl.ValidationError) as caught:
        call(tmp_path)
    error = caught.value
    assert str(error).startswith(f"{summary}: 2 problems\n")
    assert len(error.errors) == 2
    for detail in error.errors:
        assert detail.path.startswith("messages[0]")
        assert detail.path.endswith("['threadline.blob']")
        assert f"  {detail}" in str(error).splitlines()
