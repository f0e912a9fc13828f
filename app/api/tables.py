"""Tables: their state for the pit, the dealer and the technician; the reset after a hit; who
deals at each, signed in and out."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends, HTTPException, Query, status

from app.api.dealer_models import DealerSignIn, DealerTurnRead
from app.api.deps import ServiceDep
from app.api.floor_models import SinceQuery, TableRead, UntilQuery, bad_input, errors, period
from app.api.text_fields import IdText, Username
from app.security.authentication import TABLE_VIEWERS, Principal, require
from controller.refusal import at
from controller.roles import Role
from controller.runtime.service import FloorService

router = APIRouter(prefix="/api/v1/tables", tags=["tables"])

TABLE_READERS = require(*TABLE_VIEWERS)
TABLE_RESETTERS = require(Role.TECHNICIAN, Role.SUPERVISOR)
# A dealer signs themself in and out; a supervisor or admin signs in and out whom they name
# (a dealer who left without signing out).
DEALER_SIGNERS = require(Role.DEALER, Role.SUPERVISOR, Role.ADMIN)
DEALER_RECORD_READERS = require(Role.AUDITOR, Role.SUPERVISOR, Role.ADMIN)


async def _read(service: FloorService, table_id: str) -> TableRead:
    status = service.table_status(table_id)
    dealing = await service.dealers.dealing_at(table_id)
    return TableRead.of(status, service.records.link_state(status.link_id), dealing)


def _only_themself(who: Principal, named: str | None, doing: str) -> str | None:
    """The dealer a dealer may name: themself only (403 for anyone else)."""
    if who.role is Role.DEALER:
        if named is not None and named != who.username:
            raise HTTPException(
                status_code=status.HTTP_403_FORBIDDEN,
                detail=f"a dealer {doing} only themself; a supervisor or admin may name another "
                f"dealer (you are signed in as {who.username})",
            )
        return who.username
    return named


@router.get("", summary="Every table's state", responses=errors(401, 403, 404, 422))
async def list_tables(
    service: ServiceDep,
    _: Annotated[Principal, Depends(TABLE_READERS)],
    link: Annotated[IdText | None, Query(description="only the tables of this link")] = None,
) -> list[TableRead]:
    records = service.records
    dealing = await service.dealers.dealing()
    return [
        TableRead.of(s, records.link_state(s.link_id), dealing.get(s.table_id))
        for s in service.table_statuses(link_id=link)
    ]


@router.get(
    "/{table_id}",
    summary="One table: state, counters, round, seats with side bets this round",
    responses=errors(401, 403, 404),
)
async def get_table(
    table_id: IdText, service: ServiceDep, _: Annotated[Principal, Depends(TABLE_READERS)]
) -> TableRead:
    return await _read(service, table_id)


@router.post(
    "/{table_id}/reset",
    summary="Reset a table held for a hit, once its hits are verified and signed off",
    description="The table takes progressive bets again. Refused (409) while a hit paid from "
    "the meter at this table is not verified, or one at or above the second-signature amount "
    "is not signed off by a second person (the refusal names the hits), or when the table "
    "has no hit pending. Audited.",
    responses=errors(401, 403, 404, 409),
)
async def reset_table(
    table_id: IdText,
    service: ServiceDep,
    who: Annotated[Principal, Depends(TABLE_RESETTERS)],
) -> TableRead:
    await service.hits.release_table(table_id, actor=who.username)
    return await _read(service, table_id)


@router.post(
    "/{table_id}/dealer",
    summary="Sign a dealer in at a table: they deal there from now",
    description="A dealer signs themself in (no body, or their own name); a supervisor or "
    "admin names the dealer (an enabled dealer's account, else 422). A dealer deals at one "
    "table at a time and a table has one dealer at a time: signing in signs the dealer out of "
    "any other table, and signs out whoever dealt here, each recorded as a sign-out of its "
    "own. Signing in where one deals already changes nothing. Audited. The table, with its "
    "dealer.",
    responses=errors(401, 403, 404, 422),
)
async def sign_dealer_in(
    table_id: IdText,
    service: ServiceDep,
    who: Annotated[Principal, Depends(DEALER_SIGNERS)],
    body: Annotated[DealerSignIn | None, Body()] = None,
) -> TableRead:
    dealer = _only_themself(who, None if body is None else body.dealer, "signs in")
    if dealer is None:
        raise bad_input("body.dealer", "name the dealer to sign in")
    with at("body.dealer"):
        await service.dealers.sign_in(table_id, dealer=dealer, actor=who.username)
    return await _read(service, table_id)


@router.delete(
    "/{table_id}/dealer",
    summary="Sign the dealer out of a table",
    description="A dealer signs themself out; a supervisor or admin signs out whoever deals "
    "there (a dealer who left without signing out), or only ``dealer`` when named. Refused "
    "(409) when no one deals there, or someone other than the dealer named (or the dealer "
    "calling). Audited. The table, now without a dealer.",
    responses=errors(401, 403, 404, 409, 422),
)
async def sign_dealer_out(
    table_id: IdText,
    service: ServiceDep,
    who: Annotated[Principal, Depends(DEALER_SIGNERS)],
    dealer: Annotated[
        Username | None,
        Query(description="the dealer expected to deal there: refused (409) if another does"),
    ] = None,
) -> TableRead:
    named = _only_themself(who, dealer, "signs out")
    await service.dealers.sign_out(table_id, dealer=named, actor=who.username)
    return await _read(service, table_id)


@router.get(
    "/{table_id}/dealers",
    summary="Who dealt at a table in a period: each dealer's turn, newest first",
    description="Every turn that overlaps the period, with its times as recorded (a turn "
    "open at its end has no ``until_us``), who signed the dealer in and who out.",
    responses=errors(401, 403, 404, 422),
)
async def table_dealers(
    table_id: IdText,
    service: ServiceDep,
    _: Annotated[Principal, Depends(DEALER_RECORD_READERS)],
    since: SinceQuery = None,
    until: UntilQuery = None,
    limit: Annotated[int, Query(ge=1, le=10_000, description="at most this many")] = 1000,
) -> list[DealerTurnRead]:
    since_us, until_us = period(since, until, service.now_us())
    found = await service.dealers.turns(table_id, since_us=since_us, until_us=until_us)
    return [DealerTurnRead.of(t) for t in reversed(found[-limit:])]
