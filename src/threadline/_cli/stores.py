"""Reading from a store: ``--store URL --conversation ID`` instead of FILE, and ``list``.

A store URL names the store and how to reach it::

    sqlite:///PATH          an SQLiteStore file: PATH is what follows the third slash, so
                            sqlite:///app.db is relative, sqlite:////var/lib/app.db absolute
    jsonl:///DIR            a JsonlStore directory, by the same rule
    memory:                 this process's MemoryStore (for tests: a new process finds it empty)
    redis://HOST[:PORT][/DB] and rediss:// (TLS): a RedisStore; query options ``prefix=``
                            (default ``threadline:``) and ``cluster=true`` (a Redis Cluster node);
                            the rest of the query goes to redis-py
    postgresql://... and postgres://: a PostgresStore; query option ``table_prefix=`` (default
                            ``threadline_``); the rest of the query goes to libpq

The command line only reads what exists: it creates no SQLite file, no directory and no tables
(an SQLite database is looked into read-only for threadline's tables before `SQLiteStore`,
which would create them, opens it).
A URL's user, password and password-like query values are never printed: errors show the URL
with them as ``***``, and the password is scrubbed from a driver's error text too.
"""

from __future__ import annotations

import argparse
import contextlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Final
from urllib.parse import parse_qsl
from urllib.parse import unquote
from urllib.parse import urlencode
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

from threadline._cli.output import CliError
from threadline._cli.output import one_line
from threadline._cli.output import quoted
from threadline._cli.reading import Loaded
from threadline._cli.reading import load_history
from threadline.errors import StoreError
from threadline.errors import ValidationError
from threadline.stores import ConversationInfo
from threadline.stores import MemoryStore
from threadline.stores import Store
from threadline.stores import validate_conversation_id

__all__ = [
    "FORMS",
    "add_store_options",
    "id_problem",
    "info_json",
    "load_source",
    "load_stored",
    "open_store",
    "redacted",
    "scrub",
    "store_errors",
]

FORMS: Final = (
    "sqlite:///PATH, jsonl:///DIR, memory:, redis://HOST[:PORT][/DB], rediss://..., "
    "postgresql://USER@HOST/DB"
)
"""The store URLs the command line opens, for help and errors."""

_MEMORY = MemoryStore()
"""What ``memory:`` opens: one store per process, so a test can fill it (or put its own here)
before a command."""

_SECRET_KEY: Final = re.compile(r"pass|secret|token|key|auth", re.IGNORECASE)


# ---------------------------------------------------------------------------------------------
# The options


def add_store_options(parser: argparse.ArgumentParser, *, conversation: bool = True) -> None:
    """Add ``--store URL`` (and, unless ``conversation`` is false, ``--conversation ID``) to a
    command, as one group; `load_source` reads them with FILE.

    Args:
        parser: the command's parser (or a parent parser commands share).
        conversation: add ``--conversation ID`` too (``list`` reads a whole store).
    """
    group = parser.add_argument_group("reading from a store")
    group.add_argument(
        "--store",
        metavar="URL",
        help=f"read from this store{' instead of FILE' if conversation else ''}: {FORMS}",
    )
    if conversation:
        group.add_argument(
            "--conversation",
            metavar="ID",
            help="the conversation to read from --store (threadline list --store URL shows them)",
        )


def load_source(args: argparse.Namespace) -> Loaded:
    """The history a command reads: FILE (``args.file``, read as `load_history` does) or the
    conversation ``--conversation`` of the store ``--store``.

    Args:
        args: the parsed command line, with ``file``, ``source`` (``--from``), ``store`` and
            ``conversation``.

    Raises:
        CliError: neither or both of FILE and ``--store`` were given, one of ``--store`` and
            ``--conversation`` without the other, ``--from`` with ``--store``, or the history
            cannot be read.
    """
    file: str | None = getattr(args, "file", None)
    url: str | None = getattr(args, "store", None)
    conversation: str | None = getattr(args, "conversation", None)
    if file is not None and url is not None:
        raise CliError(
            "give FILE or --store URL --conversation ID, not both: drop FILE to read the store"
        )
    if conversation is not None and url is None:
        raise CliError("--conversation needs --store URL, the store the conversation is in")
    if url is None:
        if file is None:
            raise CliError(
                "no input: give FILE ('-' for standard input) or --store URL --conversation ID"
            )
        return load_history(file, getattr(args, "source", None))
    if conversation is None:
        raise CliError(
            "--store needs --conversation ID (the ids: threadline list --store "
            f"{quoted(redacted(url))})"
        )
    if getattr(args, "source", None) is not None:
        raise CliError(
            "--from reads a provider payload from FILE; a store holds threadline messages: "
            "drop --from"
        )
    return load_stored(url, conversation)


