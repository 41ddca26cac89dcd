"""`recall-sqlite vectors stats|search`: what the vector table holds, and the nearest entries
to an entry's own vector. numpy is loaded inside the handlers only (by store.vectors), so
building the parser for any other command never imports it."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from . import _common as cli

if TYPE_CHECKING:
    from ..store import Store
    from ..vectors.owners import OwnerKind


def _model(store: Store, given: str | None) -> str:
    """--model, or the workspace's only model; with several, naming one is required."""
    if given is not None:
        return given
    models = store.vectors.models()
    if len(models) == 1:
        return next(iter(models))
    if not models:
        raise cli.UsageError("this workspace has no vectors yet")
    raise cli.UsageError(f"several models; pick one with --model ({', '.join(models)})")


def cmd_stats(args: argparse.Namespace) -> int:
    from ..store import context_of
    from ..vectors.stats import vector_stats  # SQL only: stats work without numpy

    store = cli.open_for_read(args)
    if store is None:
        return cli.no_store(args, models=[])
    with store:
        stats = vector_stats(context_of(store))
    data = stats.to_dict()
    if not stats.models:
        cli.emit(args, data, f"No vectors in workspace {stats.workspace_id}.")
        return 0
    header = (
        f"{'model':<32} {'dim':>5} {'vectors':>9} {'entries':>9} {'summaries':>9}"
        f" {'hidden':>7} {'orphans':>7} {'wrong dim':>9}"
    )
    lines = [f"Vectors in workspace {stats.workspace_id}: {stats.total}", header]
    for m in stats.models:
        lines.append(
            f"{cli.clean(m.model):<32} {m.dim:>5} {m.vectors:>9} {m.entries:>9} {m.summaries:>9}"
            f" {m.hidden:>7} {m.orphans:>7} {m.wrong_dim:>9}"
        )
    if any(m.hidden for m in stats.models):
        lines.append(
            "hidden: vectors of versions reads no longer show (older versions of a "
            "session, superseded summaries); searched only with hidden versions on"
        )
    if any(m.orphans or m.wrong_dim for m in stats.models):
        lines.append(
            "orphans / wrong dim: rows written around the store's triggers; never searched"
        )
    cli.emit(args, data, "\n".join(lines))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from ..vectors import Owner

    owner = Owner.entry(args.like)
    kinds: tuple[OwnerKind, ...] = ("entry", "summary") if args.summaries else ("entry",)
    store = cli.open_for_read(args)
    if store is None:
        return cli.no_store(args, hits=[])
    with store:
        model = _model(store, args.model)
        result = store.vectors.search_like(
            owner,
            args.k,
            model=model,
            branch=args.branch,
            kinds=kinds,
            all_worktrees=args.all_worktrees,
            include_hidden=args.hidden,
        )
        hits: list[dict[str, Any]] = []
        for h in result.hits:
            hit = h.to_dict()
            entry = store.journal.get(str(h.owner.id)) if h.owner.kind == "entry" else None
            hit["timestamp"] = entry.timestamp if entry else None
            hit["focus"] = entry.focus if entry else None
            hits.append(hit)
    scope, elsewhere = result.scope.to_dict(), result.elsewhere.to_dict()
    data = {
        "like": owner.id,
        "hits": hits,
        "scope": scope,
        "searched": result.searched,
        "elsewhere": elsewhere,
    }
    lines = [f"Nearest to entry {owner.id} ({result.scope.describe()}):"]
    for rank, hit in enumerate(hits, 1):
        o = hit["owner"]
        if o["kind"] == "entry":
            where = f"[{hit['worktree']} @ {hit['branch'] or '(none)'}]"
            lines.append(
                f"{rank:>3}. {hit['score']:.4f}  entry {o['id'][:12]}  {cli.clean(where)}"
                f"  {cli.clean(hit['timestamp'])}  {cli.clean(hit['focus'] or '')}".rstrip()
            )
        else:
            lines.append(
                f"{rank:>3}. {hit['score']:.4f}  summary #{o['id']}"
                f"  [{hit['branch'] or 'workspace-wide'}]"
            )
    if not hits:
        lines.append("  (nothing else in scope)")
    lines.append(cli.describe_elsewhere(scope, result.searched, len(hits), elsewhere))
    cli.emit(args, data, "\n".join(lines))
    return 0


def register(subparsers: Any, json_parent: argparse.ArgumentParser) -> None:
    vectors = subparsers.add_parser("vectors", help="the local vector table")
    vsub = vectors.add_subparsers(dest="vectors_command", metavar="ACTION")
    vsub.required = True

    stats = vsub.add_parser(
        "stats",
        parents=[json_parent],
        help="vectors per model and dimension; hidden and orphan rows",
    )
    stats.set_defaults(func=cmd_stats)

    search = vsub.add_parser(
        "search", parents=[json_parent], help="the entries nearest to an entry's own vector"
    )
    search.add_argument(
        "--like", required=True, metavar="ENTRY_ID", help="hex id of an entry that has a vector"
    )
    search.add_argument("-k", type=cli.positive_int, default=10, help="how many (default 10)")
    search.add_argument("--model", help="default: the workspace's only model")
    search.add_argument("--branch", help="only this branch (default: every branch)")
    search.add_argument(
        "--all-worktrees",
        action="store_true",
        help="every worktree of the workspace (default: this one)",
    )
    search.add_argument("--summaries", action="store_true", help="summaries too")
    search.add_argument(
        "--hidden",
        action="store_true",
        help="versions reads hide too (older versions, superseded summaries)",
    )
    search.set_defaults(func=cmd_search)
