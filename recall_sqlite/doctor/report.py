"""What doctor says: findings, each with whether `--repair` fixes it, and the report."""

from __future__ import annotations

from typing import Any

from .._record import Frozen
from ..context import whole_workspace


class Finding(Frozen):
    """One thing doctor found. `repairable`: `doctor --repair` fixes it. `fix` is what the
    repair needs to know (the rows involved); it is not part of the printed report."""

    __slots__ = ("kind", "severity", "message", "repairable", "data", "fix")
    kind: str
    severity: str  # error (the store answers wrongly or may) | warning (look at it)
    message: str
    repairable: bool
    data: dict[str, Any]
    fix: Any

    def __init__(
        self,
        kind: str,
        severity: str,
        message: str,
        repairable: bool = False,
        data: dict[str, object] | None = None,
        fix: object = None,
    ) -> None:
        self._set(
            kind=kind,
            severity=severity,
            message=message,
            repairable=repairable,
            data=data or {},
            fix=fix,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "message": self.message,
            "repairable": self.repairable,
            **({"data": self.data} if self.data else {}),
        }


class DoctorReport(Frozen):
    """What doctor found in the whole workspace's store. `database` and `workspace_id`
    None: no store exists yet, or none that opens (the CLI's report then)."""

    __slots__ = ("findings", "repaired", "database", "workspace_id")
    findings: tuple[Finding, ...]  # after a repair: what is left
    repaired: tuple[str, ...]  # what the repair changed, one sentence each
    database: str | None
    workspace_id: str | None

    def __init__(
        self,
        findings: tuple[Finding, ...],
        repaired: tuple[str, ...],
        database: str | None,
        workspace_id: str | None = None,
    ) -> None:
        self._set(
            findings=findings, repaired=repaired, database=database, workspace_id=workspace_id
        )

    @classmethod
    def unopened(cls, damage: BaseException) -> DoctorReport:
        """The report on a store too damaged to open (CorruptStoreError, NotAStoreError):
        that is doctor's finding, not doctor's failure."""
        return cls((Finding("damaged_store", "error", str(damage)),), (), None)

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "database": self.database,
            "findings": [f.to_dict() for f in self.findings],
            "repaired": list(self.repaired),
            **whole_workspace(self.workspace_id),
        }