def load_stored(url: str, conversation: str) -> Loaded:
    """The messages of ``conversation`` in the store at ``url``.

    Raises:
        CliError: the URL cannot be opened, the id is invalid, or the store holds no such
            conversation.
    """
    cid = _conversation_id(conversation)
    with open_store(url) as store, store_errors(url):
        info = store.conversation_info(cid)
        if info is None:
            raise CliError(
                f"no conversation {cid} in {redacted(url)}: "
                f"threadline list --store {quoted(redacted(url))} shows the ids it holds"
            )
        # The messages and their version in one consistent read: the version repair
        # --write-back expects is the version of exactly what it repaired.
        read = store.load_after(cid, 0)
    return Loaded(
        f"{cid} in {redacted(url)}",
        read.messages,
        store=redacted(url),
        conversation=cid,
        version=read.version,
    )


def _conversation_id(value: str) -> str:
    try:
        return validate_conversation_id(value)
    except ValidationError as error:
        raise CliError(f"--conversation: {id_problem(error)}") from error


def id_problem(error: ValidationError) -> str:
    """What is wrong with a conversation id, once (the id shortened, as the store shows it)."""
    return error.errors[0].message if error.errors else one_line(error)


# ---------------------------------------------------------------------------------------------
# Opening a store


@dataclass(frozen=True)
class _Options:
    """The query options threadline reads from a URL, and the URL without them."""

    url: str
    options: dict[str, str]


@contextmanager
def open_store(url: str) -> Iterator[Store]:
    """The store ``url`` names, closed when the block ends.

    Args:
        url: a store URL (see the module docstring).

    Raises:
        CliError: the URL is not a store URL, names a file or directory that does not exist,
            or needs a driver that is not installed.
    """
    store = _open(url)
    try:
        yield store
    finally:
        close = getattr(store, "close", None)
        if close is not None and store is not _MEMORY:
            with store_errors(url):
                close()


def _open(url: str) -> Store:
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme in ("sqlite", "jsonl"):
        return _open_local(url, scheme)
    if scheme == "memory":
        if url != "memory:":
            raise CliError(f"--store {redacted(url)}: write memory: alone (no path or options)")
        return _MEMORY
    if scheme in ("redis", "rediss"):
        return _open_redis(url)
    if scheme in ("postgresql", "postgres"):
        return _open_postgres(url)
    shown = redacted(url)
    if not scheme or not re.fullmatch(r"[a-z][a-z0-9+.-]*", scheme):
        hint = f"; for an SQLite file write sqlite:///{shown}" if shown.endswith(".db") else ""
        raise CliError(f"--store {shown}: not a store URL (use {FORMS}){hint}")
    raise CliError(f"--store {shown}: unknown store scheme {scheme!r}; use {FORMS}")


def _open_local(url: str, scheme: str) -> Store:
    shown = redacted(url)
    prefix = f"{scheme}:///"
    parts = urlsplit(url)
    if not url.startswith(prefix) or len(url) == len(prefix):
        what = "PATH" if scheme == "sqlite" else "DIR"
        raise CliError(f"--store {shown}: write {scheme}:///{what} (three slashes, then the path)")
    if parts.query or parts.fragment:
        raise CliError(f"--store {shown}: a {scheme} URL takes no '?' or '#' options")
    path = Path(unquote(url[len(prefix) :]))
    where = "" if path.is_absolute() else " (relative: an absolute path takes four slashes)"
    with store_errors(url):
        if scheme == "sqlite":
            if not path.is_file():
                raise CliError(f"--store {shown}: no SQLite file at {path}{where}")
            _check_sqlite_tables(path, shown)
            from threadline.stores import SQLiteStore

            return SQLiteStore(path)
        if not path.is_dir():
            raise CliError(f"--store {shown}: no JsonlStore directory at {path}{where}")
        from threadline.stores import JsonlStore

        return JsonlStore(path)


def _check_sqlite_tables(path: Path, shown: str) -> None:
    """Refuse a database without threadline's tables, which `SQLiteStore` would create."""
    import sqlite3

    try:
        with contextlib.closing(
            sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        ) as connection:
            found = connection.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'threadline_messages'"
            ).fetchone()
    except sqlite3.Error as error:
        raise CliError(f"--store {shown}: {path} is not an SQLite database ({error})") from error
    if found is None:
        raise CliError(f"--store {shown}: {path} holds no threadline store (no threadline_ tables)")


def _open_redis(url: str) -> Store:
    parsed = _split_options(url, ("prefix", "cluster"))
    cluster = parsed.options.get("cluster", "false").lower()
    if cluster not in ("true", "false", "1", "0"):
        raise CliError(f"--store {redacted(url)}: cluster= takes true or false")
    try:
        from threadline.stores.redis import DEFAULT_PREFIX
        from threadline.stores.redis import RedisStore
    except ImportError as error:
        raise _missing_driver(url, "redis", error) from error
    _check_redis_query(parsed.url)
    with store_errors(url):
        return RedisStore(
            parsed.url,
            prefix=parsed.options.get("prefix", DEFAULT_PREFIX),
            cluster=cluster in ("true", "1"),
        )


