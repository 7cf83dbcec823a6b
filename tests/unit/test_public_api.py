"""The public surface: ``__all__`` is exactly the public names, and importing stays light."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import subprocess
import sys
import types

import threadline
from threadline import errors

OPTIONAL = (
    "redis",
    "psycopg",
    "openai",
    "anthropic",
    "google.genai",
    "mistralai",
    "botocore",
    "pydantic_ai",
    "langchain_core",
    "agents",
    "mcp",
    "mcp_types",
    "opentelemetry",
    "threadline.interop",
)


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
    assert issubclass(threadline.LimitExceededError, threadline.ValidationError)
    assert issubclass(threadline.IntegrityError, ValueError)
    assert issubclass(threadline.UnknownProviderError, threadline.CodecError)
    assert issubclass(threadline.UnknownProviderError, LookupError)
    assert issubclass(threadline.UnsupportedContentError, threadline.CodecError)
    assert issubclass(threadline.UnsupportedContentError, ValueError)
    assert issubclass(threadline.SealError, threadline.ThreadlineError)
    assert issubclass(threadline.SealError, ValueError)
    assert issubclass(threadline.StoreRecoveryWarning, threadline.ThreadlineWarning)
    for name in errors.__all__:
        item = getattr(errors, name)
        if (
            isinstance(item, type)
            and issubclass(item, Exception)
            and item is not errors.ThreadlineError
            and item is not errors.ConformanceError
        ):
            assert issubclass(item, (errors.ThreadlineError, errors.ThreadlineWarning)), name


# Exceptions that never leave threadline, so they are no part of the tree users catch from.
NOT_RAISED_TO_CALLERS = {
    "threadline._cli.output.CliError",
    "threadline._running._Stop",
    "threadline.codecs._incremental._Refused",
}
"""``CliError`` is how the command line's parts report a one-line problem to ``cli.main``,
which turns it into a message and an exit status. ``_Stop`` carries a tool's
``KeyboardInterrupt`` (or ``SystemExit``...) out of ``run_tool_calls``' event loop, which then
raises the interrupt itself. ``_Refused`` tells ``History.encode``'s incremental encoder that a
segment cannot be encoded alone; it then encodes the whole history."""


def defined_exception_classes() -> dict[str, type[BaseException]]:
    """Every exception and warning class any module of threadline defines, by qualified name."""
    found: dict[str, type[BaseException]] = {}
    for module_info in pkgutil.walk_packages(threadline.__path__, "threadline."):
        if module_info.name == "threadline.__main__":  # runs the command line when imported
            continue
        module = importlib.import_module(module_info.name)
        for item in vars(module).values():
            if (
                isinstance(item, type)
                and issubclass(item, BaseException)
                and item.__module__ == module.__name__
            ):
                found[f"{item.__module__}.{item.__qualname__}"] = item
    return found


def drawn_tree(doc: str) -> dict[str, list[str]]:
    """The classes drawn in ``doc``'s literal blocks, each with the bases the drawing gives it:
    its parent in the tree, then any builtins named in parentheses."""
    drawn: dict[str, list[str]] = {}
    node = re.compile(r"(?P<name>[A-Z]\w*)(?: \((?P<builtins>\w+(?:, \w+)*)\))?(?: |$)")
    for block in re.findall(r"::\n\n((?:    .*\n|\n)+)", doc):
        parents: list[str] = []
        for line in block.splitlines():
            line = line[4:]
            if not line.strip():
                continue
            connector = line.find("── ")
            if connector == -1 and line[0] in " │":
                continue  # a description running on under its class
            depth = 0 if connector == -1 else connector // 4 + 1
            match = node.match(line[connector + 3 :] if connector != -1 else line)
            assert match, f"cannot read the drawn tree line {line!r}"
            name = match["name"]
            assert name not in drawn, f"{name} is drawn twice"
            del parents[depth:]
            drawn[name] = parents[-1:] + (match["builtins"] or "").split(", ") * bool(
                match["builtins"]
            )
            parents.append(name)
    return drawn


def test_drawn_error_tree_is_every_exception_threadline_defines() -> None:
    drawn = drawn_tree(errors.__doc__ or "")
    defined = defined_exception_classes()
    for qualified in NOT_RAISED_TO_CALLERS:
        assert defined.pop(qualified), f"{qualified} is gone: drop it from NOT_RAISED_TO_CALLERS"
    outside = sorted(name for name, item in defined.items() if item.__module__ != errors.__name__)
    assert not outside, f"define these in threadline.errors and re-export them: {outside}"
    real = {
        item.__name__: [base.__name__ for base in item.__bases__ if base is not Exception]
        for item in defined.values()
    }
    assert drawn == real, "the tree drawn in the errors docstring differs from the classes"
    assert errors.__all__ == sorted([*drawn, "ErrorDetail"])
    # Each is importable from ``threadline`` too, but the kits' error, which only tests meet.
    assert set(errors.__all__) - set(threadline.__all__) == {"ConformanceError"}


def test_drawn_tree_reader_sees_a_missing_or_misplaced_class() -> None:
    doc = errors.__doc__ or ""
    assert drawn_tree(doc)["LimitExceededError"] == ["ValidationError"]
    assert drawn_tree(doc)["UnknownProviderError"] == ["CodecError", "LookupError"]
    without = re.sub(r"\n.*── LimitExceededError.*", "", doc)
    assert "LimitExceededError" not in drawn_tree(without)
    moved = doc.replace("│   └── LimitExceededError", "├── LimitExceededError")
    assert drawn_tree(moved)["LimitExceededError"] == ["ThreadlineError"]


def test_import_threadline_imports_no_optional_dependency() -> None:
    code = (
        "import sys, json, threadline; "
        f"print(json.dumps([m for m in {list(OPTIONAL)!r} if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout) == []


def test_import_threadline_leaves_asyncio_to_async_code() -> None:
    # asyncio (with ssl, socket, subprocess) is ~25 ms of a cold start; a history imports it
    # when a coroutine hook, follow=True or a flush first needs it.
    code = "import sys, threadline; print('asyncio' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "False"


def test_version() -> None:
    assert isinstance(threadline.__version__, str)
