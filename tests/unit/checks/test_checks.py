"""The input checks (recall_sqlite/checks.py): what each accepts, what it refuses, and that
the error class is the caller's to choose; the one entry-id parser behind every call that
takes an id; an import's quarantine reasons decided by error classes, not message text."""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from recall_sqlite import checks, open_store
from recall_sqlite.errors import (
    BadTimestampError,
    FieldTextError,
    FieldTooLargeError,
    FieldTypeError,
    InvalidEntryError,
    InvalidInputError,
    InvalidOwnerError,
    MissingTimestampError,
    RecallError,
    StoreError,
    SyncSetupError,
    WorkspaceError,
)
from recall_sqlite.journal.entry import JournalEntry
from recall_sqlite.legacy import lines
from recall_sqlite.limits import max_field_bytes
from recall_sqlite.vectors.owners import Owner, check_kinds

HEX = "0123456789abcdef" * 2


# -- the error class is the caller's, any RecallError -------------------------------------


@pytest.mark.parametrize("error", [InvalidInputError, WorkspaceError, StoreError, SyncSetupError])
def test_every_check_raises_the_error_it_is_given(error: type[RecallError]) -> None:
    calls = [
        lambda: checks.require_bool("flag", 1, error=error),
        lambda: checks.require_int("n", "1", error=error),
        lambda: checks.require_text("t", 3, error=error),
        lambda: checks.require_type("o", [], dict, what="an object", error=error),
        lambda: checks.require_list("l", "text", error=error),
        lambda: checks.require_choice("c", "z", ("a", "b"), error=error),
        lambda: checks.require_label("w", " x", error=error),
        lambda: checks.require_path("p", 3, error=error),
        lambda: checks.path_text("p", "", error=error),
        lambda: checks.parse_entry_id("ab", error=error),
        lambda: checks.parse_int("n", "x", error=error),
        lambda: checks.require_pair("p", (1,), what="a pair", error=error),
        lambda: checks.require_ids("ids", 3, error=error),
        lambda: checks.require_ids("ids", b"\xff", error=error),
        lambda: checks.require_ids("ids", ["ab"], error=error),
    ]
    for call in calls:
        with pytest.raises(error):
            call()


def test_the_default_error_is_invalid_input() -> None:
    with pytest.raises(InvalidInputError, match="flag must be true or false"):
        checks.require_bool("flag", None)


# -- each check ---------------------------------------------------------------------------


def test_require_bool_takes_only_a_bool() -> None:
    assert checks.require_bool("f", True) is True
    assert checks.require_bool("f", False) is False
    for bad in (0, 1, "true", None, 1.0):
        with pytest.raises(InvalidInputError):
            checks.require_bool("f", bad)


def test_require_int_refuses_bools_and_keeps_sqlites_range() -> None:
    assert checks.require_int("n", 5, minimum=0) == 5
    for bad in (True, 1.0, "1", None, 2**63):
        with pytest.raises(InvalidInputError):
            checks.require_int("n", bad)
    with pytest.raises(InvalidInputError, match=">= 1"):
        checks.require_int("n", 0, minimum=1)


def test_require_int_with_index_takes_any_integer_type() -> None:
    np = pytest.importorskip("numpy")
    assert checks.require_int("id", np.int64(7), index=True) == 7
    assert type(checks.require_int("id", np.int64(7), index=True)) is int
    with pytest.raises(InvalidInputError):
        checks.require_int("id", np.int64(7))  # without index: an int only

    class Refuses:
        def __index__(self) -> int:
            raise TypeError("not today")

    for bad in (True, np.bool_(True), 7.0, np.float64(7), Refuses()):
        with pytest.raises(InvalidInputError):
            checks.require_int("id", bad, index=True)


def test_require_text_separates_a_wrong_type_from_bad_text() -> None:
    assert checks.require_text("t", "fine ✓") == "fine ✓"
    kwargs: dict[str, Any] = {"error": FieldTextError, "type_error": FieldTypeError}
    with pytest.raises(FieldTypeError):
        checks.require_text("t", 3, **kwargs)
    for bad in ("a\x00b", "lone \ud800"):
        with pytest.raises(FieldTextError):
            checks.require_text("t", bad, **kwargs)
    with pytest.raises(InvalidInputError, match="empty"):
        checks.require_text("t", "  ", allow_empty=False)