def _check_redis_query(url: str) -> None:
    """Refuse a query option redis-py would only fail on at the first command (a TypeError)."""
    import inspect

    import redis.connection

    known = set(getattr(redis.connection, "URL_QUERY_ARGUMENT_PARSERS", ()))
    for kind in (redis.connection.Connection, redis.connection.SSLConnection):
        for cls in kind.__mro__:
            if "__init__" in vars(cls):
                known |= set(inspect.signature(cls.__init__).parameters)  # type: ignore[misc]
    for key, _ in parse_qsl(urlsplit(url).query, keep_blank_values=True):
        if key not in known:
            raise CliError(
                f"--store {redacted(url)}: unknown option {key}=; threadline reads prefix= and "
                "cluster=, redis-py the connection's options (socket_timeout=, ...)"
            )


def _open_postgres(url: str) -> Store:
    parsed = _split_options(url, ("table_prefix",))
    try:
        from threadline.stores.postgres import DEFAULT_TABLE_PREFIX
        from threadline.stores.postgres import PostgresStore
    except ImportError as error:
        raise _missing_driver(url, "postgres", error) from error
    with store_errors(url):
        # Reading only: a store without its tables is reported, never created.
        return PostgresStore(
            parsed.url,
            table_prefix=parsed.options.get("table_prefix", DEFAULT_TABLE_PREFIX),
            auto_create_schema=False,
        )


def _missing_driver(url: str, extra: str, error: ImportError) -> CliError:
    package = error.name or extra
    return CliError(
        f"--store {redacted(url)}: the {package} package is not installed: "
        f'pip install "threadline[{extra}]"'
    )


def _split_options(url: str, names: tuple[str, ...]) -> _Options:
    """``url`` without the query options ``names``, and their values; each at most once."""
    parts = urlsplit(url)
    options: dict[str, str] = {}
    rest: list[tuple[str, str]] = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key not in names:
            rest.append((key, value))
        elif key in options:
            raise CliError(f"--store {redacted(url)}: the option {key}= is given twice")
        else:
            options[key] = value
    return _Options(urlunsplit(parts._replace(query=urlencode(rest))), options)


# ---------------------------------------------------------------------------------------------
# Errors without credentials


def redacted(url: str) -> str:
    """``url`` with its user, password and password-like query values shown as ``***``.

    Args:
        url: a store URL, as given.
    """
    try:
        parts = urlsplit(url)
    except ValueError:  # a malformed netloc (an unclosed '['): show the scheme only
        return url.split(":", 1)[0] + ":***"
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if "@" not in parts.netloc and not any(_SECRET_KEY.search(key) for key, _ in pairs):
        return url  # nothing to hide: as written (urlunsplit would drop sqlite:///'s slashes)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = "&".join(
        f"{key}=***" if _SECRET_KEY.search(key) else f"{key}={value}" for key, value in pairs
    )
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _secrets(url: str) -> list[str]:
    """What of ``url`` must never be printed: its userinfo and password-like query values,
    as written and percent-decoded."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rsplit("@", 1)[0]
        found += [userinfo, *userinfo.split(":", 1)[1:]]
    found += [value for key, value in parse_qsl(parts.query) if _SECRET_KEY.search(key)]
    every = {text for secret in found for text in (secret, unquote(secret)) if text}
    return sorted(every, key=len, reverse=True)


@contextmanager
def store_errors(url: str) -> Iterator[None]:
    """Turn what a store raises into one line naming the store, credentials scrubbed.

    Raises:
        CliError: the store raised `StoreError`, `ValidationError` (a ``ValueError``) or
            ``OSError``.
    """
    try:
        yield
    except CliError as error:
        raise CliError(scrub(str(error), url), error.code) from None
    except (StoreError, ValueError, OSError) as error:
        raise CliError(f"{redacted(url)}: {scrub(one_line(error), url)}") from error


def scrub(text: str, url: str) -> str:
    """``text`` with the URL and every secret of it replaced (`redacted`, ``***``)."""
    text = text.replace(url, redacted(url))
    for secret in _secrets(url):
        text = text.replace(secret, "***")
    user = _user(url)
    if user:  # a store's repr shows the user name: as a whole word, so no other word breaks
        text = re.sub(rf"(?<![\w%]){re.escape(user)}(?![\w%])", "***", text)
    return text


def _user(url: str) -> str:
    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        return ""
    return unquote(netloc.rsplit("@", 1)[0].split(":", 1)[0]) if "@" in netloc else ""


def info_json(info: ConversationInfo) -> dict[str, Any]:
    """A `ConversationInfo` as JSON values."""
    return {
        "id": info.id,
        "messages": info.messages,
        "version": info.version,
        "parent": None
        if info.parent is None
        else {"conversation_id": info.parent[0], "at": info.parent[1]},
        "created_at": None if info.created_at is None else info.created_at.isoformat(),
        "updated_at": None if info.updated_at is None else info.updated_at.isoformat(),
    }
