"""Run every benchmark suite side by side in one process and report medians and ratios.

    python bench/run.py                  # full sizes (tens of minutes on 2 cores)
    python bench/run.py --quick          # tiny sizes: a smoke run
    python bench/run.py --only journal   # one suite: journal, summaries, vectors, legacy,
                                         # synapt, search, integrity, sync, agents

Writes bench/results.json (or --out PATH) and prints a markdown table for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

SUITES = {
    "journal": "bench_journal",
    "summaries": "bench_summaries_cursors",
    "vectors": "bench_vectors",
    "legacy": "bench_legacy",
    "synapt": "bench_synapt",
    "search": "bench_search",
    "integrity": "bench_integrity",
    "sync": "bench_sync",
    "agents": "bench_agents",
}


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return ""
    if unit == "ratio":
        return f"{value:.2f}"
    if unit != "s":
        return f"{value:,.0f} {unit}"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.2f} ms"
    return f"{value * 1e6:.1f} µs"


def markdown(rows: list[dict[str, Any]]) -> str:
    out = [
        "| suite | case | n | recall-sqlite | limit | ours / limit | peer | peer / ours"
        " | target | met |",
        "|---|---|---:|---:|---|---:|---|---:|---|:---:|",
    ]
    for r in rows:
        unit = r.get("unit", "s")
        limit = f"{_fmt(r['limit'], unit)} ({r['limit_name']})" if r.get("limit") else ""
        peer = f"{_fmt(r['peer'], unit)} ({r['peer_name']})" if r.get("peer") else ""
        ratio = f"{r['ratio_vs_limit']:.2f}x" if r.get("ratio_vs_limit") else ""
        speed = f"{r['speedup_vs_peer']:,.0f}x" if r.get("speedup_vs_peer") else ""
        if r.get("speedup_vs_peer") and r["speedup_vs_peer"] < 10:
            speed = f"{r['speedup_vs_peer']:.2f}x"
        met = {True: "yes", False: "**no**", None: ""}[r.get("ok")]
        n = f"{r['n']:,}" if isinstance(r.get("n"), int) else ""
        out.append(
            f"| {r['suite']} | {r['case']} | {n} | {_fmt(r['ours'], unit)} | {limit}"
            f" | {ratio} | {peer} | {speed} | {r.get('target', '')} | {met} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", action="append", choices=sorted(SUITES))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    timings: dict[str, float] = {}
    for name in args.only or list(SUITES):
        module = importlib.import_module(SUITES[name])
        start = time.perf_counter()
        rows += module.run(args.quick)
        timings[name] = time.perf_counter() - start
        print(f"[bench] {name} done in {timings[name]:.0f} s", file=sys.stderr)
    report = {
        "quick": args.quick,
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "processor": platform.machine(),
        },
        "suite_seconds": timings,
        "rows": rows,
    }
    out = args.out or HERE / ("results-quick.json" if args.quick else "results.json")
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
