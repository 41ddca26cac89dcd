"""Legacy migration benchmarks (issue 5): survey and import of overlapping JSONL buckets
against the parse limit (json.loads over the very same lines, in the same run), peak memory
of the import, and the re-import of unchanged files.

    python bench/bench_legacy.py [--quick]       # prints JSON rows

Full size: 1,000,000 lines in 8 buckets, ~30% of them exact copies of lines in other buckets
(stubs and enriched versions of sessions too), 0.1% malformed; --quick: 5,000 lines.
Import and re-import run in child processes so their peak RSS is their own.

The import runs in one process (`--jobs 1`, the rows before issue 33) and with worker
processes reading its lines (legacy/workers.py, one per CPU up to 4), beside the identity
floor on one core and on every core with the standard library alone, beside its SQL
written by hand (its rows pre-built), beside its writer's work by hand alone (the lines
parsed already), and beside the whole import by hand on the same cores (a pool of the
standard library parsing the lines while the chunks are written). While the import with
workers runs, and again while one with `--defer-indexes` runs, this process reads as an
agent's session start does.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any

import apsw

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import _util  # noqa: E402
from _util import (  # noqa: E402
    HandWriter,
    assert_same_heads,
    copy_counts,
    median_time,
    row,
    sentence,
)

from recall_sqlite import open_store  # noqa: E402
from recall_sqlite.demo import synapt_line  # noqa: E402
from recall_sqlite.legacy import survey  # noqa: E402
from recall_sqlite.legacy.importer import CHUNK_LINES  # noqa: E402
from recall_sqlite.legacy.workers import AHEAD_BLOCKS, default_jobs  # noqa: E402
from recall_sqlite.store import context_of  # noqa: E402

BUCKETS = ("proj", "server", "client", "docs", "infra", "scripts", "web", "api")
WORDS = (*_util.WORDS, "parser", "stream", "memory", "file")
DUP_SHARE = 0.30
BAD_SHARE = 0.001


def _s(rng: random.Random, n: int) -> str:
    return sentence(rng, n, WORDS)


def _iso(t: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{t % 997:06d}+00:00"


def build(root: Path, n: int, seed: int = 5) -> int:
    """Write the buckets; returns the total bytes. Each line is, by chance: a copy of a
    recent line of another bucket (~30%), malformed (~0.1%), or new: an auto stub of a new
    session or a manual / enriched later version of a recent one."""
    rng = random.Random(seed)
    (root / ".grip").mkdir(parents=True, exist_ok=True)
    files = []
    for name in BUCKETS:
        p = root / ".synapt" / "recall" / "worktrees" / name / "journal.jsonl"
        p.parent.mkdir(parents=True, exist_ok=True)
        files.append(open(p, "w", encoding="utf-8"))  # noqa: SIM115 - closed below
    recent: deque[str] = deque(maxlen=20_000)
    sessions: deque[tuple[str, str, int]] = deque(maxlen=2_000)
    t = 1_700_000_000
    try:
        for i in range(n):
            f = files[rng.randrange(len(files)) if i % 3 else i % len(files)]
            r = rng.random()
            if r < BAD_SHARE:
                line = synapt_line(timestamp=_iso(t), focus=_s(rng, 6))[: rng.randint(5, 60)]
            elif r < BAD_SHARE + DUP_SHARE and recent:
                line = rng.choice(recent)
            else:
                t += rng.randint(10, 600)
                files_mod = [
                    f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py"
                    for _ in range(rng.randint(1, 6))
                ]
                git_log = [
                    f"{rng.getrandbits(28):07x} {_s(rng, 5)}" for _ in range(rng.randint(0, 4))
                ]
                if sessions and rng.random() < 0.4:
                    sid, branch, _ = rng.choice(sessions)
                    line = synapt_line(
                        timestamp=_iso(t),
                        session_id=sid,
                        branch=branch,
                        focus=_s(rng, 10),
                        done=[_s(rng, 8) for _ in range(rng.randint(1, 3))],
                        decisions=[_s(rng, 9)] if rng.random() < 0.6 else [],
                        next_steps=[_s(rng, 6) for _ in range(rng.randint(0, 3))],
                        files_modified=files_mod,
                        git_log=git_log,
                        auto=rng.random() < 0.3,
                        enriched=rng.random() < 0.5,
                    )
                else:
                    sid = f"{rng.getrandbits(64):016x}-{i:08x}"
                    branch = rng.choice(("main", "feature/a", "fix/b"))
                    sessions.append((sid, branch, t))
                    line = synapt_line(
                        timestamp=_iso(t),
                        session_id=sid,
                        branch=branch,
                        focus=_s(rng, 9),
                        files_modified=files_mod,
                        git_log=git_log,
                        auto=True,
                    )
                recent.append(line)
            f.write(line + "\n")
    finally:
        for f in files:
            f.close()
    return sum(os.path.getsize(f.name) for f in files)


def identify_all(root: Path) -> int:
    """What every line costs before any store, with the standard library alone: the parse,
    the canonical form (sorted keys, no spaces) and the content id (sha256) that an entry's
    identity across machines is made of (journal/codec.py)."""
    dumps, sha = json.dumps, hashlib.sha256
    count = 0
    for name in BUCKETS:
        with open(root / ".synapt" / "recall" / "worktrees" / name / "journal.jsonl", "rb") as f:
            for line in f:
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                canon = dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                sha(canon.encode()).digest()
                count += 1
    return count


def _ranges(root: Path, parts: int) -> list[tuple[str, int, int]]:
    """Every bucket cut into byte ranges of whole lines, about `parts` per bucket."""
    out = []
    for name in BUCKETS:
        path = root / ".synapt" / "recall" / "worktrees" / name / "journal.jsonl"
        size = path.stat().st_size
        start = 0
        with open(path, "rb") as f:
            while start < size:
                f.seek(min(size, start + max(1, size // parts)))
                f.readline()  # to the end of the line the cut falls in
                end = min(size, f.tell())
                out.append((str(path), start, end))
                start = end
    return out


def identify_range(job: tuple[str, int, int]) -> int:
    """identify_all's work on one byte range of a bucket (run in a worker process)."""
    path, start, end = job
    dumps, sha, loads = json.dumps, hashlib.sha256, json.loads
    count = 0
    with open(path, "rb") as f:
        f.seek(start)
        for line in f.read(end - start).splitlines():
            try:
                obj = loads(line)
            except ValueError:
                continue
            canon = dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            sha(canon.encode()).digest()
            count += 1
    return count


