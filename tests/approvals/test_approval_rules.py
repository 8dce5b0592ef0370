"""Rule matching (issue 15 point 2): a rule never approves a call outside what it names.

Property tests generate paths with ``..``, ``.``, repeated slashes and symlink-like segments,
and calls whose other arguments carry the dangerous part."""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldfive.approvals import Matcher, Rule, RuleBook, RulesFileError, is_under, load_rules, save_rules
from goldfive.approvals.arguments import arguments_problem

SEGMENT = st.sampled_from(["src", "etc", "..", ".", "", "lib", "link", "a b", "src..", "~", "\\..", "-exec"])
PATH = st.lists(SEGMENT, min_size=0, max_size=8).map("/".join) | st.lists(SEGMENT, max_size=8).map(lambda s: "/" + "/".join(s))


def _resolved(path: str) -> list[str]:
    """An independent resolution: walk the segments with a stack (a '..' above the start is kept)."""
    out: list[str] = []
    for seg in path.split("/"):
        if seg in ("", "."):
            continue
        if seg == ".." and out and out[-1] != "..":
            out.pop()
        elif seg == ".." and path.startswith("/"):
            continue  # /.. is /
        else:
            out.append(seg)
    return out


@settings(max_examples=400, deadline=None)
@given(PATH, st.sampled_from(["src", "./src", "src/", "/srv/app", "."]))
def test_a_path_rule_approves_only_paths_that_resolve_inside_its_directory(path: str, directory: str) -> None:
    rule = Rule("find", {"path": Matcher("path_under", directory)})
    approved = rule.matches("find", {"path": path})
    inside = (
        "\\" not in path  # a backslash is never inside: see test_path_under_refuses_a_backslash
        and path.startswith("/") == directory.startswith("/")
        and _resolved(path)[: len(_resolved(directory))] == _resolved(directory)
        and ".." not in _resolved(path)
    )
    assert approved == inside
    if approved:  # and whatever it approves stays under the directory once normalised
        assert not posixpath.relpath(posixpath.normpath("/r/" + path), "/r/" + directory.lstrip("/")).startswith("..")


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["path", "exec", "name", "args"]), st.text(max_size=12) | st.integers(), min_size=1))
def test_a_call_carrying_an_argument_the_rule_does_not_name_is_never_approved(args: dict[str, Any]) -> None:
    rule = Rule("find", {"path": Matcher("path_under", "src")})
    approved = rule.matches("find", args)
    if set(args) != {"path"}:
        assert not approved
    # and a different tool is never approved by it
    assert not rule.matches("find2", args)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(), st.floats(allow_nan=True), st.booleans(), st.text(max_size=5), st.none()))
def test_a_range_rule_approves_only_finite_numbers_inside_its_bounds(value: Any) -> None:
    m = Matcher("range", low=1, high=5)
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and 1 <= value <= 5
    assert m.matches(value) == ok


def test_the_issue_examples() -> None:
    rule = Rule("find", {"path": Matcher("path_under", "./src")})
    assert rule.matches("find", {"path": "./src/a.py"}) and rule.matches("find", {"path": "src"})
    assert not rule.matches("find", {"path": "./src/../etc"})
    assert not rule.matches("find", {"path": "./src", "exec": "curl evil"})
    assert not rule.matches("find", {"path": "./srcx"}) and not rule.matches("find", {"path": "/src"})
    assert not rule.matches("find", {"path": ["./src"]}) and not rule.matches("find", {"path": "src\x00/../etc"})
    assert is_under("a//b/./c", "a/b") and not is_under("../a", ".")


def test_exact_is_type_strict_and_glob_refuses_dot_dot() -> None:
    assert Matcher("exact", 1).matches(1) and not Matcher("exact", 1).matches(True) and not Matcher("exact", 1).matches("1")
    g = Matcher("glob", "src/*")
    assert g.matches("src/a.py") and not g.matches("src/../etc/passwd") and not g.matches(3)


