"""The roles people and displays act in. Every account has one (``controller.access``), and the
rulebook names the role a duty asks for (``controller.rules.filing``: a commission agent
reviews what is filed)."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    DISPLAY = "display"
    DEALER = "dealer"
    TECHNICIAN = "technician"
    SUPERVISOR = "supervisor"
    AUDITOR = "auditor"
    # Surveillance reads game protection (the tables' luck against the odds, its alerts): it
    # changes nothing and reads nothing else.
    SURVEILLANCE = "surveillance"
    COMMISSION_AGENT = "commission_agent"
    ADMIN = "admin"
