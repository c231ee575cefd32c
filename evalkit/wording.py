"""Counted nouns in messages: "1 scenario", "2 scenarios" — never "1 scenarios" or "problem(s)";
and short lists: "a, b, c and 5 more"."""

from __future__ import annotations


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """`count` and the noun in the number it takes: `singular` for exactly 1, else `plural`
    (default `singular` + "s"; give it for irregular nouns: "query", "queries")."""
    return f"{count} {singular if count == 1 else plural or singular + 's'}"


def few_names(names: list[str], shown: int = 3) -> str:
    """At most `shown` of `names`, then how many more: "a, b, c and 5 more" (a message names a
    long list once, briefly)."""
    head = ", ".join(names[:shown])
    return head if len(names) <= shown else f"{head} and {len(names) - shown} more"
