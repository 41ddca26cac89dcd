"""What the import writes to SQLite's statement journals, against the same work by hand: the
measurement behind bench/RESULTS.md, row 'import: statement journals'.

A statement that changes many rows inside a transaction keeps the original of every page it
changes in a statement journal, so that it can be undone alone; past 64 KiB that journal is
a temporary file. This counts the bytes written to those files (a VFS over the default one),
statement by statement, for an import of `--lines` lines over 20 nested stores (the legacy
suite's corpus; one process: the statements are the same with workers) and for the same work
by hand-written SQL on the store it left (bench_legacy._same_work_floor).

`python bench/statement_journal.py [--lines 100000] [--top 4] [--corpus DIR]`: with
`--corpus`, a copy of the synapt layout at DIR (a workspace root holding .synapt/recall)
instead of the nested corpus."""

from __future__ import annotations

import argparse
import collections
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import apsw

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import bench_legacy  # noqa: E402
from recall_sqlite import open_store  # noqa: E402

_SUBJOURNAL = apsw.mapping_open_flags["SQLITE_OPEN_SUBJOURNAL"]


class _Counted(apsw.VFSFile):
    def __init__(self, tally: _Tally, name: Any, flags: list[int]) -> None:
        self.tally = tally if flags[0] & _SUBJOURNAL else None
        super().__init__(tally.base, name, flags)

    def xWrite(self, data: bytes, offset: int) -> None:  # noqa: N802 - apsw's name
        if self.tally is not None:
            self.tally.bytes[self.tally.statement] += len(data)
        super().xWrite(data, offset)


class _Tally(apsw.VFS):
    """The default VFS, counting what goes to statement journals by the statement that
    runs (each connection's exec tracer names it)."""

    def __init__(self) -> None:
        self.bytes: collections.Counter[str] = collections.Counter()
        self.runs: collections.Counter[str] = collections.Counter()
        self.statement = "?"
        self.base = apsw.vfs_names()[0]  # the default, before this one replaces it
        super().__init__("statement-journals", self.base, makedefault=True)

    def xOpen(self, name: Any, flags: list[int]) -> _Counted:  # noqa: N802 - apsw's name
        return _Counted(self, name, flags)

    def trace(self, _cursor: Any, sql: str, _bindings: Any) -> bool:
        self.statement = " ".join(sql.split())[:72]
        self.runs[self.statement] += 1
        return True

    def taken(self) -> tuple[collections.Counter[str], collections.Counter[str]]:
        got = self.bytes, self.runs
        self.bytes, self.runs = collections.Counter(), collections.Counter()
        return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--top", type=int, default=4)
    parser.add_argument("--corpus", type=Path)
    args = parser.parse_args()
    # (Before any connection: the default VFS is the one connections open with.)
    tally = _Tally()
    apsw.connection_hooks.append(lambda conn: setattr(conn, "exec_trace", tally.trace))
    with tempfile.TemporaryDirectory() as tmp:
        if args.corpus is None:
            root = bench_legacy.nested_corpus(Path(tmp) / "nested", args.lines)
        else:
            root = Path(tmp) / "corpus"
            shutil.copytree(args.corpus / ".synapt" / "recall", root / ".synapt" / "recall")
        with open_store(root, root=root) as store:
            store.legacy.import_paths([root], jobs=1)
        ours = tally.taken()
        bench_legacy._same_work_floor(Path(tmp), root, bench_legacy.CHUNK_LINES, defer=False)
        floor = tally.taken()
    for name, (got, runs) in (("the import", ours), ("the same work by hand", floor)):
        print(f"{name}: {sum(got.values()) / 2**20:.1f} MiB to statement journals")
        for statement, n in got.most_common(args.top):
            print(f"  {n / 2**20:8.1f} MiB in {runs[statement]:6d} run(s)  {statement}")


if __name__ == "__main__":
    main()