def test_require_list_takes_lists_and_refuses_text() -> None:
    assert checks.require_list("l", ["a"]) == ["a"]
    assert checks.require_list("l", ("a", "b")) == ["a", "b"]
    given = ["a"]
    assert checks.require_list("l", given) is not given  # a new list: the caller's stays
    for bad in ("a thing", b"bytes", {"a": 1}, 3, None, {"a"}):
        with pytest.raises(InvalidInputError):
            checks.require_list("l", bad)
    with pytest.raises(InvalidInputError, match="not a single str"):
        checks.require_list("l", "a thing")


def test_require_list_iterable_and_single() -> None:
    assert checks.require_list("l", iter("ab"), iterable=True) == ["a", "b"]
    assert checks.require_list("l", {"x"}, iterable=True) == ["x"]
    for bad in ("ab", {"a": 1}, b"ab", 3):
        with pytest.raises(InvalidInputError):
            checks.require_list("l", bad, iterable=True)
    assert checks.require_list("ids", HEX, single=str) == [HEX]
    path = PurePosixPath("/x")
    assert checks.require_list("paths", path, single=(str, os.PathLike)) == [path]


def test_require_choice() -> None:
    assert checks.require_choice("c", "a", ("a", "b")) == "a"
    assert checks.require_choice("c", "b", {"a": 1, "b": 2}) == "b"  # a mapping's keys
    for bad in ("c", None, ["a"], "A"):
        with pytest.raises(InvalidInputError, match="c must be one of a, b"):
            checks.require_choice("c", bad, ("a", "b"))


def test_require_type() -> None:
    assert checks.require_type("q", "text", str, what="a string") == "text"
    with pytest.raises(InvalidInputError, match="q must be a string, got int"):
        checks.require_type("q", 3, str, what="a string")
    with pytest.raises(InvalidInputError, match="q must be a string, got 3$"):
        checks.require_type("q", 3, str, what="a string", show_value=True)


def test_parse_int_reads_text_by_require_ints_rule() -> None:
    assert checks.parse_int("n", " 7 ", minimum=0) == 7
    assert checks.parse_int("n", "-3") == -3
    with pytest.raises(InvalidInputError, match="n must be an integer, got 'x'"):
        checks.parse_int("n", "x")
    with pytest.raises(InvalidInputError, match="n must be >= 0, got -1"):
        checks.parse_int("n", "-1", minimum=0)
    with pytest.raises(
        InvalidInputError, match=r"n is out of range \(at most 9223372036854775807\)"
    ):
        checks.parse_int("n", str(2**63))


def test_require_pair() -> None:
    assert checks.require_pair("p", ("a", 1), what="(name, n)") == ("a", 1)
    for bad in (("a",), ("a", 1, 2), ["a", 1], "ab", None):
        with pytest.raises(InvalidInputError, match=r"p must be \(name, n\), got "):
            checks.require_pair("p", bad, what="(name, n)")


def test_require_ids_takes_one_id_or_a_list_of_them() -> None:
    raw = bytes.fromhex(HEX)
    assert checks.require_ids("ids", HEX) == [raw]  # bare: not 32 one-character ids
    assert checks.require_ids("ids", HEX.encode()) == [raw]  # its ASCII bytes, bare
    assert checks.require_ids("ids", [HEX, HEX.upper()]) == [raw, raw]
    assert checks.require_ids("ids", (i for i in [HEX])) == [raw]
    assert checks.require_ids("ids", ()) == []
    with pytest.raises(InvalidInputError, match="got bytes that are not"):
        checks.require_ids("ids", b"\xff" * 32)
    for bad in (3, None, {HEX: 1}):
        with pytest.raises(InvalidInputError, match="ids must be a list of ids, got "):
            checks.require_ids("ids", bad)
    for bad_item in ([b"x"], [3], ["ab"]):
        with pytest.raises(InvalidInputError, match="not an entry id"):
            checks.require_ids("ids", bad_item)


def test_require_label() -> None:
    assert checks.require_label("w", "feature") == "feature"
    assert checks.require_label("b", " spaced ", stripped=False) == " spaced "
    for bad in ("", " x", "x ", "a\nb", "a\x00", 3, None):
        with pytest.raises(InvalidInputError):
            checks.require_label("w", bad)


def test_paths() -> None:
    assert checks.require_path("p", "x") == "x"
    assert checks.require_path("p", Path("x")) == Path("x")
    assert checks.path_text("p", Path("/a/b")) == "/a/b"
    for bad in ("", "a\x00b", 3, None, b"bytes"):
        with pytest.raises(InvalidInputError, match="not a path"):
            checks.path_text("p", bad)
    for bad in (3, None, b"bytes"):
        with pytest.raises(InvalidInputError, match="p must be a path"):
            checks.require_path("p", bad)


# -- one entry-id parser ------------------------------------------------------------------


