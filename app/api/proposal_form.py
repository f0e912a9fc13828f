"""A link's terms as the supervisor's form to propose a change starts from: what it plays
now, in cents and basis points, with its hands named."""

from __future__ import annotations

from app.api.submission_models import (
    FilingTermsRead,
    HandRead,
    KindRead,
    MysteryIn,
    TermsGameRead,
    TermsLevelRead,
    TermsLineRead,
)
from controller.core.reducer import LinkState
from controller.core.reducer.levels import is_single_meter
from controller.paperwork.filing_desk import FilingDesk
from controller.rules.filing import SubmissionKind, notice_days

_BY_SHAPE = {
    # The rulebook refuses any other kind on each shape (``rules.filing.check_change``); the
    # form offers only what can be filed.
    "classic": (
        SubmissionKind.RATE_CHANGE,
        SubmissionKind.RESET_CHANGE,
        SubmissionKind.PAYTABLE_CHANGE,
    ),
    "levels": (SubmissionKind.LEVELS_CHANGE, SubmissionKind.PAYTABLE_CHANGE),
    "fixed_pay": (SubmissionKind.PAYTABLE_CHANGE,),
}


def terms_of(state: LinkState, desk: FilingDesk) -> FilingTermsRead:
    shape = (
        "fixed_pay"
        if state.fixed_pay
        else "classic"
        if is_single_meter(state.level_configs)
        else "levels"
    )
    kind = SubmissionKind.RATE_CHANGE
    return FilingTermsRead(
        link_id=state.link_id,
        shape=shape,
        kinds=[KindRead(kind=str(k), label=k.label) for k in _BY_SHAPE[shape]],
        rate_bp=state.rate_bp,
        reset_cents=state.reset_cents,
        jackpot_won_since_rate_set=state.jackpot_won_since_rate_set,
        armed_submission_id=None if state.armed is None else state.armed.submission_id,
        games=[
            TermsGameRead(
                game=str(game),
                label=game.label,
                hands=[HandRead(hand=h.name, label=h.label) for h in game.rules.ranking],
                paytable=[
                    TermsLineRead(
                        hand=line.hand.name,
                        label=line.hand.label,
                        percent_bp=line.percent_bp,
                        fixed_cents=line.fixed_cents,
                        level=line.level,
                        envy_cents=line.envy_cents,
                        description=line.describe(),
                    )
                    for line in state.paytable_for(game).lines
                ],
            )
            for game in state.games
        ],
        levels=[]
        if shape != "levels"
        else [
            TermsLevelRead(
                name=cfg.name,
                reset_cents=cfg.reset_cents,
                rate_bp=cfg.rate_bp,
                reserve_bp=cfg.reserve_bp,
                limit_cents=cfg.limit_cents,
                above_limit=str(cfg.above_limit),
                mystery=None
                if cfg.mystery is None
                else MysteryIn(
                    floor_cents=cfg.mystery.floor_cents, ceiling_cents=cfg.mystery.ceiling_cents
                ),
                won_since_share_set=won,
            )
            for cfg, won in zip(state.level_configs, state.won_since_share_set(), strict=True)
        ],
        effective_at_us=desk.effective_default(kind),
        notice_days=notice_days(kind, desk.law)[0],
    )
