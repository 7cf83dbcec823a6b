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


CODEC_DEFECTS: tuple[Defect, ...] = ()
"""The codecs' open defects: none (the last ones, fixed, are pinned by the tests at the end of
``tests/fuzz/test_fuzz_codecs.py``)."""


def known(error: BaseException, defects: tuple[Defect, ...]) -> bool:
    """Whether ``error`` is one of ``defects``."""
    return any(defect.matches(error) for defect in defects)