def test_an_entry_id_is_32_hex_digits_of_either_case() -> None:
    assert checks.parse_entry_id(HEX) == bytes.fromhex(HEX)
    assert checks.parse_entry_id(HEX.upper()) == bytes.fromhex(HEX)
    spaced = HEX[:30] + " " + HEX[30]  # 32 characters, fromhex would skip the space
    for bad in ("ab", "", HEX + "00", HEX[:-1] + "g", spaced, " " + HEX[:31], 12, None, b"x"):
        with pytest.raises(InvalidInputError, match="not an entry id"):
            checks.parse_entry_id(bad)


def test_every_call_that_takes_an_id_refuses_a_malformed_one(tmp_path: Path) -> None:
    """One behaviour: a malformed id is the caller's mistake, raised as the call's error
    class, never a silent "no such entry"; a well-formed unknown id is not an error of
    form (get: None)."""
    (tmp_path / ".grip").mkdir()
    with open_store(tmp_path) as s:
        s.journal.append({"timestamp": "2026-01-01T00:00:00Z", "focus": "x"})
        for bad in ("ab", "zz", HEX[:31], 7):
            with pytest.raises(InvalidEntryError, match="not an entry id"):
                s.journal.get(bad)  # type: ignore[arg-type]
            with pytest.raises(InvalidInputError, match="not an entry id"):
                s.journal.forget([bad])  # type: ignore[list-item]
            with pytest.raises(InvalidOwnerError, match="not an entry id"):
                Owner.entry(bad)  # type: ignore[arg-type]
            with pytest.raises(InvalidInputError, match="not an entry id"):
                s.summaries.add("s", covers=[bad])  # type: ignore[list-item]
        assert s.journal.get(HEX) is None
    assert Owner.entry(HEX.upper()) == Owner("entry", HEX)


def test_owner_checks() -> None:
    assert Owner.summary(3) == Owner("summary", 3)
    for bad in (0, -1, True, 1.5, "3"):
        with pytest.raises(InvalidOwnerError):
            Owner.summary(bad)  # type: ignore[arg-type]
    assert Owner.of(("summary", 3)) == Owner.parse("summary:3") == Owner.summary(3)
    for bad_kind in (("owner", HEX), ("Entry", HEX), (None, 3)):
        with pytest.raises(InvalidOwnerError, match="owner kind must be one of entry, summary"):
            Owner.of(bad_kind)  # type: ignore[arg-type]
    for not_an_owner in ("entry", ("entry",), ["summary", 3], None):
        with pytest.raises(InvalidOwnerError, match=r"an owner must be Owner\(kind, id\) or"):
            Owner.of(not_an_owner)  # type: ignore[arg-type]
    assert check_kinds("entry") == ("entry",)
    assert check_kinds(["summary", "entry"]) == ("entry", "summary")
    for bad in ("owner", ["entry", "x"], 3, {"entry": 1}, []):
        with pytest.raises(InvalidInputError):
            check_kinds(bad)


# -- an import's quarantine reasons: by error class, never by message text ----------------

_TS = "2026-01-01T00:00:00Z"
# (a line's fields, the reason it is quarantined under): every reason the validator gives
REASONS = [
    ({"focus": "x"}, "missing-timestamp"),
    ({"timestamp": None}, "missing-timestamp"),
    ({"timestamp": "yesterday"}, "bad-timestamp"),
    ({"timestamp": "2026-13-01T00:00:00Z"}, "bad-timestamp"),
    ({"timestamp": "2026-01-01T00:00:00\x00Z"}, "bad-timestamp"),
    ({"timestamp": 1767225600}, "wrong-type"),
    ({"timestamp": _TS, "focus": 3}, "wrong-type"),
    ({"timestamp": _TS, "done": "one thing"}, "wrong-type"),
    ({"timestamp": _TS, "done": [1]}, "wrong-type"),
    ({"timestamp": _TS, "auto": "yes"}, "wrong-type"),
    ({"timestamp": _TS, "focus": "a\x00b"}, "bad-text"),
    ({"timestamp": _TS, "done": ["a\x00b"]}, "bad-text"),
    ({"timestamp": _TS, "note": "a\x00b"}, "bad-text"),  # an unknown field (extra)
    # a field of another name used to be grouped by the word in its message
    ({"timestamp": _TS, "timestamp_local": "a\x00b"}, "bad-text"),
]


