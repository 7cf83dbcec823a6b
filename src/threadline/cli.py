"""The ``threadline`` command line: look into, repair and convert stored conversations.

A conversation that broke in production is usually a file by the time someone looks at it: a
``History.to_json()`` dump, a [`JsonlStore`][] file, or the request body a
provider refused; or it is still in the application's store. Six commands work on such a file
(``-`` reads standard input) or on a stored conversation (``--store URL --conversation ID``
instead of FILE)::

    threadline check   FILE [--strict] [--json] [--pending CHOICE] [--from PROVIDER]
    threadline repair  FILE [-o OUT] [--pending CHOICE] [--from PROVIDER]
    threadline convert FILE --to PROVIDER [--from PROVIDER] [--system TEXT]
    threadline show    FILE [--full] [--color WHEN] [--from PROVIDER]
    threadline stats   FILE [--json] [--from PROVIDER]
    threadline view    FILE [-o PAGE] [--seal-key KEY --seal SEAL --seal-conversation ID]
    threadline list    --store URL [--limit N] [--after ID] [--json]

A store URL is ``sqlite:///PATH``, ``jsonl:///DIR``, ``redis://...`` / ``rediss://...``
(``?prefix=``, ``?cluster=true``), ``postgresql://...`` / ``postgres://...``
(``?table_prefix=``) or ``memory:`` (tests); see ``threadline._cli.stores``. The command line
reads stores and creates nothing in them; only ``repair --write-back`` writes, replacing the
conversation atomically, and only while it is still at the version that was read. ``list``
pages the ids, and prints the ``--after`` of the next page. ``stats`` adds the usage the
messages recorded (``metadata["usage"]``) by model beside its estimate. ``view`` writes one
self-contained HTML page (``threadline._view``).

Input is read as the neutral JSON envelope (or a bare list of messages), as JSON Lines the way
``JsonlStore`` writes them (one message object, or an array of messages, per line; a torn last
line is skipped with a warning, as the store does), or, with ``--from PROVIDER``, as a provider
payload read by [`threadline.decode`][].

Exit status: 0 success; 1 the history has integrity issues (``check``), or issues that stop
``repair`` or ``convert``; 2 the input cannot be read (a store that cannot be opened, a
conversation it does not hold, and argparse's usage errors). Errors are one line on standard
error, with a store URL's credentials shown as ``***``; ``--debug`` adds the traceback. The
command line uses the standard library only, so the command costs no dependency beyond
threadline's own (a Redis or PostgreSQL store needs its extra, as it does in code).

This module is the front: the parser, `main` and the dispatch to a command. The commands,
the reading of FILE and the rendering live in the private package ``threadline._cli`` (its
docstring draws the layers); the names callers used from here are still importable from here.

The file may be hostile, and what is printed from it goes to a terminal: every character a
terminal would act on instead of showing (C0 and C1 controls, DEL, the bidirectional overrides
and isolates) is printed escaped, as Python writes it (``\\x1b``, ``\\u202e``), in every output;
JSON output escapes them inside its strings (``\\u001b``), so it is still the same JSON. Only the
newlines and tabs of message text are kept as they are. A lone surrogate or an integer too long
to read is an input error.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable
from collections.abc import Sequence

# The parts live in threadline._cli; ``name as name`` re-exports what callers read from here.
from threadline._cli.commands import history_stats as history_stats
from threadline._cli.commands import jsonable as jsonable
from threadline._cli.commands import run_check
from threadline._cli.commands import run_convert
from threadline._cli.commands import run_list
from threadline._cli.commands import run_repair
from threadline._cli.commands import run_show
from threadline._cli.commands import run_stats
from threadline._cli.commands import run_view
from threadline._cli.output import EXIT_ISSUES as EXIT_ISSUES
from threadline._cli.output import EXIT_OK
from threadline._cli.output import EXIT_UNREADABLE
from threadline._cli.output import PROG
from threadline._cli.output import CliError as CliError
from threadline._cli.output import one_line
from threadline._cli.output import printable as printable
from threadline._cli.reading import Loaded as Loaded
from threadline._cli.reading import load_history as load_history
from threadline._cli.render import Style as Style
from threadline._cli.render import render_transcript as render_transcript
from threadline._cli.render import use_colour as use_colour
from threadline._cli.stores import FORMS
from threadline._cli.stores import add_store_options as add_store_options
from threadline._cli.stores import scrub
from threadline.codecs import codec_names

__all__ = ["EXIT_ISSUES", "EXIT_OK", "EXIT_UNREADABLE", "main"]

# ---------------------------------------------------------------------------------------------
# Entry point


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``threadline`` command line and return its exit status.

    Args:
        argv: the arguments after the program name; ``None`` reads ``sys.argv[1:]``.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.run
    try:
        return command(args)
    except CliError as error:
        return _fail(args, str(error), error.code)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # A reader such as `head` closed the pipe: nothing left to say to it.
        _silence_stdout()
        return EXIT_OK
    except Exception as error:  # a bug: still one line, the traceback with --debug
        return _fail(
            args,
            f"unexpected {type(error).__name__}: {one_line(error)} "
            "(run with --debug for the traceback, and please report it)",
            EXIT_UNREADABLE,
        )


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    url = getattr(args, "store", None)
    if getattr(args, "debug", False):
        trace = traceback.format_exc()
        # A driver's error text may hold the URL's password: scrubbed here too.
        print(trace if url is None else scrub(trace, url), end="", file=sys.stderr)
    if url is not None:
        message = scrub(message, url)
    print(f"{PROG}: error: {printable(message)}", file=sys.stderr)
    return code


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # stdout is not a real file (tests): nothing will flush into the closed pipe


# ---------------------------------------------------------------------------------------------
# The parser


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the examples in each epilog laid out as written."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for ``threadline`` and its commands."""
    from threadline import __version__

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Check, repair, convert and read stored LLM conversation histories.",
        epilog=_dedent(
            """
            FILE is a neutral JSON history (History.to_json, dump_json), a JsonlStore file, or,
            with --from PROVIDER, a provider request body; '-' reads standard input. Instead of
            FILE, --store URL --conversation ID reads a stored conversation.

            examples:
              threadline check conversation.jsonl
              threadline show history.json | less -R
              threadline convert claude-request.json --from anthropic --to openai_chat
              threadline list --store sqlite:///app.db
              threadline check --store sqlite:///app.db --conversation c1

            exit status: 0 ok, 1 integrity issues, 2 unreadable input or bad usage
            """
        ),
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true", help="print tracebacks with errors")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    common = _common_options()

    check = _add_command(
        commands,
        common,
        "check",
        run_check,
        help="report integrity issues (exit 1 if any)",
        description=(
            "Report the integrity issues of a stored history: tool calls without results, "
            "results without calls, duplicate ids, malformed arguments. Internal content "
            "(internal messages, hook parts) is normal in stored history and is stripped "
            "before every model call, so it counts only with --strict."
        ),
        epilog=_dedent(
            """
            examples:
              threadline check history.json
              threadline check --strict --json conversation.jsonl
              threadline check --from anthropic request-that-got-a-400.json

            exit status: 0 clean, 1 issues found, 2 unreadable input
            """
        ),
    )
    check.add_argument(
        "--strict",
        action="store_true",
        help="count every change a model call would make, internal content included",
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_pending(check)

    repair = _add_command(
        commands,
        common,
        "repair",
        run_repair,
        help="write the model-ready history and print what changed",
        description=(
            "Write the prepared history, what prepare_messages would send to a model (internal "
            "content dropped, interrupted tool calls answered with an error result, misplaced "
            "results moved, malformed arguments set to {}), and print the report of every "
            "change. With -o the history goes to OUT and the report to standard output; "
            "without it the history goes to standard output and the report to standard error."
        ),
        epilog=_dedent(
            """
            examples:
              threadline repair broken.json -o fixed.json
              threadline repair conversation.jsonl -o conversation.fixed.jsonl
              threadline repair - < broken.json > fixed.json
              threadline repair --store sqlite:///app.db --conversation c1 -o fixed.json
              threadline repair --store sqlite:///app.db --conversation c1 --write-back

            exit status: 0 written, 1 issues repair cannot fix (nothing written),
            2 unreadable input or unwritable output
            """
        ),
    )
    repair.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="where to write the history ('-' or absent: standard output); replaced atomically",
    )
    repair.add_argument(
        "--format",
        choices=("json", "jsonl"),
        help="neutral JSON envelope or JSON Lines (default: jsonl when OUT ends in .jsonl)",
    )
    repair.add_argument(
        "--rename-duplicate-ids",
        action="store_true",
        help="rename a reused tool-call id (and its result) when the pairing is unambiguous",
    )
    repair.add_argument(
        "--write-back",
        action="store_true",
        help="with --store: replace the stored conversation with the repaired history, "
        "atomically, only if nothing wrote to it since it was read (internal content is "
        "dropped from the store too)",
    )
    _add_pending(repair)

    convert = _add_command(
        commands,
        common,
        "convert",
        run_convert,
        help="print the history as a provider's request payload",
        description=(
            "Print the history as the history part of a provider request (threadline.encode), "
            "as JSON. Bedrock payloads hold file bytes as bytes (boto3's shape); in this JSON "
            "they are standard base64 text, which threadline.decode(..., provider='bedrock') "
            "and the Converse wire format accept."
        ),
        epilog=_dedent(
            f"""
            examples:
              threadline convert history.json --to anthropic --system "You are terse."
              threadline convert claude-request.json --from anthropic --to openai_responses

            providers: {", ".join(codec_names())}
            exit status: 0 converted, 1 issues the conversion cannot fix, 2 unreadable input
            """
        ),
    )
    convert.add_argument(
        "--to", required=True, choices=codec_names(), metavar="PROVIDER", help="the target format"
    )
    convert.add_argument("--system", metavar="TEXT", help="system text to put first")
    convert.add_argument(
        "--model",
        help="the target model (reasoning from others, or naming none, is not replayed; a "
        "--from payload's modelId / model names its reasoning's)",
    )
    convert.add_argument(
        "--reasoning",
        choices=("auto", "text", "drop"),
        default="auto",
        help="reasoning policy (default: auto)",
    )
    convert.add_argument(
        "--unsupported",
        choices=("placeholder", "drop", "raise"),
        default="placeholder",
        help="what to do with parts the format cannot carry (default: placeholder)",
    )
    convert.add_argument(
        "--text-files",
        choices=("unsupported", "inline"),
        default="unsupported",
        help="inline: send text files the format cannot carry (text/*, JSON, CSV) as their "
        "text (default: unsupported, as --unsupported says)",
    )

    show = _add_command(
        commands,
        common,
        "show",
        run_show,
        help="print a readable transcript",
        description=(
            "Print the conversation as a transcript: each message with its index, role and id; "
            "reasoning folded to one line; each tool call with its results indented under it. "
            "Coloured on a terminal (unless NO_COLOR is set), plain otherwise."
        ),
        epilog=_dedent(
            """
            examples:
              threadline show history.json
              threadline show --full --color always conversation.jsonl | less -R
            """
        ),
    )
    show.add_argument(
        "--full", action="store_true", help="unfold reasoning and print long results whole"
    )
    show.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the output (default: auto, on a terminal unless NO_COLOR is set)",
    )

    stats = _add_command(
        commands,
        common,
        "stats",
        run_stats,
        help="count messages, parts, estimated tokens and attachment bytes",
        description=(
            "Count messages by role, parts by type, estimated tokens (threadline's default "
            "estimate: 4 per message, one per 4 characters of content, 256 per file) and the "
            "files attached, by bytes or by URL."
        ),
        epilog=_dedent(
            """
            examples:
              threadline stats history.json
              threadline stats --json conversation.jsonl
            """
        ),
    )
    stats.add_argument("--json", action="store_true", help="print the numbers as JSON")

    view = _add_command(
        commands,
        common,
        "view",
        run_view,
        help="write the conversation as one self-contained HTML page",
        description=(
            "Write the conversation as one HTML page that needs nothing else and requests "
            "nothing: roles and text, reasoning folded, each tool call beside its results, "
            "images drawn from their bytes (a remote URL is shown, never fetched), files listed, "
            "usage per turn and in total, integrity issues highlighted where they are, internal "
            "messages marked. With a seal and its key, the page says whether the history is "
            "what was sealed."
        ),
        epilog=_dedent(
            """
            examples:
              threadline view history.json -o history.html
              threadline view conversation.jsonl > page.html
              threadline view history.json -o page.html --seal-key env:SEAL_KEY \\
                  --seal v1.default.14.tQ3... --seal-conversation conv-42
              threadline view --store sqlite:///app.db --conversation conv-42 -o page.html

            KEY: hex:..., base64:..., env:NAME (a variable holding hex:... or base64:...)
            or file:PATH (the key's raw bytes)
            exit status: 0 written, 1 the seal does not match (the page is written and says
            so), 2 unreadable input, unwritable output or bad seal options
            """
        ),
    )
    view.add_argument(
        "-o",
        "--output",
        metavar="PAGE",
        help="where to write the page ('-' or absent: standard output); replaced atomically",
    )
    view.add_argument("--seal-key", metavar="KEY", help="the key the seal was made with")
    view.add_argument("--seal", metavar="SEAL", help="the seal handed out with the history")
    view.add_argument(
        "--seal-conversation",
        metavar="ID",
        help="the conversation id the seal was made for (with --store: --conversation's)",
    )
    _add_list(commands)
    return parser


