"""`recall-sqlite sync ...`: more than one machine, on Litestream (recall_sqlite/sync/).

sync init --url URL [--key K [--commit-key]]   join this repository's replicas
sync run                                       replicate and pull, in the foreground
sync pull [--full] [--machine M]               merge the other machines now
sync status                                    this machine and every peer
sync restore --url URL [--force] [--retire M]  bring this machine back from a replica
sync peek MACHINE [-n N]                       a peer's newest entries, read-only
sync verify                                    has every peer met this store?
sync retire MACHINE [--force]                  a machine gone for good: pulled, deleted

Each is one call of `store.sync` (recall_sqlite/sync/sync.py), or `restore_store`.
"""

from __future__ import annotations

import argparse
import sys

from ._common import emit, open_for_read, open_from_args, positive_int

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..sync.pull import PeerPull
    from ..sync.retire import Retired


def _set_up(args: argparse.Namespace) -> None:
    from ..paths.resolve import resolve
    from ..store import resolve_db_path
    from ..sync.sync import require_set_up

    require_set_up(resolve_db_path(resolve(args.cwd).root, args.db))


def _seconds(text: str) -> float:
    try:
        value = float(text.rstrip("s"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("at least 1 second")
    return value


def _duration(text: str) -> str:
    import re

    if not re.fullmatch(r"\d+(ms|s|m|h)", text):
        raise argparse.ArgumentTypeError(f"a duration like 30m or 1h, got {text!r}")
    return text


# -- init ---------------------------------------------------------------------------------


def _elsewhere_lines(
    found: tuple[tuple[str, str, tuple[str, ...]], ...], key: str, url: str
) -> list[str]:
    """Machines of this repository under another of its keys, and the init that joins them."""
    import shlex

    return [
        f"{', '.join(ms)} replicate this repository under the key {k!r} ({how}), which"
        f" never meets {key!r}: to join them, run"
        f" `recall-sqlite sync init --url {shlex.quote(url)} --key {shlex.quote(k)}` here"
        for k, how, ms in found
    ]


def cmd_init(args: argparse.Namespace) -> int:
    with open_from_args(args) as store:
        joined = store.sync.init(
            args.url,
            key=args.key,
            commit_key=args.commit_key,
            pull_every_s=args.pull_every,
            retention=args.retention,
        )
    others = ", ".join(joined.peers) if joined.peers else "none yet"
    text = (
        f"Sync set up for {store.workspace.root}:\n"
        f"  replicas   {joined.url}\n"
        f"  sync key   {joined.key}  (from {joined.key_source})\n"
        f"  machine    {joined.machine}\n"
        f"  peers      {others}\n"
        f"  engine     Litestream {joined.litestream}\n"
        + "".join(
            f"  elsewhere  {x}\n" for x in _elsewhere_lines(joined.elsewhere, joined.key, args.url)
        )
        + "Next: keep `recall-sqlite sync run` running (in a terminal, or under systemd or "
        "launchd): it replicates this store and pulls another machine as soon as its replica "
        f"moves (and every {args.pull_every:g} s)."
    )
    emit(args, joined.to_dict(), text)
    return 0


# -- run ----------------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    import signal

    from ..sync.run import StopFlag

    _set_up(args)
    with open_from_args(args) as store:

        def log(message: str) -> None:
            from ..timestamps import utc_now_iso

            sys.stderr.write(f"{utc_now_iso()[:19]}Z sync: {message}\n")
            sys.stderr.flush()

        def on_pull(pulled: list[PeerPull]) -> None:
            for p in pulled:
                if p.status == "merged" and p.report is not None and p.report.changed:
                    log(f"pulled {_machine(p)}: {_arrived(p.report.to_dict())}")
                elif p.status == "failed":
                    log(f"could not pull {_machine(p)}: {p.error}")

        flag = StopFlag()

        def stop(signum: int, _frame: Any) -> None:
            # Only the flag: the loop says why it stops (see StopFlag).
            flag.set(signal.Signals(signum).name)

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        code: int = store.sync.run(
            stop=flag, pull_every_s=args.pull_every, on_pull=on_pull, log=log
        )
        log("stopped")
        return code


# -- pull ---------------------------------------------------------------------------------


def _machine(p: PeerPull) -> str:
    return f"{p.machine} ({p.host})" if p.host else p.machine


def _arrived(r: dict[str, Any]) -> str:
    parts = [
        f"{r['entries']} entry version(s)",
        f"{r['forgotten']} forgotten here" if r["forgotten"] else "",
        f"{r['copies_removed']} copy(ies) removed from synapt's files"
        if r.get("copies_removed")
        else "",
        f"{r['copies_left']} copy(ies) left in synapt's files (lines the store did not"
        " write, or files it could not rewrite: `journal forget ID` here removes them)"
        if r.get("copies_left")
        else "",
        f"{r['moved']} moved to the smaller worktree key" if r["moved"] else "",
        f"{r['summaries']} summary(ies)" if r["summaries"] else "",
        f"{r['summaries_removed']} summary(ies) removed" if r["summaries_removed"] else "",
        f"{r['vectors']} vector(s)" if r["vectors"] else "",
        f"{r['vectors_deleted']} vector(s) deleted" if r["vectors_deleted"] else "",
        f"{r['vector_conflicts']} vector(s) of a model with another dimension skipped"
        if r["vector_conflicts"]
        else "",
        f"{r['summaries_unproven']} summary(ies) kept unproven (a source forgotten there)"
        if r["summaries_unproven"]
        else "",
    ]
    refused = [
        f"{r[name]} {kind}"
        for name, kind in (
            ("rejected", "entry version(s)"),
            ("rejected_summaries", "summary(ies)"),
            ("rejected_vectors", "vector(s)"),
            ("rejected_tombstones", "tombstone(s)"),
        )
        if r[name]
    ]
    if refused:
        parts.append(f"REFUSED {', '.join(refused)} (not what their ids prove, or invalid)")
    for asked in r["forgotten_by"]:
        parts.append(f"machine {asked['machine']} forgot {_forgot(asked)}")
    return ", ".join(p for p in parts if p)


def _forgot(asked: dict[str, Any]) -> str:
    """'3 entries, 1 summary' of one machine's removals."""
    parts = [
        f"{asked['entries']} entries" if asked["entries"] else "",
        f"{asked['summaries']} summary(ies)" if asked["summaries"] else "",
        f"{asked['vectors']} vector(s)" if asked["vectors"] else "",
    ]
    return ", ".join(p for p in parts if p)


def cmd_pull(args: argparse.Namespace) -> int:
    _set_up(args)
    with open_from_args(args) as store:
        report = store.sync.pull(full=args.full, machine=args.machine)
    lines = []
    if not report.peers:
        lines.append(
            "No other machine replicates under this clone's sync key: nothing to pull."
            if report.elsewhere
            else "No other machine has replicated this repository yet: nothing to pull."
        )
        lines += _elsewhere_lines(report.elsewhere, report.key, report.url)
    for p in report.peers:
        if p.status == "merged" and p.report is not None:
            lines.append(f"{_machine(p)}: merged: {_arrived(p.report.to_dict())}")
        elif p.status == "unchanged":
            lines.append(f"{_machine(p)}: unchanged since the last pull")
        elif p.status == "empty":
            lines.append(f"{_machine(p)}: no replica yet")
        else:
            lines.append(f"{_machine(p)}: FAILED: {p.error}")
    emit(args, report.to_dict(), "\n".join(lines))
    if report.failed:
        sys.stderr.write(f"recall-sqlite: {len(report.failed)} machine(s) could not be pulled\n")
        return 1
    return 0


# -- status -------------------------------------------------------------------------------


def cmd_status(args: argparse.Namespace) -> int:
    from ..errors import NoStoreError

    _set_up(args)
    store = open_for_read(args)
    if store is None:
        raise NoStoreError(
            "sync is set up here but the store is gone: `recall-sqlite sync restore --url URL`"
        )
    with store:
        report = store.sync.status(count=not args.no_count)
    run = f"live (pid {report.run_pid})" if report.running else "NOT RUNNING"
    if report.orphans_stopped:
        pids = ", ".join(str(p) for p in report.orphans_stopped)
        run += (
            f" (stopped Litestream pid {pids}: a `sync run` that died had left it replicating"
            " this store)"
        )
    for why in report.orphans_left:
        run += f"; {why}"
    lines = [
        f"replicas     {report.url}",
        f"sync key     {report.key}",
        f"machine      {report.machine}",
        f"sync run     {run}",
        "replica      "
        + (
            f"transaction {report.position:#x}, written {report.written_at}"
            if report.position is not None
            else "none yet"
        ),
        f"a crash now  loses {report.loss_window}",
        f"peers        {len(report.peers) or 'none yet'}",
    ]
    for p in report.peers:
        state_text = (
            "live" if p.live else "LOOKS DEAD" if p.condition == "silent" else "not running"
        )
        if p.position is None:
            where = "no replica yet"
        elif not p.behind:
            where = f"pulled up to {p.position:#x} ({p.pulled_at})"
        else:
            ahead = f"{p.ahead} entry version(s)" if p.ahead is not None else "changes"
            where = f"{ahead} not yet pulled (replica at {p.position:#x}, {p.written_at})"
        lines.append(f"  {p.machine} {p.host or ''}  [{state_text}]  {where}")
        if p.condition == "silent":
            lines.append(
                "    its `sync run` stopped without a clean exit; if it is gone for good,"
                f" `recall-sqlite sync retire {p.machine}` pulls what it holds and deletes its"
                " replica"
            )
        if p.error:
            lines.append(f"    ! {p.error}")
    lines += [
        f"elsewhere    {x}" for x in _elsewhere_lines(report.elsewhere, report.key, report.url)
    ]
    for machine, e, s, v in report.forgotten_by:
        who = f"{machine} (this machine)" if machine == report.machine else machine
        asked = {"entries": e, "summaries": s, "vectors": v}
        lines.append(f"forgotten    by {who}: {_forgot(asked)}")
    emit(args, report.to_dict(), "\n".join(lines))
    return 0


# -- restore ------------------------------------------------------------------------------


def cmd_restore(args: argparse.Namespace) -> int:
    from ..store import restore_store

    report = restore_store(
        args.cwd, url=args.url, key=args.key, force=args.force, db_path=args.db, retire=args.retire
    )
    done = report.restored
    text = (
        f"Restored {report.db_path} from machine {done.machine}"
        + (f" ({done.host})" if done.host else "")
        + f", replica written {done.written_at}: {done.entries} entry version(s),"
        f" workspace {done.workspace_id}.\n"
        + (f"The store that was here is now {done.moved_aside}.\n" if done.moved_aside else "")
        + f"Pulled {len(report.pulled.peers)} other machine(s):"
        f" {report.pulled.entries} more entry version(s).\n"
        + f"doctor: {'ok' if report.doctor_ok else 'PROBLEMS (run recall-sqlite doctor)'}\n"
        + f"This machine is {done.new_machine}. Next: keep `recall-sqlite sync run` running."
    )
    if report.retired is not None:
        text += "\n" + "\n".join(retired_lines(report.retired))
    for machine, host, here in report.looks_dead:
        text += (
            f"\nmachine {machine} ({host or 'host unknown'}) looks dead (its `sync run` stopped"
            " without a clean exit)"
            + (
                ", and ran on this host: if this machine replaces it"
                if here
                else "; if it is gone for good"
            )
            + f", `recall-sqlite sync retire {machine}` pulls what it holds and deletes its"
            " replica (forgotten text included)"
        )
    emit(args, report.to_dict(), text)
    return 0 if report.doctor_ok else 1


# -- peek ---------------------------------------------------------------------------------


def cmd_peek(args: argparse.Namespace) -> int:
    with open_from_args(args, read_only=True) as store:
        answer = store.sync.peek(args.machine, args.n)
    fresh = f", replica transaction {answer.txid:#x} ({answer.replica_time})" if answer.txid else ""
    lines = [f"machine {answer.machine}: {answer.total} entries{fresh}; read-only, nothing merged"]
    for e in answer.entries:
        lines.append(f"  {e['timestamp']}  [{e['worktree']}] {e['focus'] or '(no focus)'}")
    emit(args, answer.to_dict(), "\n".join(lines))
    return 0


# -- verify -------------------------------------------------------------------------------


def cmd_verify(args: argparse.Namespace) -> int:
    _set_up(args)
    with open_from_args(args) as store:
        report = store.sync.verify()
    lines = [
        f"machine {report.machine}: {len(report.peers)} peer(s)"
        if report.peers
        else f"machine {report.machine}: no other machine has replicated this repository yet"
    ]
    for p in report.peers:
        if p.error:
            lines.append(f"  {p.machine}: could not be read: {p.error}")
        elif p.met:
            lines.append(f"  {p.machine}: met (both hold the same entry versions)")
        else:
            lines.append(
                f"  {p.machine}: {p.missing_here} entry version(s) not pulled here,"
                f" {p.missing_there} not yet pulled there"
            )
    emit(args, report.to_dict(), "\n".join(lines))
    return 0 if report.ok else 1


# -- retire -------------------------------------------------------------------------------


def retired_lines(done: Retired) -> list[str]:
    """What a retirement did, as `sync retire` (and `sync restore --retire`) print it."""
    who = f"machine {done.machine}" + (f" ({done.host})" if done.host else "")
    pulled = done.pulled
    if pulled is None or pulled.status == "empty":
        merged = "its replica held no backup: nothing to pull"
    elif pulled.status == "failed":
        merged = f"its replica could not be pulled: {pulled.error}"
    elif pulled.report is not None:
        merged = f"pulled first: {_arrived(pulled.report.to_dict())}"
    else:
        merged = "pulled first: nothing it held was new here"
    lines = [
        f"Retired {who} (its claim: {done.condition}); {merged}.",
        "Its replica was deleted from the location; this machine forgot it (the others do"
        " at their next pull)."
        if done.deleted
        else "Its replica could NOT be deleted whole from the location.",
    ]
    return lines + [f"note: {n}" for n in done.notes]


def cmd_retire(args: argparse.Namespace) -> int:
    _set_up(args)
    with open_from_args(args) as store:
        done = store.sync.retire(args.machine, force=args.force)
    emit(args, done.to_dict(), "\n".join(retired_lines(done)))
    return 0 if done.deleted else 1


def register(sub: Any, jp: argparse.ArgumentParser) -> None:
    sync = sub.add_parser(
        "sync",
        help="more than one machine: replicate with Litestream, merge the others",
        description="Every machine replicates its own store (Litestream) to URL/KEY/MACHINE "
        "and merges the others' replicas into it: the same answers on every machine.",
    )
    ssub = sync.add_subparsers(dest="sync_command", required=True)
    p = ssub.add_parser("init", parents=[jp], help="join this repository's replicas")
    p.add_argument(
        "--url", required=True, help="a path, s3://BUCKET/PREFIX?endpoint=..., or sftp://HOST/PATH"
    )
    p.add_argument("--key", help="the sync key (default: the origin remote, else the root commit)")
    p.add_argument(
        "--commit-key",
        action="store_true",
        help="keep --key in .recall-sqlite-sync (commit it) instead of the clone's git config",
    )
    p.add_argument(
        "--pull-every",
        type=_seconds,
        default=30.0,
        help="seconds between pulls when no peer's replica moved (default 30)",
    )
    p.add_argument(
        "--retention",
        type=_duration,
        default="1h",
        help="replica history kept: a forgotten entry's old pages age out within twice this",
    )
    p.set_defaults(func=cmd_init)
    p = ssub.add_parser("run", parents=[jp], help="replicate and pull until SIGTERM/SIGINT")
    p.add_argument(
        "--pull-every", type=_seconds, default=None, help="override the fallback pull interval"
    )
    p.set_defaults(func=cmd_run)
    p = ssub.add_parser("pull", parents=[jp], help="merge the other machines' replicas now")
    p.add_argument("--full", action="store_true", help="re-read every entry (a repair)")
    p.add_argument("--machine", help="only this machine (an id or its start)")
    p.set_defaults(func=cmd_pull)
    p = ssub.add_parser("status", parents=[jp], help="this machine's replication and every peer")
    p.add_argument(
        "--no-count", action="store_true", help="do not restore peers to count what is not pulled"
    )
    p.set_defaults(func=cmd_status)
    p = ssub.add_parser(
        "restore", parents=[jp], help="bring this machine back from the freshest replica"
    )
    p.add_argument("--url", required=True, help="the replica location, as given to sync init")
    p.add_argument("--key", help="the sync key (default: derived from this repository)")
    p.add_argument(
        "--force", action="store_true", help="replace a store that is here (moved aside)"
    )
    p.add_argument(
        "--retire",
        metavar="MACHINE",
        help="the dead machine this one replaces: retired after the pull (`sync retire`)",
    )
    p.set_defaults(func=cmd_restore)
    p = ssub.add_parser("peek", parents=[jp], help="a peer's newest entries, read from its replica")
    p.add_argument("machine", help="the machine id (or its start)")
    p.add_argument("-n", type=positive_int, default=5, help="how many entries (default 5)")
    p.set_defaults(func=cmd_peek)
    p = ssub.add_parser(
        "verify", parents=[jp], help="each peer's replica against this store (nothing merged)"
    )
    p.set_defaults(func=cmd_verify)
    p = ssub.add_parser(
        "retire",
        parents=[jp],
        help="a machine gone for good: its replica pulled, then deleted, and it forgotten",
    )
    p.add_argument("machine", help="the machine id (or its start), as `sync status` lists it")
    p.add_argument(
        "--force",
        action="store_true",
        help="even if its claim is live, or its replica cannot be pulled first",
    )
    p.set_defaults(func=cmd_retire)
