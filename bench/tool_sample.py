"""A typical tool function for the ``tools`` workload of ``run.py``: a nested model, an enum, a
literal, optionals and documented parameters (module-level, so its annotations resolve)."""

import enum
from typing import Annotated
from typing import Literal
from typing import Optional

import pydantic


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Place(pydantic.BaseModel):
    city: str
    country: Optional[str] = None  # noqa: UP045


def get_weather(
    place: Place,
    unit: Unit = Unit.CELSIUS,
    days: Annotated[int, pydantic.Field(ge=1, le=7)] = 1,
    detail: Literal["short", "full"] = "short",
    hours: list[int] | None = None,
) -> str:
    """Get the weather forecast for a place.

    Args:
        place: Where to forecast.
        unit: The temperature unit.
        days: How many days.
        detail: How much to say.
        hours: Which hours of the day.
    """
    return place.city