def identify_lines(joined: bytes) -> list[tuple[bytes, tuple[Any, ...]] | None]:
    """identify_all's work on lines joined by newlines (run in a worker process): each
    line's content id and its values as a writer binds them (a list as its JSON text), as a
    worker hands a parsed line back (None for a line that does not parse)."""
    dumps, sha, loads = json.dumps, hashlib.sha256, json.loads
    out: list[tuple[bytes, tuple[Any, ...]] | None] = []
    for line in joined.split(b"\n"):
        try:
            obj = loads(line)
        except ValueError:
            out.append(None)
            continue
        canon = dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        values = tuple(
            dumps(v, ensure_ascii=False) if isinstance(v, list) else v for v in obj.values()
        )
        out.append((sha(canon.encode()).digest(), values))
    return out


def _pieces(paths: list[Path], counts: list[int]) -> Any:
    """The files' lines read by hand, a MiB at a time, each file's sha256 taken as it is
    read: pieces of 1,024 lines joined by newlines, and each piece's line count appended to
    `counts` as it is handed on."""
    for path in paths:
        digest = hashlib.sha256()
        rest = b""
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
                lines = (rest + block).split(b"\n")
                rest = lines.pop()
                for k in range(0, len(lines), 1024):
                    piece = lines[k : k + 1024]
                    counts.append(len(piece))
                    yield b"\n".join(piece)
        if rest:
            counts.append(1)
            yield rest
        digest.hexdigest()


def identify_all_cores(root: Path, jobs: int) -> int:
    """The identity floor on `jobs` cores, by the standard library alone: a 'spawn' pool of
    `jobs` processes (its start timed too, as the import's is) over byte ranges of the
    buckets, each line parsed, put in canonical form and hashed; the counts summed."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        return sum(pool.imap_unordered(identify_range, _ranges(root, 8 * jobs)))


def parse_all(root: Path) -> int:
    """The limit: json.loads over every line of every bucket (malformed ones fail fast)."""
    count = 0
    for name in BUCKETS:
        with open(root / ".synapt" / "recall" / "worktrees" / name / "journal.jsonl", "rb") as f:
            for line in f:
                try:  # noqa: SIM105 - suppress() costs more per line than the limit should
                    json.loads(line)
                except ValueError:
                    pass
                count += 1
    return count


# Peak RSS of the child itself: VmHWM is reset at exec, while ru_maxrss on Linux keeps the
# high-water mark of the parent image the child was forked from.
PEAK = """
def peak_mb():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""

CHILD = (
    PEAK
    + """
import json, sys, time
from recall_sqlite import open_store
from recall_sqlite.legacy import workers
root, defer = sys.argv[1], {"kept": False, "deferred": True}[sys.argv[2]]
jobs = int(sys.argv[3])
# Workers for a load of any size: the row measures them at the quick sizes too.
workers.POOL_MIN_BYTES = 0
with open_store(root, root=root) as store:
    t = time.perf_counter()
    report = store.legacy.import_paths([root], defer_indexes=defer, jobs=jobs).to_dict()
    seconds = time.perf_counter() - t
print(json.dumps({"seconds": seconds, "peak_mb": peak_mb(),
                  **{k: report[k] for k in ("lines_total", "imported", "duplicates",
                                             "quarantined", "unchanged_files", "jobs")}}))
"""
)

