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


@dataclass(frozen=True)
class CheckReport:
    """The whole report: the findings and the configuration problems (each of which counts
    as a failed check). The text and the ``--json`` report both count failures here."""

    findings: list[Finding]
    problems: list[str]

    @property
    def failed(self) -> int:
        """Failed checks: every failed finding and every configuration problem."""
        return sum(not f.ok for f in self.findings) + len(self.problems)

    @property
    def total(self) -> int:
        return len(self.findings) + len(self.problems)

    @property
    def ok(self) -> bool:
        return self.failed == 0

    def summary(self) -> str:
        """The last line of the text report."""
        if self.ok:
            return "all checks passed"
        return f"{self.failed} of {self.total} checks failed"


def exception_text(exc: BaseException) -> str:
    """An exception as a finding's detail: its text (or its class), at most 300 characters."""
    text = str(exc).strip() or exc.__class__.__name__
    return text if len(text) <= 300 else text[:297] + "…"


def links_line(linked: int, broken: int) -> str:
    """What ``check`` says of the people's own Kandev accounts (never a token)."""
    people = "person" if linked == 1 else "people"
    links = "link" if broken == 1 else "links"
    return (
        f"{linked} {people} linked to Kandev, {broken} {links} broken (they are asked to reconnect)"
    )
