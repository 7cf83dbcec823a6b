"""The Redis stores' clients and arguments (private): which layout a store uses, the client it
builds, its description and how the driver's errors become `StoreError`.

Only `threadline.stores.redis` imports this module, after checking that the driver is
installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

import redis
import redis.asyncio
import redis.asyncio.cluster
import redis.asyncio.retry
import redis.cluster
import redis.retry
from redis.backoff import NoBackoff

from threadline.errors import StoreError

__all__ = [
    "ASYNC_CLIENT_OPTIONS",
    "CLIENT_OPTIONS",
    "check_arguments",
    "clustered",
    "describe",
    "failing",
    "raised_by_driver",
]

# A client this module builds never retries a command: retrying an EXEC whose reply was lost
# could store a batch twice (see the module docstring).
CLIENT_OPTIONS: dict[str, Any] = {"retry": redis.retry.Retry(NoBackoff(), 0)}
ASYNC_CLIENT_OPTIONS: dict[str, Any] = {"retry": redis.asyncio.retry.Retry(NoBackoff(), 0)}


def check_arguments(name: str, url: object, client: object, prefix: object) -> None:
    """Exactly one of ``url`` and ``client``, and a ``str`` prefix (so ``url`` is a ``str``
    whenever ``client`` is ``None``)."""
    if (url is None) == (client is None):
        raise ValueError(
            f"{name} takes a url or a client, not {'both' if url is not None else 'neither'}: "
            f"{name}('redis://127.0.0.1:6379/0') or {name}(client=your_redis_client)"
        )
    if url is not None and not isinstance(url, str):
        raise ValueError(f"{name}: url must be a str like 'redis://host:6379/0', not {url!r}")
    if not isinstance(prefix, str):
        raise ValueError(f"{name}: prefix must be a str like 'myapp:', not {prefix!r}")
    if prefix and not prefix.endswith(":"):
        raise ValueError(
            f"{name}: prefix {prefix!r} must end with ':' (like {prefix + ':'!r}), so that no "
            "key under one prefix is also a key under another"
        )


def clustered(name: str, client: object, cluster: object, prefix: str) -> bool:
    """Whether the store uses the cluster layout: a cluster client, or ``cluster=True`` with a
    URL. Raises ``ValueError`` for ``cluster`` that is no ``bool``, ``cluster=True`` with a
    single-server client, or a cluster prefix holding a hash tag's brace."""
    if not isinstance(cluster, bool):
        raise ValueError(f"{name}: cluster must be True or False, not {cluster!r}")
    cluster_client = isinstance(
        client, (redis.cluster.RedisCluster, redis.asyncio.cluster.RedisCluster)
    )
    if cluster and client is not None and not cluster_client:
        raise ValueError(
            f"{name}: cluster=True, but client is a single-server {type(client).__name__}: pass "
            f"a RedisCluster client (redis.cluster or redis.asyncio.cluster), or a url with "
            f"cluster=True"
        )
    clustered = cluster or cluster_client
    if clustered and ("{" in prefix or "}" in prefix):
        raise ValueError(
            f"{name}: prefix {prefix!r} holds a brace: on a Redis Cluster a brace in a key is a "
            "hash tag, which would put every key in one slot and break the store's own tags; "
            "choose a prefix without '{' and '}'"
        )
    return clustered


def describe(name: str, url: str | None, client: object, prefix: str, cluster: bool) -> str:
    """The store's repr: its URL (password hidden) or its client, its prefix, and
    ``cluster=True`` for a cluster store built from a URL."""
    if url is None:
        return f"{name}(client={client!r}, prefix={prefix!r})"
    flag = ", cluster=True" if cluster else ""
    return f"{name}({redacted(url)!r}, prefix={prefix!r}{flag})"


def redacted(url: str) -> str:
    """``url`` with any password replaced by ``***``: reprs end up in error messages and logs."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
    except ValueError:
        return "<unparsable url>"


# The driver's errors: a cluster client raises RedisClusterException (no RedisError) when, for
# example, a command's keys are in different slots or no node answers.
_DRIVER_ERRORS: tuple[type[Exception], ...] = (redis.RedisError, redis.RedisClusterException)


@contextmanager
def failing(action: str, single: bool, *errors: type[Exception]) -> Iterator[None]:
    """Raise the driver's errors (and ``errors``) as `StoreError`, saying what ``action`` was;
    for a single-server store (``single``) whose server answered as a cluster node (``MOVED``
    or ``CROSSSLOT``), saying how to use a cluster.

    Raises:
        threadline.StoreError: the block raised one of them.
    """
    try:
        yield
    except (*_DRIVER_ERRORS, *errors) as error:
        text = f"{action}: {type(error).__name__}: {error}"
        if single and str(error).startswith(("MOVED", "CROSSSLOT", "Keys in request")):
            text += (
                " (the server is a Redis Cluster node: pass cluster=True with the url, or a "
                "redis.cluster.RedisCluster client)"
            )
        raise StoreError(text) from error
    except AttributeError as error:
        # redis.asyncio's cluster client, when a node drops, disconnects the node's connections
        # while other tasks are still handshaking on them: the driver then fails inside its own
        # code with "'NoneType' object has no attribute 'writelines'" (redis 8.1). The command
        # was not sent whole, so this is a dropped connection like any other. An
        # AttributeError raised anywhere else is a bug, and goes up as it is.
        if not raised_by_driver(error):
            raise
        raise StoreError(f"{action}: connection lost: {type(error).__name__}: {error}") from error


def raised_by_driver(error: BaseException) -> bool:
    """Whether ``error`` was raised by a line of the ``redis`` package."""
    trace = error.__traceback__
    if trace is None:
        return False
    while trace.tb_next is not None:
        trace = trace.tb_next
    return Path(trace.tb_frame.f_code.co_filename).is_relative_to(_DRIVER_DIRECTORY)


_DRIVER_DIRECTORY = Path(redis.__file__).parent
