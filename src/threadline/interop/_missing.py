"""The one error an adapter raises when its framework is not installed."""

from __future__ import annotations

__all__ = ["missing"]


def missing(framework: str, module: str, extra: str, error: ImportError) -> ImportError:
    """An ``ImportError`` naming the package that is missing and the extra that installs it.

    Raise it ``from`` the original error at the top of an adapter module::

        try:
            import pydantic_ai
        except ImportError as error:
            raise missing("pydantic-ai", "pydantic_ai", "pydantic-ai", error) from error
    """
    return ImportError(
        f"threadline.interop needs {framework} for this adapter, and importing {module!r} "
        f'failed ({error}): pip install "threadline[{extra}]"',
        name=module,
    )