def test_exact_compares_nested_values_type_strictly() -> None:
    """0 is not False, 1 is not True, 1 is not 1.0, at any depth: what a person approved is the
    value as it was, its JSON type included."""
    rule = Rule("push", {"opts": Matcher("exact", {"force": False, "tags": [1, "a", None], "n": 1})})
    assert rule.matches("push", {"opts": {"force": False, "tags": [1, "a", None], "n": 1}})
    for other in (
        {"force": 0, "tags": [1, "a", None], "n": 1},
        {"force": False, "tags": [True, "a", None], "n": 1},
        {"force": False, "tags": [1, "a", None], "n": 1.0},
        {"force": False, "tags": (1, "a", None), "n": 1},
        {"force": False, "tags": [1, "a"], "n": 1},
        {"force": False, "tags": [1, "a", None], "n": 1, "extra": 1},
        {0: False, "tags": [1, "a", None], "n": 1},
    ):
        assert not rule.matches("push", {"opts": other}), other
    book = RuleBook(rules=[Rule("rm", {"recursive": Matcher("exact", False)})])  # the indexed path too
    assert book.match("rm", {"recursive": False}) is not None and book.match("rm", {"recursive": 0}) is None
    deep: Any = "x"
    for _ in range(100_000):  # deeper than the recursion limit: answered, never a RecursionError
        deep = [deep]
    assert not Matcher("exact", [[["x"]]]).matches(deep) and not Matcher("exact", [[[["y"]]]]).matches(deep)


def test_range_compares_huge_integers_exactly_and_never_raises() -> None:
    m = Matcher("range", low=0, high=10)
    assert not m.matches(10**400) and not m.matches(-(10**400)) and m.matches(10)
    assert Matcher("range", low=1.5).matches(10**400) and not Matcher("range", high=1e308).matches(10**400)
    assert not Matcher("range", low=0).matches(float("inf")) and not Matcher("range", low=0).matches(float("nan"))
    assert Matcher("range", low=10**30, high=10**30 + 1).matches(10**30 + 1) and not Matcher("range", low=10**30, high=10**30 + 1).matches(10**30 + 2)
    assert RuleBook(rules=[Rule("pay", {"amount": Matcher("range", high=500)})]).match("pay", {"amount": 10**5000}) is None


def test_path_under_refuses_a_backslash() -> None:
    """On Linux a backslash is a name character, but a tool may hand the path to a shell (where
    ``..\\/`` is ``../``) or to Windows-aware code (where it separates): a path with one is never
    inside a rule's directory, and the person is asked instead."""
    rule = Rule("read", {"path": Matcher("path_under", "/srv/data")})
    assert rule.matches("read", {"path": "/srv/data/report.txt"})
    for sneaky in ("/srv/data/..\\..\\etc\\passwd", "/srv/data/..\\/..\\/etc/passwd", "/srv/data/a\\b", "/srv/data\\..\\x"):
        assert not rule.matches("read", {"path": sneaky}), sneaky
    assert not is_under("/srv/data/..\\x", "/srv/data")
    with pytest.raises(ValueError, match="backslash"):
        Matcher("path_under", "C:\\work")
    g = Matcher("glob", "src/*")  # a glob's ".." check splits on backslashes too
    assert not g.matches("src/..\\..\\etc") and g.matches("src/a\\b.txt")


def test_a_saved_rule_with_an_impossible_number_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text('{"rules": [{"tool": "x", "made_at_ms": 1e999}]}')
    assert load_rules(path).rules()[0].made_at_ms == 0  # an infinite timestamp is no timestamp, not an OverflowError


def test_any_allows_an_argument_to_be_left_out_other_matchers_do_not() -> None:
    rule = Rule("ls", {"path": Matcher("path_under", "."), "all": Matcher("any")})
    assert rule.matches("ls", {"path": "x"}) and rule.matches("ls", {"path": "x", "all": True})
    assert not rule.matches("ls", {"all": True})


def test_a_rule_book_finds_by_tool_honours_never_auto_and_removes() -> None:
    book = RuleBook(rules=[Rule("a"), Rule("b", {"n": Matcher("exact", 1)})])
    assert [r.id for r in book.rules()] == ["R1", "R2"]
    assert book.match("a", {"x": 1}) is not None and book.match("b", {"n": 2}) is None
    book.never_auto.add("a")
    assert book.match("a", {}) is None
    assert book.remove("R2") is not None and book.match("b", {"n": 1}) is None and book.remove("R2") is None


