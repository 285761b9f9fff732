"""Where tables and keys are in a TOML text: tomllib does not keep positions, and every problem
in the routing file names its line (kandev_slack/config/routing_file.py)."""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?")
_KEY = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*(?:\.|=)""")


class LineIndex:
    """Where tables and keys are in a TOML text (tomllib does not keep positions)."""

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.tables: dict[str, list[int]] = {}  # "defaults" / "route" -> header lines
        self.keys: dict[tuple[str, int, str], int] = {}  # (table, index, key) -> line
        table, index = "", 0
        in_multiline = False
        for number, raw in enumerate(self.lines, start=1):
            line = raw.split("#", 1)[0] if '"' not in raw and "'" not in raw else raw
            quotes = raw.count('"""') + raw.count("'''")
            if in_multiline:
                in_multiline = quotes % 2 == 0
                continue
            if (header := _HEADER.match(line)) and "=" not in line.split("]", 1)[0]:
                table = header.group(2).strip().strip("\"'")
                self.tables.setdefault(table, []).append(number)
                index = len(self.tables[table]) - 1
            elif key := _KEY.match(line):
                self.keys.setdefault((table, index, key.group(1).strip("\"'")), number)
            in_multiline = quotes % 2 == 1

    def table_line(self, table: str, index: int = 0) -> int | None:
        lines = self.tables.get(table, [])
        return lines[index] if index < len(lines) else None

    def key_line(self, table: str, index: int, key: str) -> int | None:
        return self.keys.get((table, index, key))

    def value_line(self, start: int, value: str) -> int:
        """The first line at or after ``start`` where the quoted ``value`` appears."""
        for number in range(start, len(self.lines) + 1):
            text = self.lines[number - 1]
            if f'"{value}"' in text or f"'{value}'" in text:
                return number
        return start

    def locate(self, loc: tuple[int | str, ...]) -> int:
        """The best line for a pydantic error location within the routing file."""
        if not loc:
            return 1
        table = str(loc[0])
        index = loc[1] if table == "route" and len(loc) > 1 and isinstance(loc[1], int) else 0
        rest = loc[2:] if table == "route" else loc[1:]
        fallback = self.table_line(table, index) or self.key_line("", 0, table) or 1
        if not rest:
            return fallback
        return self.key_line(table, index, str(rest[0])) or fallback
