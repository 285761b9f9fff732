"""What the preview may produce: the tags and attributes its renderers write, nothing else."""

from __future__ import annotations

from html.parser import HTMLParser

#: Every tag the renderers write, with the attributes each may carry.
ALLOWED: dict[str, frozenset[str]] = {
    "b": frozenset(),
    "i": frozenset(),
    "s": frozenset(),
    "br": frozenset(),
    "code": frozenset(),
    "pre": frozenset(),
    "blockquote": frozenset(),
    "span": frozenset({"class"}),
    "time": frozenset({"title"}),
    "a": frozenset(
        {"class", "href", "target", "rel", "data-action-id", "data-block-id", "data-act"}
        | {"data-value"}
    ),
    "div": frozenset({"class", "data-block-id", "role"}),
    "h3": frozenset({"class"}),
    "hr": frozenset(),
    "label": frozenset({"class"}),
    "button": frozenset(
        {"type", "class", "data-action-id", "data-block-id", "data-act", "data-value"}
        | {"data-confirm"}
    ),
    "select": frozenset({"class", "name", "data-action-id", "data-block-id", "data-act"}),
    "option": frozenset({"value", "disabled", "selected"}),
    "input": frozenset(
        {"type", "name", "value", "checked", "placeholder", "maxlength", "minlength"}
        | {"data-action-id", "data-block-id", "data-act"}
    ),
    "textarea": frozenset({"name", "rows", "placeholder", "maxlength", "minlength"}),
}
SAFE_SCHEMES = ("http://", "https://", "mailto:")


class _Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        allowed = ALLOWED.get(tag)
        if allowed is None:
            self.problems.append(f"tag <{tag}>")
            return
        for name, value in attrs:
            if name not in allowed:
                self.problems.append(f"attribute {name} on <{tag}>")
            if name == "href" and not (value or "").lower().startswith(SAFE_SCHEMES):
                self.problems.append(f"href {value!r}")

    def handle_decl(self, decl: str) -> None:
        self.problems.append(f"declaration {decl!r}")

    def handle_pi(self, data: str) -> None:
        self.problems.append(f"processing instruction {data!r}")

    def unknown_decl(self, data: str) -> None:
        self.problems.append(f"declaration {data!r}")


def markup_problems(fragment: str) -> list[str]:
    """Every tag, attribute or link target in ``fragment`` the preview never writes itself."""
    checker = _Checker()
    checker.feed(fragment)
    checker.close()
    return checker.problems
