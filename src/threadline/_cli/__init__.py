"""The parts of the ``threadline`` command line; `threadline.cli` is its front.

Layers, each importing only those below it (and threadline's library modules)::

    threadline.cli        the parser, main and the dispatch to a command
    commands              check, repair, convert, show, stats, view, list: what each does
                          and prints (view through threadline._view's renderer)
    stores                --store URL --conversation ID: opening a store URL, reading FILE
                          or the stored conversation, errors with credentials redacted
    reading   render      reading FILE (JSON, JSON Lines, --from payloads);
                          the show transcript and its colours
    output                exit statuses, CliError, printing with terminal controls escaped

Nothing here imports `threadline.cli`.
"""
