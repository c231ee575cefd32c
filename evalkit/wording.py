"""Counted nouns in messages: "1 scenario", "2 scenarios" — never "1 scenarios" or "problem(s)"."""

from __future__ import annotations


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """`count` and the noun in the number it takes: `singular` for exactly 1, else `plural`
    (default `singular` + "s"; give it for irregular nouns: "query", "queries")."""
    return f"{count} {singular if count == 1 else plural or singular + 's'}"
