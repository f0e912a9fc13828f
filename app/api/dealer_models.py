"""Request and response schemas of who deals at a table (``/api/v1/tables/{table_id}/dealer``
and ``.../dealers``). Times are integer microseconds since the epoch, UTC (``*_us``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.api.text_fields import Username
from controller.core.dealers import DealerTurn

__all__ = ["DealerSignIn", "DealerTurnRead"]


class DealerSignIn(BaseModel):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{}, {"dealer": "dee.dealer"}]}
    )

    dealer: Username | None = Field(
        default=None,
        description="the dealer to sign in: a supervisor or admin names one; a dealer signs in "
        "themself (their own name, or none)",
    )


class DealerTurnRead(BaseModel):
    """A dealer's turn at a table, as recorded."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "table_id": "stud-1",
                    "dealer": "dee.dealer",
                    "from_us": 1767225000000000,
                    "until_us": 1767228600000000,
                    "signed_in_by": "dee.dealer",
                    "signed_out_by": "sam.supervisor",
                }
            ]
        }
    )

    table_id: str
    dealer: str
    from_us: int = Field(description="signed in at (included)")
    until_us: int | None = Field(
        description="signed out at (excluded): by themself, by a supervisor or admin, by "
        "signing in at another table, or by another dealer signing in here; null while dealing"
    )
    signed_in_by: str = Field(description="who recorded the sign-in: the dealer, or who named them")
    signed_out_by: str | None = Field(description="who recorded the sign-out")

    @classmethod
    def of(cls, turn: DealerTurn) -> DealerTurnRead:
        return cls(
            table_id=turn.table_id,
            dealer=turn.dealer,
            from_us=turn.from_us,
            until_us=turn.until_us,
            signed_in_by=turn.signed_in_by,
            signed_out_by=turn.signed_out_by,
        )
