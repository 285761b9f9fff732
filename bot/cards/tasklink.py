"""A task's link into Kandev and the title shown when it has none. Pure; shared by every
rendering that names a task (cards, group lines, listing, App Home, modals, conversation)."""

from __future__ import annotations

from urllib.parse import quote, urlsplit

from bot.cards.mrkdwn import MAX_LINK_URL

UNTITLED_TASK = "Untitled task"


def task_url(kandev_url: str, task_id: str) -> str:
    """``{kandev_url}/t/{task_id}``; raises ValueError unless it is a usable http(s) URL."""
    url = f"{kandev_url.rstrip('/')}/t/{quote(task_id, safe='')}"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or len(url) > MAX_LINK_URL:
        raise ValueError(f"not a usable Kandev link (http(s), at most {MAX_LINK_URL}): {url!r}")
    return url