def _add_list(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    listing = commands.add_parser(
        "list",
        formatter_class=_Formatter,
        help="page the ids of a store's conversations",
        description=(
            "Print a page of the ids of the conversations in a store, in code point order, "
            "with each one's message count, version and last write (where the store keeps "
            "times), and the --after that reads the next page."
        ),
        epilog=_dedent(
            f"""
            examples:
              threadline list --store sqlite:///app.db
              threadline list --store redis://localhost:6379/0 --limit 20 --after c42
              threadline list --store jsonl:////var/lib/conversations --json

            store URLs: {FORMS}
            exit status: 0 listed, 2 the store cannot be read
            """
        ),
    )
    add_store_options(listing, conversation=False)
    listing.add_argument(
        "--limit",
        type=_page_size,
        default=100,
        metavar="N",
        help="at most N ids (1 to 10,000; default 100)",
    )
    listing.add_argument("--after", metavar="ID", help="start after this id (the last one seen)")
    listing.add_argument("--json", action="store_true", help="print the page as JSON")
    listing.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="print tracebacks"
    )
    listing.set_defaults(run=run_list)


def _page_size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 10_000:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to 10,000, got {text!r}")
    return value


def _add_pending(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pending",
        choices=("answer", "keep", "refuse"),
        default="answer",
        help=(
            "the newest assistant message's calls without a result: answer them as interrupted "
            "(a crash; the default), keep them (calls still in flight) or refuse the history"
        ),
    )


def _add_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
    name: str,
    run: Callable[[argparse.Namespace], int],
    *,
    help: str,
    description: str,
    epilog: str,
) -> argparse.ArgumentParser:
    """Add the command ``name``, run by ``run``, with the options every command takes."""
    command = commands.add_parser(
        name,
        parents=[common],
        formatter_class=_Formatter,
        help=help,
        description=description,
        epilog=epilog,
    )
    command.set_defaults(run=run)
    return command


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "file",
        metavar="FILE",
        nargs="?",
        help="the history to read; '-' for standard input (or --store URL --conversation ID)",
    )
    common.add_argument(
        "--from",
        dest="source",
        choices=codec_names(),
        metavar="PROVIDER",
        help=f"read FILE as a provider payload: {', '.join(codec_names())}",
    )
    add_store_options(common)
    # SUPPRESS: without it, this default would overwrite `threadline --debug COMMAND`.
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="print tracebacks"
    )
    return common


def _dedent(text: str) -> str:
    lines = text.strip("\n").splitlines()
    margin = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return "\n".join(line[margin:] for line in lines)
