"""Secrets of the HTTP surfaces: bearer tokens and credentials in URLs are checked without being
shown, and redacted wherever a URL is printed or recorded.

- `check_token`: a token travels in an HTTP header, so it must be printable ASCII without spaces
  (RFC 6750's token68 is stricter still). A token read from a file often ends in a newline; that
  is refused rather than stripped (the server would compare it with the newline and answer 401),
  and the message says where the bad character is, never the token.
- `redact_url`: `http://user:pass@host/…` becomes `http://***@host/…` (the user name can be a
  secret too). The adapter still sends the credentials; only what is shown or saved changes.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from evalkit.errors import UsageError


def check_token(token: str, variable: str) -> str:
    """`token` when every character is printable ASCII and not a space; UsageError naming
    `variable` and the position and kind of the first bad character otherwise (never the token)."""
    for position, char in enumerate(token, start=1):
        if not ("!" <= char <= "~"):
            kind = (
                "a newline" if char in "\r\n"
                else "a space" if char.isspace()
                else "a non-ASCII character" if ord(char) > 127
                else "a control character"
            )  # fmt: skip
            where = "at its end" if position == len(token) else f"at position {position} of {len(token)}"
            raise UsageError(
                f"${variable} holds {kind} {where} (the token is not shown); a bearer token must be "
                "printable ASCII without spaces: remove it (e.g. a trailing newline from a file)"
            )
    return token


def redact_url(url: str) -> str:
    """`url` without its user name and password (`***@` in their place); unchanged when it has
    none or cannot be parsed."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rpartition("@")[2]))
