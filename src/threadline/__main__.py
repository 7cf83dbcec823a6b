"""``python -m threadline``: the same as the ``threadline`` command."""

from __future__ import annotations

from threadline.cli import main

raise SystemExit(main())