SURVEY_CHILD = (
    PEAK
    + """
import json, sys, time
from recall_sqlite.legacy import survey
t = time.perf_counter()
r = survey([sys.argv[1]])
print(json.dumps({"seconds": time.perf_counter() - t, "peak_mb": peak_mb()}))
"""
)


def _child(code: str, root: Path, *args: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", code, str(root), *args],
        capture_output=True,
        text=True,
        env=_child_env(),
        check=True,
    )
    return _answer(out.stdout)


def _child_env() -> dict[str, str]:
    """This environment without the variables that would point a child at another store."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("SYNAPT_", "RECALL_"))}


def _answer(stdout: str) -> dict[str, Any]:
    """The JSON line a child ends its output with."""
    result: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    return result


def _sampled(code: str, root: Path, *args: str) -> tuple[dict[str, Any], list[float]]:
    """_child's run, with this process reading as an agent's session start does (the
    hook's read, on a read-only store) every quarter second while it runs: (its result,
    the reads' times)."""
    from recall_sqlite.cli.hook import _compose

    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(root), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_child_env(),
    )
    times: list[float] = []
    try:
        with open_store(root, root=root, read_only=True) as store:
            branch = context_of(store).branch or None
            _compose(store, branch, 3)  # (the modules a read loads, loaded before timing)
            while proc.poll() is None:
                start = time.perf_counter()
                _compose(store, branch, 3)
                times.append(time.perf_counter() - start)
                time.sleep(0.25)
    except BaseException:
        proc.kill()  # the import does not outlive a failed sampling
        proc.communicate()
        raise
    out, err = proc.communicate()
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, code, out, err)
    return _answer(out), times


def _session_starts(
    root: Path, during: list[float], lines: int, load: str, target: str
) -> dict[str, Any]:
    """The session-start reads taken while a load ran, against the same read afterwards at
    the same pace (one every quarter second, as _sampled takes them): a read after a pause
    is slower than one straight after another, so those (the row's `back_to_back`) are no
    floor for it."""
    from recall_sqlite.cli.hook import _compose

    paced: list[float] = []
    with open_store(root, root=root, read_only=True) as store:
        branch = context_of(store).branch or None
        back_to_back = median_time(lambda: _compose(store, branch, 3), repeat=21)
        for _ in range(41):
            time.sleep(0.25)
            start = time.perf_counter()
            _compose(store, branch, 3)
            paced.append(time.perf_counter() - start)
    during = sorted(during)
    p50 = statistics.median(during)
    return row(
        "legacy",
        f"session start (the hook's read) while {load} runs: p50 of {len(during)} reads",
        n=lines,
        ours=p50,
        limit=statistics.median(paced),
        limit_name="the same read after the import, at the same pace",
        target=target,
        ok=(p50 <= 0.001) if target else None,
        p95=during[int(0.95 * (len(during) - 1))],
        max=during[-1],
        back_to_back=back_to_back,
    )


