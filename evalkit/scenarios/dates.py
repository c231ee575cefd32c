"""When a seeded thought was created: `created_at` values of scenario files resolved against the
run's clock (ISO-8601 date-times or offsets such as `-30d`)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from evalkit.errors import DatasetError
from evalkit.validation import shown_value

_OFFSET = re.compile(r"^([+-])(\d+(?:\.\d+)?)([mhdw])$")
_OFFSET_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
DATE_HELP = (
    "use an ISO-8601 date-time such as 2024-05-01T09:30:00Z, or an offset from the run's clock "
    "such as -30d, -12h, -90m, -2w or +1d"
)


def resolve_created_at(value: str | datetime | None, clock: datetime) -> datetime:
    """The UTC datetime a `created_at` value denotes for a run whose clock reads `clock`.

    None → `clock`. A datetime or ISO-8601 string is taken as is (naive → UTC). An offset
    `[+-]<number><unit>` with unit m (minutes), h (hours), d (days) or w (weeks), e.g. `-30d`,
    `-1.5h`, `+1d`, is added to `clock`; the sign is required. A naive `clock` counts as UTC.
    Anything else raises DatasetError saying which forms are accepted.
    """
    now = as_utc(clock)
    if value is None:
        return now
    if isinstance(value, datetime):
        return as_utc(value)
    if isinstance(value, str):
        text = value.strip()
        offset = _OFFSET.match(text)
        try:
            if offset:
                sign = 1.0 if offset[1] == "+" else -1.0
                return now + timedelta(**{_OFFSET_UNITS[offset[3]]: sign * float(offset[2])})
            return as_utc(datetime.fromisoformat(text))
        except OverflowError:
            raise DatasetError(f"created_at {shown_value(value)} is out of range; {DATE_HELP}") from None
        except ValueError:
            pass
    raise DatasetError(f"cannot read created_at {shown_value(value)}; {DATE_HELP}")


def as_utc(moment: datetime) -> datetime:
    """`moment` in UTC; a naive datetime is taken to be UTC already."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
