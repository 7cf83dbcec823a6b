"""The rules judge follows the codec registry (issue 38 item 5).

Every format the registry lists has rules in ``_rules.RULES`` or an explicit entry in
``_rules.NO_RULES`` saying why it has none; a payload of a format in neither raises
``NoRulesError`` instead of passing unjudged.
"""

from __future__ import annotations

import pytest

from tests.conformance import _rules
from threadline.codecs import codec_names

CHAT = {"messages": [{"role": "user", "content": "Hi."}]}


def test_the_judged_formats_are_the_registered_ones() -> None:
    assert codec_names() == _rules.FORMATS


def unjudged(formats: tuple[str, ...]) -> list[str]:
    """The formats of ``formats`` with neither a rule nor a ``NO_RULES`` entry."""
    return [fmt for fmt in formats if not _rules.RULES.get(fmt) and fmt not in _rules.NO_RULES]


def test_every_registered_format_has_rules_or_a_no_rules_entry() -> None:
    missing = unjudged(codec_names())
    assert not missing, (
        f"the rules judge has no checker for the registered formats {missing}: add their rules "
        "to RULES in tests/conformance/_rules.py, or NO_RULES entries saying why they have none"
    )


def test_a_newly_registered_format_without_rules_is_named() -> None:
    assert unjudged((*codec_names(), "no_such_format")) == ["no_such_format"]


def test_rules_and_no_rules_name_registered_formats_once() -> None:
    registered = set(codec_names())
    assert set(_rules.RULES) <= registered, "RULES names a format the registry does not list"
    assert set(_rules.NO_RULES) <= registered, "NO_RULES names a format the registry does not list"
    both = sorted(set(_rules.RULES) & set(_rules.NO_RULES))
    assert not both, f"{both} have rules and a NO_RULES entry: keep one"
    for fmt, why in _rules.NO_RULES.items():
        assert why.strip(), f"NO_RULES[{fmt!r}] does not say why the format has no rules"


@pytest.mark.parametrize("fmt", ["no_such_format", "", "OPENAI_CHAT"])
def test_judging_a_format_without_a_checker_raises_naming_it(fmt: str) -> None:
    judged = _rules.JUDGED.copy()
    with pytest.raises(_rules.NoRulesError, match=f"no checker for the format {fmt!r}"):
        _rules.judge_rules(fmt, CHAT)
    with pytest.raises(_rules.NoRulesError, match="add its rules to RULES"):
        _rules.violations(fmt, CHAT)
    assert judged == _rules.JUDGED  # not counted as judged


def test_a_no_rules_format_is_judged_and_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_rules, "NO_RULES", {"no_such_format": "the test's format"})
    assert _rules.rules_for("no_such_format") == ()
    assert _rules.violations("no_such_format", CHAT) == []
    _rules.judge_rules("no_such_format", CHAT)
    assert _rules.JUDGED["no_such_format"] >= 1
    del _rules.JUDGED["no_such_format"]  # the run's report counts real formats only


def test_an_empty_rules_entry_is_no_checker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_rules, "RULES", {**_rules.RULES, "no_such_format": ()})
    with pytest.raises(_rules.NoRulesError, match="'no_such_format'"):
        _rules.judge_rules("no_such_format", CHAT)


def test_a_registered_format_is_judged_by_its_rules() -> None:
    for fmt in codec_names():
        assert _rules.rules_for(fmt) == tuple(_rules.RULES.get(fmt, ()))