def run(quick: bool) -> list[dict[str, Any]]:
    n = 5_000 if quick else 1_000_000
    repeat = 5 if quick else 3
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-legacy-") as tmp:
        root = Path(tmp) / "proj"
        nbytes = build(root, n)
        # The same buckets for the import with workers (before any store: a copy of a store
        # with its id would be a copied workspace).
        clean = Path(tmp) / "clean"
        shutil.copytree(root, clean)
        lines = parse_all(root)
        parse = median_time(lambda: parse_all(root), repeat=repeat, warmup=0)
        rows.append(
            row(
                "legacy", "parse limit: json.loads of every line", n=lines, ours=parse, bytes=nbytes
            )
        )

        ident = median_time(lambda: identify_all(root), repeat=1, warmup=0)
        rows.append(
            row(
                "legacy",
                "identity floor: json.loads + canonical json.dumps + sha256 of every line",
                n=lines,
                ours=ident,
                limit=parse,
                limit_name="json.loads parse",
            )
        )

        jobs = default_jobs()
        ident_all = median_time(lambda: identify_all_cores(root, jobs), repeat=1, warmup=0)
        assert identify_all_cores(root, jobs) == identify_all(root)
        rows.append(
            row(
                "legacy",
                "identity floor on every core: a spawn pool of the standard library's"
                " json.loads + canonical json.dumps + sha256",
                n=lines,
                ours=ident_all,
                limit=ident,
                limit_name="identity floor on one core",
                jobs=jobs,
                vs_parse=ident_all / parse,
            )
        )

        surveyed = survey([root])
        assert surveyed.lines_total == lines
        sv = median_time(lambda: survey([root]), repeat=repeat, warmup=0)
        rows.append(
            row(
                "legacy",
                "survey (writes nothing)",
                n=lines,
                ours=sv,
                limit=parse,
                limit_name="json.loads parse",
                target="<= 1.5x parse",
                ok=sv <= 1.5 * parse,
                duplicates=surveyed.duplicates,
                quarantined=surveyed.quarantined,
                rows_to_create=surveyed.rows_to_create,
            )
        )
        sv_child = _child(SURVEY_CHILD, root)
        rows.append(
            row(
                "legacy",
                "survey peak RSS",
                n=lines,
                ours=sv_child["peak_mb"],
                unit="MB",
                target="<= 300 MB",
                ok=sv_child["peak_mb"] <= 300,
            )
        )

        open_store(root, root=root).close()
        open_store(clean, root=clean).close()
        first = _child(CHILD, root, "kept", "1")
        assert first["lines_total"] == lines, first
        assert first["imported"] == surveyed.rows_to_create, (first, surveyed.rows_to_create)
        imp = first["seconds"]
        rows.append(
            row(
                "legacy",
                "import (empty store)",
                n=lines,
                ours=imp,
                limit=parse,
                limit_name="json.loads parse",
                target="<= 4x parse and <= 30 s",
                ok=imp <= 4 * parse and imp <= 30,
                imported=first["imported"],
                duplicates=first["duplicates"],
                quarantined=first["quarantined"],
                per_line_us=imp / lines * 1e6,
                jobs=1,
            )
        )
        par, during = _sampled(CHILD, clean, "kept", str(jobs))
        assert par["jobs"] == jobs and par["imported"] == first["imported"], (par, first)
        rows.append(_session_starts(clean, during, lines, "an import", "<= 1 ms (p50)"))
        rows.append(
            row(
                "legacy",
                "import with worker processes reading the lines (empty store)",
                n=lines,
                ours=par["seconds"],
                limit=imp,
                limit_name="import in one process",
                target="<= 4x parse and <= 30 s",
                ok=par["seconds"] <= 4 * parse and par["seconds"] <= 30,
                jobs=jobs,
                vs_parse=par["seconds"] / parse,
                vs_floor_every_core=par["seconds"] / ident_all,
                peak_mb=par["peak_mb"],
            )
        )
        shutil.rmtree(clean)
        rows.append(
            row(
                "legacy",
                "import peak RSS",
                n=lines,
                ours=first["peak_mb"],
                unit="MB",
                target="<= 300 MB",
                ok=first["peak_mb"] <= 300,
            )
        )
        again = _child(CHILD, root, "kept", "1")
        assert again["imported"] == 0 and again["unchanged_files"] == len(BUCKETS), again
        rows.append(
            row(
                "legacy",
                "re-import (unchanged files)",
                n=lines,
                ours=again["seconds"],
                limit=imp,
                limit_name="first import",
                target="<= 10% of first",
                ok=again["seconds"] <= 0.1 * imp,
            )
        )
        floor = _sql_floor(Path(tmp), root, CHUNK_LINES, defer=False)
        rows.append(floor)
        same = _same_work_floor(Path(tmp), root, CHUNK_LINES, defer=False)
        rows.append(same)
        whole = _whole_job_floor(Path(tmp), root, CHUNK_LINES, jobs)
        rows.append(whole)
        # How far each import is from them (issue 33's bar: <= 1.3x a floor by hand).
        for r in rows:
            if r["case"].startswith("import") and r["unit"] == "s" and r["n"] == lines:
                r["vs_sql_floor"] = r["ours"] / floor["ours"]
                r["vs_same_work_floor"] = r["ours"] / same["ours"]
                if r.get("jobs") == jobs:
                    r["vs_whole_job_floor"] = r["ours"] / whole["ours"]
        floor_deferred = _sql_floor(Path(tmp), root, CHUNK_LINES, defer=True)
        rows.append(floor_deferred)
        # The same import with the journal's head indexes built after the rows
        # (--defer-indexes): what it gains, and what a reader meanwhile pays.
        for p in (root / ".synapt" / "recall").glob("recall-sqlite.db*"):
            p.unlink()
        (root / ".synapt" / "recall" / "workspace.json").unlink()  # a new store, not a lost one
        open_store(root, root=root).close()
        deferred_run, slow = _sampled(CHILD, root, "deferred", "1")
        assert deferred_run["imported"] == first["imported"], (deferred_run, first)
        rows.append(
            row(
                "legacy",
                "import, head indexes built after the rows (--defer-indexes)",
                n=lines,
                ours=deferred_run["seconds"],
                limit=imp,
                limit_name="import (indexes kept current)",
                peak_mb=deferred_run["peak_mb"],
                vs_sql_floor=deferred_run["seconds"] / floor_deferred["ours"],
            )
        )
        rows.append(_session_starts(root, slow, lines, "an import with --defer-indexes", ""))
        rows.extend(_nested(Path(tmp) / "nested", 2_000 if quick else 100_000, repeat))
        rows.append(_walk_tree(Path(tmp) / "walk", 2_000 if quick else 100_000, repeat))
    return rows


