"""``_repr_html_`` for `Message` and `History`: what Jupyter and other notebooks show."""

from __future__ import annotations

import importlib

__all__ = ["HtmlRepr"]

_RENDERER = "threadline._view._page"


class HtmlRepr:
    """Gives a message or a history an HTML view in notebooks, drawn by the viewer's renderer.

    The renderer depends on the message types (it draws each part), so the types reach it by
    name, when a notebook first asks: an import statement here would make ``messages.py``
    import its own renderer, a cycle, and ``import threadline`` would load the viewer.
    """

    __slots__ = ()

    def _repr_html_(self) -> str:
        """This message or history as HTML with a scoped stylesheet (IPython's rich display)."""
        fragment: str = importlib.import_module(_RENDERER).fragment(self)
        return fragment
