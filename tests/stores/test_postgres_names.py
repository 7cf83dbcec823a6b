"""PostgresStore's table names are injective and fit in an identifier.

A store with ``table_prefix=p`` creates ``<p>conversations`` and ``<p>messages`` and their
primary-key indexes ``<name>_pkey``; tables and indexes share one namespace per schema, and
PostgreSQL cuts identifiers at 63 bytes (which would merge two prefixes' names).
"""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given

from tests.stores._names import table_prefixes
from tests.support import require_module

with contextlib.suppress(ImportError):  # each test reports it: skips, or fails when required
    from threadline.stores._postgres_sql import Queries
    from threadline.stores.postgres import schema_sql


@pytest.fixture(autouse=True)
def _driver() -> None:
    require_module("psycopg", 'pip install "threadline[postgres]"')


def relations_of(prefix: str) -> dict[str, tuple[str, str]]:
    """The relations a store with ``prefix`` creates, by name, and what each is."""
    tables = Queries(prefix).tables
    names = {table: (prefix, table) for table in tables}
    names.update({f"{table}_pkey": (prefix, f"{table} primary key") for table in tables})
    return names


@given(table_prefixes, table_prefixes)
def test_no_two_prefixes_share_a_relation_name(prefix1: str, prefix2: str) -> None:
    one, two = relations_of(prefix1), relations_of(prefix2)
    for name in one.keys() & two.keys():
        assert one[name] == two[name], f"{one[name]} and {two[name]} are both named {name!r}"


def test_every_name_fits_in_63_bytes() -> None:
    longest = "z" * 40
    schema_sql(longest)  # accepted
    for name in relations_of(longest):
        assert len(name.encode()) <= 63, name
    with pytest.raises(ValueError, match="1 to 40"):
        schema_sql(longest + "z")