def nested_corpus(base: Path, n: int) -> Path:
    """A plain git repository at base/repo whose `n` lines synapt 0.30.0 split over 20
    stores at several depths (its data root is the cwd in a plain repository)."""
    root = base / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    rng = random.Random(20)
    dirs = [root] + [root.joinpath(*[f"d{i}", f"s{i % 3}"][: 1 + i % 2]) for i in range(19)]
    files = []
    for d in dirs:
        p = d / ".synapt" / "recall" / "worktrees" / "repo" / "journal.jsonl"
        p.parent.mkdir(parents=True, exist_ok=True)
        files.append(open(p, "w", encoding="utf-8"))  # noqa: SIM115 - closed below
    try:
        for i in range(n):
            files[rng.randrange(len(files))].write(
                synapt_line(
                    timestamp=_iso(1_700_000_000 + i * 60),
                    session_id=f"s{i}",
                    branch="main",
                    focus=_s(rng, 9),
                    done=[_s(rng, 6)],
                    files_modified=[f"src/{i}.py"],
                )
                + "\n"
            )
    finally:
        for f in files:
            f.close()
    return root


def _nested(base: Path, n: int, repeat: int) -> list[dict[str, Any]]:
    """A plain git repository whose history synapt 0.30.0 split over 20 stores at several
    depths (its data root is the cwd in a plain repository): survey and import of the
    whole workspace against json.loads of the very same lines."""
    root = nested_corpus(base, n)
    files = sorted(root.rglob("journal.jsonl"))

    def parse() -> int:
        count = 0
        for f in files:
            with open(f, "rb") as fh:
                for line in fh:
                    json.loads(line)
                    count += 1
        return count

    clean = base / "clean"
    shutil.copytree(root, clean)
    lines = parse()
    limit = median_time(parse, repeat=repeat, warmup=0)
    sv = median_time(lambda: survey(root=root), repeat=repeat, warmup=0)
    surveyed = survey(root=root)
    assert surveyed.lines_total == lines and len(surveyed.buckets) == 20
    open_store(root, root=root).close()
    open_store(clean, root=clean).close()
    first = _child(CHILD, root, "kept", "1")
    assert first["imported"] == lines, first
    jobs = default_jobs()
    par = _child(CHILD, clean, "kept", str(jobs))
    assert par["imported"] == lines and par["jobs"] == jobs, par
    floor = _sql_floor(base, root, CHUNK_LINES, defer=False)
    floor["case"] += " (20 nested stores)"
    same = _same_work_floor(base, root, CHUNK_LINES, defer=False)
    same["case"] += " (20 nested stores)"
    whole = _whole_job_floor(base, root, CHUNK_LINES, jobs)
    whole["case"] += " (20 nested stores)"
    return [
        row("legacy", "parse limit: 20 nested stores", n=lines, ours=limit),
        floor,
        same,
        whole,
        row(
            "legacy",
            "survey of 20 nested stores (walk included)",
            n=lines,
            ours=sv,
            limit=limit,
            limit_name="json.loads parse",
            target="<= 1.5x parse",
            ok=sv <= 1.5 * limit,
        ),
        row(
            "legacy",
            "import of 20 nested stores (walk included)",
            n=lines,
            ours=first["seconds"],
            limit=limit,
            limit_name="json.loads parse",
            target="<= 4x parse",
            ok=first["seconds"] <= 4 * limit,
            jobs=1,
            vs_sql_floor=first["seconds"] / floor["ours"],
            vs_same_work_floor=first["seconds"] / same["ours"],
        ),
        row(
            "legacy",
            "import of 20 nested stores with worker processes reading the lines",
            n=lines,
            ours=par["seconds"],
            limit=first["seconds"],
            limit_name="the same import in one process",
            jobs=jobs,
            vs_parse=par["seconds"] / limit,
            vs_sql_floor=par["seconds"] / floor["ours"],
            vs_same_work_floor=par["seconds"] / same["ours"],
            vs_whole_job_floor=par["seconds"] / whole["ours"],
        ),
    ]


def _walk_tree(base: Path, n_files: int, repeat: int) -> dict[str, Any]:
    """The store walk over a source tree of `n_files` files (10 per directory, 3 levels),
    warm cache, with 5 nested stores in it."""
    from recall_sqlite.legacy.find import walk

    root = base / "repo"
    (root / ".git").mkdir(parents=True)
    made = 0
    i = 0
    while made < n_files:
        d = root / f"a{i // 100}" / f"b{i // 10 % 10}" / f"c{i % 10}"
        d.mkdir(parents=True, exist_ok=True)
        for j in range(10):
            (d / f"f{j}.py").write_bytes(b"")
        made += 10
        i += 1
    for k in range(5):
        p = root / f"a{k}" / ".synapt" / "recall" / "worktrees" / "repo" / "journal.jsonl"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("")
    found = walk(root)
    assert len(found.data_dirs) == 5
    t = median_time(lambda: walk(root), repeat=repeat, warmup=1)
    return row(
        "legacy",
        "discovery walk (warm)",
        n=made,
        ours=t,
        unit="s",
        target="<= 1 s at 100k files",
        ok=t <= 1.0,
        directories=found.dirs,
    )


