"""``threadline convert --text-files inline``: encode's ``text_files`` option."""

from __future__ import annotations

from pathlib import Path

import pytest

import threadline as tl
from threadline import cli


def test_convert_inlines_text_files_when_asked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "csv.json"
    csv = tl.file_part(b"a,b\n1,2\n", "text/csv", filename="t.csv")
    path.write_bytes(tl.dump_json([tl.user_message("Sum it.", csv)]))
    assert cli.main(["convert", str(path), "--to", "openai_chat"]) == 0
    assert "[text/csv omitted: not supported by openai]" in capsys.readouterr().out
    code = cli.main(["convert", str(path), "--to", "openai_chat", "--text-files", "inline"])
    out = capsys.readouterr().out
    assert code == 0
    assert '<file name=\\"t.csv\\" media_type=\\"text/csv\\">\\na,b\\n1,2\\n\\n</file>' in out