@pytest.mark.parametrize(("fields", "reason"), REASONS)
def test_each_reason_is_produced_by_its_input(fields: dict[str, Any], reason: str) -> None:
    line = json.dumps(fields).encode()
    got = lines.classify(line, True)
    assert isinstance(got, lines.Bad) and got.reason == reason, got
    with pytest.raises(InvalidEntryError) as caught:
        JournalEntry.from_mapping(fields)
    assert caught.value.reason == reason


def test_a_field_over_the_limit_is_too_long() -> None:
    with pytest.raises(FieldTooLargeError) as caught:
        JournalEntry.from_mapping({"timestamp": _TS, "focus": "x" * (max_field_bytes() + 1)})
    assert lines.reason_of(caught.value) == "too-long"


def test_rewording_a_message_changes_no_reason() -> None:
    """The code is the error class's: any message, even one naming another reason's words,
    keeps it (the old grouping read "timestamp", "NUL", " must be " in the text)."""
    misleading = "entry has no timestamp: timestamp must be text, not NUL or a surrogate"
    for cls, reason in [
        (MissingTimestampError, "missing-timestamp"),
        (BadTimestampError, "bad-timestamp"),
        (FieldTypeError, "wrong-type"),
        (FieldTextError, "bad-text"),
        (FieldTooLargeError, "too-long"),
        (InvalidEntryError, "invalid-entry"),
    ]:
        assert lines.reason_of(cls(misleading)) == reason
        assert lines.reason_of(cls("")) == reason


def test_the_stored_reason_strings_stay() -> None:
    """Users' stores hold these (import_quarantine.reason): the values never change."""
    assert (
        lines.MISSING_TIMESTAMP,
        lines.BAD_TIMESTAMP,
        lines.WRONG_TYPE,
        lines.BAD_TEXT,
        lines.INVALID_ENTRY,
        lines.TOO_LONG,
    ) == (
        "missing-timestamp",
        "bad-timestamp",
        "wrong-type",
        "bad-text",
        "invalid-entry",
        "too-long",
    )


# -- the CLI's reads open an old store by its error class, not its message ----------------


def test_a_read_upgrades_an_old_store_by_its_error_class(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from recall_sqlite.cli import main
    from recall_sqlite.errors import NeedsMigrationError
    from tests.unit.migrations.test_migrations import FROZEN, _migrated

    root, db, _ = _migrated(FROZEN[-1], tmp_path)
    with pytest.raises(NeedsMigrationError):
        open_store(root, db_path=db, read_only=True)
    argv = ["--cwd", str(root), "--db", str(db), "journal", "read", "--json"]
    assert main(["--read-only", *argv]) == 1  # asked not to write: the error, as it is
    assert "needs migrating" in capsys.readouterr().err
    assert main(argv) == 0  # otherwise opened for writing once, and read
    assert json.loads(capsys.readouterr().out)["entries"]
    open_store(root, db_path=db, read_only=True).close()  # upgraded


# -- more than one machine (issue 32) -------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "../../escaped",
        "..",
        "0123456789abcde/",
        "0123456789ABCDEF",  # the minted shape is lowercase
        "0123456789abcdef0",  # one digit more
        "0123456789abcde",
        "",
        "0123456789abcdeg",
        None,
        16,
    ],
)
def test_a_machine_id_is_only_the_shape_sync_mints(bad: object) -> None:
    assert not checks.is_machine_id(bad)
    with pytest.raises(SyncSetupError, match="not a machine id"):
        checks.require_machine_id("machine", bad, error=SyncSetupError)


def test_a_minted_machine_id_is_one() -> None:
    import secrets

    minted = secrets.token_hex(8)  # as sync/state.py mints it
    assert checks.require_machine_id("machine", minted) == minted


def test_summary_text_is_held_to_the_field_limit() -> None:
    from recall_sqlite.limits import max_field_bytes

    limit = max_field_bytes()
    assert checks.require_summary_text("text", "é" * (limit // 2)) == "é" * (limit // 2)
    with pytest.raises(InvalidInputError, match="longer than"):
        checks.require_summary_text("text", "é" * (limit // 2 + 1))
    with pytest.raises(InvalidInputError, match="NUL"):
        checks.require_summary_text("text", "a\x00b")
    with pytest.raises(InvalidInputError, match="empty"):
        checks.require_summary_text("text", "  ")


def test_a_vector_dimension_is_one_to_the_limit() -> None:
    from recall_sqlite.limits import MAX_VECTOR_DIM

    assert checks.require_vector_dim("dim", MAX_VECTOR_DIM) == MAX_VECTOR_DIM
    for bad in (0, MAX_VECTOR_DIM + 1, True, 3.0):
        with pytest.raises(InvalidInputError):
            checks.require_vector_dim("dim", bad)