def _floor_store(floor: Path, root: Path) -> Any:
    """A new store at `floor` for a floor by hand, with the store's connection settings
    (WAL, cache, secure_delete) and the import at `root`'s database attached as `src`."""
    (floor / ".grip").mkdir(parents=True)
    open_store(floor, root=floor).close()
    conn = apsw.Connection(str(floor / ".synapt" / "recall" / "recall-sqlite.db"))
    for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "cache_size=-65536"):
        conn.execute(f"PRAGMA {pragma}")
    conn.execute("PRAGMA secure_delete=ON")
    conn.execute("ATTACH ? AS src", (str(root / ".synapt" / "recall" / "recall-sqlite.db"),))
    return conn


def _floor_setup(conn: Any, defer: bool) -> None:
    """The import's own set-up rows, not timed (foreign keys off, as a shell); the head
    indexes dropped when they are built after the rows."""
    from recall_sqlite.journal import deferred

    with conn:
        conn.execute("DELETE FROM main.worktrees WHERE id NOT IN (SELECT id FROM src.worktrees)")
        conn.execute("INSERT OR REPLACE INTO main.worktrees SELECT * FROM src.worktrees")
        conn.execute("INSERT INTO main.import_sources SELECT * FROM src.import_sources")
        for name in deferred.DEFERRED if defer else ():
            conn.execute(f"DROP INDEX main.{name}")


def _sql_floor(tmp: Path, root: Path, chunk_lines: int, *, defer: bool) -> dict[str, Any]:
    """The import's SQL written by hand, nothing of ours: the rows the import stored at
    `root` (parsed, identified and given their heads already, none of it timed) copied into
    a new store's schema the way the import writes them: one transaction per chunk of lines
    (the journal rows those lines bring, their full-text index and the lines' provenance, by
    INSERT ... SELECT), the counts once; the head indexes kept current, or (`defer`, as
    --defer-indexes) dropped before and built after. The same connection settings as a
    store's (foreign keys, cache, secure_delete, WAL). Each chunk's rows carry the head
    flags they have once that chunk is committed, and the chunk demotes the stored heads
    it beats by one UPDATE per flag (both worked out beforehand, _chunk_heads): every
    commit leaves right heads for a reader, as the import's do."""
    from recall_sqlite.journal import deferred

    conn = _floor_store(tmp / ("sql-floor-deferred" if defer else "sql-floor"), root)
    cols = ", ".join(str(r[1]) for r in conn.execute("PRAGMA main.table_info(journal_entries)"))
    lines = [
        (int(s), int(n), int(q))
        for s, n, q in conn.execute(
            "SELECT source_id, line, entry_seq FROM src.entry_provenance ORDER BY source_id, line"
        )
    ]
    _floor_setup(conn, defer)
    tops, stored = [], 0
    for i in range(0, len(lines), chunk_lines):
        stored = max(stored, max(q for _, _, q in lines[i : i + chunk_lines]))
        tops.append(stored)
    demotes = _chunk_heads(conn, tops)
    # The rows with the flags of their own chunk's commit (heads.seq -> head_ws, head_wt).
    flagged = ", ".join(
        f"h.{c}" if c in ("head_ws", "head_wt") else f"e.{c}" for c in cols.split(", ")
    )
    conn.execute("PRAGMA foreign_keys=ON")
    t = time.perf_counter()
    stored = 0
    for n, i in enumerate(range(0, len(lines), chunk_lines)):
        part = lines[i : i + chunk_lines]
        top = tops[n]
        with conn:
            if top > stored:
                conn.execute("INSERT INTO journal_bulk VALUES (1)")
                for column, seqs in zip(("head_ws", "head_wt"), demotes[n], strict=True):
                    if seqs:
                        conn.execute(
                            f"UPDATE main.journal_entries SET {column} = 0"
                            " WHERE seq IN (SELECT value FROM json_each(?))",
                            (json.dumps(seqs),),
                        )
                conn.execute(
                    f"INSERT INTO main.journal_entries ({cols}) SELECT {flagged}"
                    " FROM src.journal_entries e JOIN temp.heads h ON h.seq = e.seq"
                    " WHERE e.seq > ? AND e.seq <= ? ORDER BY e.seq",
                    (stored, top),
                )
                conn.execute(
                    "INSERT INTO journal_fts (rowid, focus, done, decisions, next_steps,"
                    " files_modified) SELECT seq, focus, done, decisions, next_steps,"
                    " files_modified FROM journal_fts_content WHERE seq > ? AND seq <= ?",
                    (stored, top),
                )
                conn.execute("DELETE FROM journal_bulk")
                stored = top
            conn.execute(
                "INSERT INTO main.entry_provenance SELECT * FROM src.entry_provenance"
                " WHERE (source_id, line) BETWEEN (?, ?) AND (?, ?)",
                (*part[0][:2], *part[-1][:2]),
            )
    copy_counts(conn)
    with conn:
        for sql in deferred.statements().values() if defer else ():
            conn.execute(sql)
    seconds = time.perf_counter() - t
    assert_same_heads(conn)
    conn.close()
    return row(
        "legacy",
        "the import's SQL by hand: its rows pre-built, INSERT ... SELECT per chunk of lines"
        " (journal, full-text index, provenance), the stored heads each chunk beats demoted,"
        " head indexes " + ("built after" if defer else "kept current"),
        n=stored,
        ours=seconds,
        lines=len(lines),
    )


