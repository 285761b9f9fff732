"""Limits the configuration, the use-cases and the rendering agree on."""

#: Bundles per page of ``/kandev-questions`` unless KANDEV_LIST_PAGE_SIZE says otherwise (the
#: settings validate it).
DEFAULT_PAGE_SIZE = 10
#: The most bundles one page may show: 2 blocks each plus 4 fixed ones stay within Slack's 50
#: blocks of an ephemeral message.
MAX_PAGE_SIZE = 20

#: Kandev's own limit for custom_text / reject_reason, in code points after trimming.
KANDEV_MAX_TEXT = 2000
