"""The public surface: ``__all__`` is exactly the public names, and importing stays light."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import threadline
from threadline import errors

OPTIONAL = ("redis", "psycopg", "openai", "anthropic", "google.genai", "mistralai", "botocore")


def public_names(module: types.ModuleType) -> set[str]:
    names = {
        name
        for name in dir(module)
        if not name.startswith("_") and not isinstance(getattr(module, name), types.ModuleType)
    }
    return names | {"__version__"}


def test_all_is_sorted_and_exactly_the_public_names() -> None:
    assert threadline.__all__ == sorted(threadline.__all__)
    assert set(threadline.__all__) == public_names(threadline) | set(
        getattr(threadline, "_LAZY", {})
    )
    for name in threadline.__all__:
        assert getattr(threadline, name) is not None, name


def test_error_tree() -> None:
    assert issubclass(threadline.ValidationError, ValueError)
    assert issubclass(threadline.UnsupportedVersionError, threadline.ValidationError)
    assert issubclass(threadline.IntegrityError, ValueError)
    assert issubclass(threadline.UnknownProviderError, threadline.CodecError)
    assert issubclass(threadline.UnknownProviderError, LookupError)
    assert issubclass(threadline.UnsupportedContentError, threadline.CodecError)
    assert issubclass(threadline.UnsupportedContentError, ValueError)
    assert issubclass(threadline.StoreRecoveryWarning, threadline.ThreadlineWarning)
    for name in errors.__all__:
        item = getattr(errors, name)
        if (
            isinstance(item, type)
            and issubclass(item, Exception)
            and item is not errors.ThreadlineError
        ):
            assert issubclass(item, (errors.ThreadlineError, errors.ThreadlineWarning)), name
    for name in errors.__all__:
        if name not in ("ErrorDetail",):
            assert name in (errors.__doc__ or ""), f"{name} missing from the drawn tree"


def test_import_threadline_imports_no_optional_dependency() -> None:
    code = (
        "import sys, json, threadline; "
        f"print(json.dumps([m for m in {list(OPTIONAL)!r} if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout) == []


def test_version() -> None:
    assert isinstance(threadline.__version__, str)
