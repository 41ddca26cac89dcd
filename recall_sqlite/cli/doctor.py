"""`recall-sqlite doctor [--repair]`: check the store; rebuild what is derived."""

from __future__ import annotations

import argparse

from ._common import clean, emit, open_for_read, open_from_args

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def cmd_doctor(args: argparse.Namespace) -> int:
    from ..doctor.report import DoctorReport
    from ..errors import CorruptStoreError, NotAStoreError

    try:
        store = open_from_args(args) if args.repair else open_for_read(args)
    except (CorruptStoreError, NotAStoreError) as exc:
        emit(args, DoctorReport.unopened(exc).to_dict(), f"error: damaged_store: {clean(exc)}")
        return 1
    if store is None:
        emit(args, DoctorReport((), (), None).to_dict(), "No store yet: nothing to check.")
        return 0
    with store:
        report = store.doctor(repair=args.repair, deep=args.deep)
    data = report.to_dict()
    lines = [f"database {clean(report.database)}"]
    lines += [f"repaired: {r}" for r in report.repaired]
    for f in report.findings:
        fix = " (doctor --repair fixes this)" if f.repairable else ""
        lines.append(f"{f.severity}: {f.kind}: {clean(f.message)}{fix}")
    if report.ok:
        lines.append("ok: no findings")
    emit(args, data, "\n".join(lines))
    return 0 if report.ok else 1


def register(sub: Any, jp: argparse.ArgumentParser) -> None:
    d = sub.add_parser(
        "doctor",
        parents=[jp],
        help="check the store; --repair mends what it finds (never deletes an entry)",
    )
    d.add_argument(
        "--repair",
        action="store_true",
        help="mend what is found (derived state, damage, a removed worktree, a moved"
        " workspace), in short writes (writers keep working), and check again",
    )
    d.add_argument(
        "--deep",
        action="store_true",
        help="also re-hash every row and compare the full-text index token by token (slower)",
    )
    d.set_defaults(func=cmd_doctor)