def test_rules_round_trip_through_the_saved_file(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    book = RuleBook("machine", never_auto=["rm"])
    book.add(Rule("find", {"path": Matcher("path_under", "src"), "depth": Matcher("range", low=0, high=3)}, author="ann", made_at_ms=5))
    save_rules(book, path)
    again = load_rules(path)
    assert [r.to_dict() for r in again.rules()] == [r.to_dict() for r in book.rules()] and again.never_auto == {"rm"}
    assert again.rules()[0].id == "M1"


def test_a_damaged_rules_file_is_refused_in_one_line_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text('{"rules": [{"tool": "x", "match": {"p": {"kind": "regex"}}}]}')
    with pytest.raises(RulesFileError, match="is damaged .*matcher kind must be one of"):
        load_rules(path)
    assert json.loads(path.read_text())["rules"][0]["match"]["p"]["kind"] == "regex"
    assert len(load_rules(tmp_path / "missing.json")) == 0


def test_arguments_problem_names_the_argument() -> None:
    schema = {"properties": {"n": {"type": "integer"}, "s": {"type": "string"}}, "required": ["n"], "additionalProperties": False}
    assert arguments_problem(schema, {"n": 1}) == ""
    assert arguments_problem(schema, {"n": True}) == "argument 'n' must be integer, got boolean"
    assert arguments_problem(schema, {"n": 1, "z": 0}) == "unknown argument 'z' (the tool takes: n, s)"
    assert arguments_problem(schema, {"s": "x"}) == "argument 'n' is required"
    assert arguments_problem(None, {"anything": 1}) == "" and "JSON object" in arguments_problem(None, "x")


VALUES = st.sampled_from([1, 1.0, True, "1", "a", None, 0, "src/x", 3.5])
MATCHER = st.one_of(
    st.builds(lambda v: Matcher("exact", v), VALUES),
    st.builds(lambda d: Matcher("path_under", d), st.sampled_from(["src", ".", "/etc"])),
    st.builds(lambda lo: Matcher("range", low=lo, high=lo + 2), st.integers(-2, 2)),
    st.just(Matcher("any")),
)
RULES = st.lists(st.builds(lambda t, m: Rule(t, m), st.sampled_from(["a", "b"]),
                           st.dictionaries(st.sampled_from(["x", "y"]), MATCHER, max_size=2)), max_size=12)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(RULES, st.sampled_from(["a", "b"]), st.dictionaries(st.sampled_from(["x", "y", "z"]), VALUES, max_size=3))
def test_the_indexed_book_approves_exactly_when_some_rule_does(rules: list[Rule], tool: str, args: dict[str, Any]) -> None:
    book = RuleBook(rules=rules)
    found = book.match(tool, args)
    naive = [r for r in book.rules() if r.matches(tool, args)]
    assert (found is not None) == bool(naive)
    if found is not None:
        assert found.matches(tool, args) and found.id == naive[0].id  # the earliest-added one


def test_recorded_rules_fold_what_the_runs_events_show_it_made() -> None:
    """An ended run answers nothing: its rules are read back from its events (issue 23)."""
    from goldfive import events as E
    from goldfive.approvals.recorded import RecordedRules
    from goldfive.control import AckResult, ControlAck, ControlKind, ControlMessage
    from goldfive.types import Session

    s = Session(run_id="r")
    out: list[Any] = [E.approval_requested(s, target_id="c1", kind="tool", tool_name="deploy", args={"env": "dev"})]

    def control(msg: ControlMessage, result: AckResult = AckResult.SUCCESS, detail: str = "") -> None:
        out.append(E.control_received(s, msg))
        out.append(E.control_acked(s, ControlAck(msg.id, result, detail), str(msg.kind)))

    always = {"scope": "run", "match": {"env": {"kind": "exact", "value": "dev"}}}
    control(ControlMessage(ControlKind.APPROVE, payload={"target_id": "c1", "always": always, "author": "ann"}))
    control(ControlMessage("approval_rules", payload={"op": "add", "rule": {"tool": "lint"}, "author": "bo"}), detail="added R5: lint: always")
    control(ControlMessage("approval_rules", payload={"op": "add", "rule": {"tool": "ls", "scope": "machine"}, "author": "bo"}), detail="added M2: ls")
    control(ControlMessage("approval_rules", payload={"op": "add", "rule": {"tool": "rm"}, "author": "bo"}), AckResult.FAILURE, "no")
    control(ControlMessage("approval_rules", payload={"op": "add", "rule": {"tool": "cat"}, "author": "bo"}), detail="added R6: cat")
    control(ControlMessage("approval_rules", payload={"op": "remove", "rule_id": "R6", "author": "bo"}), detail="removed R6: cat")
    control(ControlMessage("approval_rules", payload={"op": "list", "author": "bo"}), detail="{}")
    rules = RecordedRules()
    for ev in out:
        rules.apply(ev)
    got = [(r.id, r.scope, r.describe(), r.author) for r in rules.rules()]
    assert got == [("R1", "run", "deploy: env = 'dev'", "ann"), ("R5", "run", "lint: always", "bo"), ("M2", "machine", "ls: always", "bo")]
    listing = json.loads(rules.listing())
    assert [r["id"] for r in listing["rules"]] == ["R1", "R5", "M2"] and listing["recorded"] is True
