"""Defects fuzzing found and that are not fixed yet.

Each entry says how to recognise the defect's exception and names the ``xfail(strict=True)``
test in ``tests/fuzz`` that reproduces it. The hypothesis fuzz tests and the atheris harnesses
let a known defect pass so that they keep finding *new* ones (``run.py --strict`` reports them
too); the reproducer keeps the defect visible. When a fix lands, the reproducer passes, strict
xfail fails the suite, and both the marker and the entry here are removed.
"""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass

import pydantic


@dataclass(frozen=True)
class Defect:
    kind: type[BaseException]
    message: str
    """A regular expression the exception's text matches."""
    where: str
    """A regular expression the path of a file in its traceback matches."""
    reproducer: str
    """The xfail test that reproduces it."""

    def matches(self, error: BaseException) -> bool:
        if not isinstance(error, self.kind) or not re.search(self.message, str(error)):
            return False
        files = (frame.filename for frame in traceback.extract_tb(error.__traceback__))
        return any(re.search(self.where, file.replace("\\", "/")) for file in files)


CODEC_DEFECTS = (
    Defect(
        pydantic.ValidationError,
        r"not a JSON value|not a media type",
        r"threadline/codecs/",
        "tests/fuzz/test_fuzz_codecs.py::test_decode_translates_invalid_values_to_threadline_errors",
    ),
    Defect(
        TypeError,
        r"is not JSON serializable",
        r"threadline/codecs/",
        "tests/fuzz/test_fuzz_codecs.py::test_decode_of_values_json_cannot_write_is_a_threadline_error",
    ),
    Defect(
        TypeError,
        r"unsupported operand type|can only concatenate",
        r"threadline/codecs/gemini\.py",
        "tests/fuzz/test_fuzz_codecs.py::test_gemini_usage_that_is_not_a_number_is_a_codec_error",
    ),
    Defect(
        TypeError,
        r"unhashable type",
        r"threadline/codecs/gemini\.py",
        "tests/fuzz/test_fuzz_codecs.py::test_gemini_ref_that_is_not_a_string_is_a_codec_error",
    ),
)


def known(error: BaseException, defects: tuple[Defect, ...]) -> bool:
    """Whether ``error`` is one of ``defects``."""
    return any(defect.matches(error) for defect in defects)
