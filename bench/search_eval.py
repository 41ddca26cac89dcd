"""Which fusion for hybrid search: text only, vectors only, reciprocal-rank fusion and
min-max CombSUM, on the labelled set bench/search_labelled.json.

    python bench/search_eval.py            # prints a markdown table, writes nothing

The vectors are synthetic: per topic a fixed random direction, each entry and query the
mean of its topics' directions plus Gaussian noise (averaged over several noise seeds). So
the figures compare fusions under one model of an embedder that knows topics and not
words; they are not a measure of any real embedding model.
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from recall_sqlite import open_store  # noqa: E402

DIM = 32
NOISE = 0.8
SEEDS = 10
K = 5


def _vectors(items: list[dict[str, Any]], topics: dict[str, Any], rng: Any) -> Any:
    import numpy as np

    out = []
    for it in items:
        v = np.mean([topics[t] for t in it["topics"]], axis=0)
        out.append(v + rng.normal(scale=NOISE / math.sqrt(DIM), size=DIM) * math.sqrt(DIM))
    return np.array(out)


def _metrics(ranked: list[str], relevant: list[str]) -> tuple[float, float, float]:
    rel = set(relevant)
    rr = next((1.0 / i for i, k in enumerate(ranked, 1) if k in rel), 0.0)
    dcg = sum(1.0 / math.log2(i + 1) for i, k in enumerate(ranked[:K], 1) if k in rel)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(K, len(rel)) + 1))
    recall = len(rel & set(ranked[:K])) / len(rel)
    return rr, dcg / ideal, recall


def evaluate() -> dict[str, tuple[float, float, float]]:
    import numpy as np

    from recall_sqlite.vectors import Owner

    data = json.loads((HERE / "search_labelled.json").read_text())
    entries, queries = data["entries"], data["queries"]
    names = sorted({t for e in entries for t in e["topics"]})
    sums: dict[str, list[float]] = {}
    for seed in range(SEEDS):
        rng = np.random.default_rng(seed)
        topics = {t: rng.normal(size=DIM) for t in names}
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "proj"
            (root / ".grip").mkdir(parents=True)
            with open_store(root) as s:
                key_of: dict[str, str] = {}
                for i, e in enumerate(entries):
                    fields = {k: v for k, v in e.items() if k not in ("key", "topics")}
                    got = s.journal.append(
                        {
                            "timestamp": f"2026-01-01T00:{i:02d}:00Z",
                            "session_id": e["key"],
                            **fields,
                        }
                    )
                    key_of[got.id] = e["key"]
                s.vectors.put_many(
                    [Owner.entry(i) for i in key_of],
                    _vectors(entries, topics, rng),
                    model="synthetic",
                )
                qvecs = _vectors(queries, topics, rng)
                for q, qv in zip(queries, qvecs, strict=True):
                    runs: dict[str, list[str]] = {}
                    text = s.journal.search(q["text"], 10)
                    runs["text only"] = [key_of[e.id or ""] for e in text.entries]
                    vec = s.vectors.search(qv, 10, model="synthetic", kinds="entry")
                    runs["vectors only"] = [key_of[str(h.owner.id)] for h in vec.hits]
                    for fusion in ("rrf", "combsum"):
                        r = s.journal.search(
                            q["text"], 10, vector=qv, model="synthetic", fusion=fusion
                        )  # type: ignore[arg-type]
                        runs[f"hybrid {fusion}"] = [key_of[e.id or ""] for e in r.entries]
                    for name, ranked in runs.items():
                        m = _metrics(ranked, q["relevant"])
                        acc = sums.setdefault(name, [0.0, 0.0, 0.0])
                        for j in range(3):
                            acc[j] += m[j]
    count = SEEDS * len(queries)
    return {name: (a[0] / count, a[1] / count, a[2] / count) for name, a in sums.items()}


def main() -> None:
    results = evaluate()
    print(f"| ranking | MRR | nDCG@{K} | recall@{K} |")
    print("|---|---:|---:|---:|")
    for name, (mrr, ndcg, rec) in results.items():
        print(f"| {name} | {mrr:.3f} | {ndcg:.3f} | {rec:.3f} |")


if __name__ == "__main__":
    main()