def _same_work_floor(tmp: Path, root: Path, chunk_lines: int, *, defer: bool) -> dict[str, Any]:
    """The import's work by hand-written SQL, nothing of ours, from parsed lines on: the
    rows the import stored at `root` (parsed and identified already, as workers on the
    other core hand them over; that reading is not timed) bound from Python tuples into a
    TEMP stage, each chunk's head flags computed by SQL (row_number() over synapt's dedup
    order, per session and per worktree and session, the chunk's rows with the stored
    heads of the sessions it touches), the stored heads it beats demoted, the rows moved
    into the journal, their full-text index, and the lines' provenance bound from Python:
    one transaction per chunk of lines, as _sql_floor's, with heads and values the import
    itself had to compute or bind."""
    from recall_sqlite.journal import deferred

    conn = _floor_store(tmp / ("same-work-deferred" if defer else "same-work"), root)
    lines = [
        (int(s), int(n), int(q), str(st))
        for s, n, q, st in conn.execute(
            "SELECT source_id, line, entry_seq, status FROM src.entry_provenance"
            " ORDER BY source_id, line"
        )
    ]
    _floor_setup(conn, defer)
    hand = HandWriter(conn)
    conn.execute("PRAGMA foreign_keys=ON")
    seconds, stored = 0.0, 0
    for chunk in _hand_chunks(conn, hand, lines, chunk_lines):
        t = time.perf_counter()
        _hand_chunk(conn, hand, *chunk)
        seconds += time.perf_counter() - t
        stored = chunk[3]
    t = time.perf_counter()
    copy_counts(conn)
    with conn:
        for sql in deferred.statements().values() if defer else ():
            conn.execute(sql)
    seconds += time.perf_counter() - t
    assert_same_heads(conn)
    conn.close()
    return row(
        "legacy",
        "the import's work by hand from parsed lines: rows and provenance bound from Python,"
        " heads by SQL (row_number() over the dedup order) per chunk of lines, stored heads"
        " demoted, full-text index, head indexes " + ("built after" if defer else "kept current"),
        n=stored,
        ours=seconds,
        lines=len(lines),
    )


def _hand_chunks(conn: Any, hand: HandWriter, lines: list[Any], chunk_lines: int) -> Any:
    """The floors' chunks of `lines` (source, line, seq, status in the import's order), each
    with the journal rows it brings from the import's store: (its lines, its rows, the
    highest seq written before it, the highest after it)."""
    stored = 0
    for i in range(0, len(lines), chunk_lines):
        part = lines[i : i + chunk_lines]
        top = max(stored, max(q for _, _, q, _ in part))
        rows = conn.execute(
            f"SELECT {', '.join(hand.plain)} FROM src.journal_entries"
            " WHERE seq > ? AND seq <= ? ORDER BY seq",
            (stored, top),
        ).fetchall()
        yield part, rows, stored, top
        stored = top


def _hand_chunk(
    conn: Any, hand: HandWriter, part: list[Any], rows: list[Any], before: int, top: int
) -> None:
    """One chunk written by hand, in one transaction: its new rows (the head trigger
    stood aside, as the import's bulk path does) and its lines' provenance."""
    with conn:
        if rows:
            conn.execute("INSERT INTO journal_bulk VALUES (1)")
            hand.write(rows, before, top)
            conn.execute("DELETE FROM journal_bulk")
        conn.executemany(
            "INSERT INTO main.entry_provenance (source_id, line, entry_seq, status)"
            " VALUES (?, ?, ?, ?)",
            part,
        )


