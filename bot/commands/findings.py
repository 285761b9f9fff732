"""What `kandev-slack check` reports: one :class:`Finding` per line."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    """One line of the check report. ``warning`` marks an ok line that could not be verified."""

    ok: bool
    name: str
    detail: str
    warning: bool = False

    @property
    def status(self) -> str:
        if not self.ok:
            return "FAIL"
        return "warn" if self.warning else "ok"

    def line(self) -> str:
        return f"{self.status:<5}{self.name:<24} {self.detail}".rstrip()


def exception_text(exc: BaseException) -> str:
    """An exception as a finding's detail: its text (or its class), at most 300 characters."""
    text = str(exc).strip() or exc.__class__.__name__
    return text if len(text) <= 300 else text[:297] + "…"
