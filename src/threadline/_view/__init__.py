"""The conversation viewer: one self-contained HTML page for a history.

Layers, each importing only those below it (and threadline's library modules)::

    _notebook   HtmlRepr: ``_repr_html_`` for Message and History; reaches ``_page`` by name
                when first called, so messages.py and history.py inherit it with no cycle
    _page       the page (``threadline view``) and the notebook fragments: header, summary,
                seal verdict, messages, each tool call beside its results
    _seal       the seal's verdict for a history, given the key
    _parts      one part as HTML (the dispatch ends in ``assert_never``)
    _escape     text and JSON as HTML: escaped, with controls, bidi overrides and lone
                surrogates shown as visible escapes; the stylesheet and its CSP hash

Everything in a history is hostile: every string goes through ``_escape`` and the only
attributes written are constant classes, ``m<index>`` ids and ``href="#m<index>"``; an image
is drawn only from bytes threadline re-encodes itself into a ``data:`` URL of a raster image
type, and a Content-Security-Policy allows nothing else, so the page makes no network request.

Nothing here is imported by ``import threadline``.
"""