def _whole_job_floor(tmp: Path, root: Path, chunk_lines: int, jobs: int) -> dict[str, Any]:
    """The whole import by hand, nothing of ours, on the same cores: the files found by
    rglob, read a MiB at a time and hashed (sha256), their lines handed in pieces to a
    'spawn' pool of `jobs` processes of the standard library (its start timed, as the
    import's is) that parse each line, put it in canonical form and hash it, and give back
    its id and values in order, about as many lines in flight as the import holds; as each
    chunk's worth of lines is answered, the chunk is written as _same_work_floor writes it
    (its rows pre-built from the import's store, not timed). The writer, the pool's
    threads and the workers share the cores, as the import's do: _same_work_floor's
    writer has them to itself."""
    import multiprocessing

    conn = _floor_store(tmp / "whole-job", root)
    lines = [
        (int(s), int(n), int(q), str(st))
        for s, n, q, st in conn.execute(
            "SELECT source_id, line, entry_seq, status FROM src.entry_provenance"
            " ORDER BY source_id, line"
        )
    ]
    ((total,),) = conn.execute("SELECT sum(lines) FROM src.import_sources").fetchall()
    # The import's order of its sources, to read the files found in it.
    order = {
        root / str(path): n
        for n, (path,) in enumerate(
            conn.execute("SELECT path FROM src.import_sources ORDER BY id").fetchall()
        )
    }
    _floor_setup(conn, False)
    hand = HandWriter(conn)
    conn.execute("PRAGMA foreign_keys=ON")
    # (Read before the timing, as _same_work_floor reads each chunk's before its own.)
    chunks = list(_hand_chunks(conn, hand, lines, chunk_lines))
    stored = chunks[-1][3] if chunks else 0

    t = time.perf_counter()
    paths = sorted(root.rglob("journal.jsonl"), key=order.__getitem__)
    counts: list[int] = []
    answered = written = 0

    def take(answers: list[Any]) -> None:
        nonlocal answered, written
        answered += len(answers)
        while written < len(chunks) and answered >= (written + 1) * chunk_lines:
            _hand_chunk(conn, hand, *chunks[written])
            written += 1

    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        # Pieces in flight bounded as the import's blocks are (about its AHEAD_BLOCKS MiB):
        # the workers parse ahead while a chunk is written, and memory stays flat.
        flight: deque[Any] = deque()
        for piece in _pieces(paths, counts):
            flight.append(pool.apply_async(identify_lines, (piece,)))
            if len(flight) >= 2 * AHEAD_BLOCKS:
                take(flight.popleft().get())
        while flight:
            take(flight.popleft().get())
    for chunk in chunks[written:]:
        _hand_chunk(conn, hand, *chunk)
    copy_counts(conn)
    seconds = time.perf_counter() - t
    # (Every line of the files, the ones the import quarantined too: those are not in
    # the provenance the chunks are cut from.)
    assert answered == sum(counts) == total, (answered, sum(counts), total)
    assert_same_heads(conn)
    conn.close()
    return row(
        "legacy",
        "the whole import by hand: files read and hashed, lines parsed, put in canonical form"
        " and hashed by a spawn pool of the standard library, each chunk written as the"
        " import's work by hand as its lines are answered, on the same cores",
        n=stored,
        ours=seconds,
        lines=len(lines),
        jobs=jobs,
    )


def _chunk_heads(conn: Any, tops: list[int]) -> list[tuple[list[int], list[int]]]:
    """For the floor, worked out before it is timed: the head flags each row of
    src.journal_entries has once its own chunk (the seqs up to `tops[n]`) is committed, into
    temp.heads, and the stored heads each chunk demotes (head_ws seqs, head_wt seqs): the
    dedup order (journal/order.py) replayed chunk by chunk."""
    from recall_sqlite.journal.order import py_key

    best: dict[tuple[Any, ...], tuple[tuple[Any, ...], int]] = {}
    flags: dict[int, list[int]] = {}
    demotes: list[tuple[list[int], list[int]]] = []
    rows = conn.execute(
        "SELECT seq, session_id, worktree_id, auto, ts_us, rich, id FROM src.journal_entries"
        " ORDER BY seq"
    )
    pending = next(rows, None)
    stored = 0
    for top in tops:
        demoted: tuple[list[int], list[int]] = ([], [])
        while pending is not None and pending[0] <= top:
            seq, sid, wt, auto, ts, rich, rid = pending
            flags[seq] = [1, 1]
            if sid != "":
                key = py_key(auto, ts, rich, rid)
                for phase, scope in ((0, (sid,)), (1, (wt, sid))):
                    held = best.get(scope)
                    if held is not None and held[0] < key:
                        flags[seq][phase] = 0
                        continue
                    if held is not None:
                        if held[1] <= stored:
                            demoted[phase].append(held[1])
                        else:
                            flags[held[1]][phase] = 0
                    best[scope] = (key, seq)
            pending = next(rows, None)
        demotes.append(demoted)
        stored = top
    conn.execute("CREATE TEMP TABLE heads (seq INTEGER PRIMARY KEY, head_ws, head_wt)")
    with conn:
        conn.executemany(
            "INSERT INTO temp.heads VALUES (?, ?, ?)", [(q, f[0], f[1]) for q, f in flags.items()]
        )
    return demotes


if __name__ == "__main__":
    print(json.dumps(run("--quick" in sys.argv), indent=2))
