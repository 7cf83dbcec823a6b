"""What the adapters reading another party's data share: the limits they read within, and the
options that choose what `sanitize_untrusted` keeps, which mean nothing for trusted input."""

from __future__ import annotations

from collections.abc import Collection

from threadline.limits import Limits
from threadline.limits import resolve_limits

__all__ = ["reading_limits", "refuse_sanitize_options"]


def reading_limits(limits: Limits | None, *, trusted: bool) -> Limits:
    """``limits`` resolved; ``None`` means `Limits.untrusted()`, or `Limits()` when
    ``trusted``."""
    if limits is not None:
        return resolve_limits(limits)
    return Limits() if trusted else Limits.untrusted()


def refuse_sanitize_options(
    where: str, *, trusted: bool, keep_metadata: Collection[str], allow_private_urls: bool
) -> None:
    """Refuse ``keep_metadata`` / ``allow_private_urls`` with ``trusted=True``: they choose
    what sanitizing keeps, and trusted input is not sanitized, so they would do nothing.

    Raises:
        ValueError: either is given with ``trusted=True``, naming it and the fix.
    """
    if not trusted:
        return
    given = [
        name
        for name, value in (
            ("keep_metadata", keep_metadata),
            ("allow_private_urls", allow_private_urls),
        )
        if value
    ]
    if given:
        raise ValueError(
            f"{where}: {' and '.join(given)} choose what sanitize_untrusted keeps of untrusted "
            "input, and trusted=True reads the input as it is (everything kept): drop "
            f"{' and '.join(given)}, or pass trusted=False"
        )
