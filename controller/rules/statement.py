"""What every surface states of the law it runs under: its jurisdiction, and demonstration mode.

Every link, filing, packet, refusal, report and display states the jurisdiction it runs under
("Indiana (68 IAC 10)", ``Jurisdiction.title``). An installation in demonstration mode
(``PROGRESSIVE_DEMONSTRATION``: the demo, a test lab, a check that must play a new link at
once) files without the notice periods (``filing.check_notice``), and every link opened under
it is marked so in its history for good: both are stated on every page, display, document and
export, so that no floor carries a demonstration unseen. The words are made here, once; each
kind of surface has one helper that prints them (the documents' letterhead, the pages'
banner, the exports' fields).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from controller.rules.jurisdictions.base import Jurisdiction

__all__ = ["DEMONSTRATION_SETTING", "Statement", "statement"]

# The installation's setting that turns demonstration mode on (``Settings.demonstration``).
DEMONSTRATION_SETTING = "PROGRESSIVE_DEMONSTRATION"
INSTALLATION_WORDS = (
    "this installation opens and files links that play at once, without their notice periods; "
    "it is no live floor"
)


@dataclass(frozen=True, slots=True)
class Statement:
    """What a surface states: ``jurisdiction`` always; ``demonstration`` when the installation
    runs in demonstration mode or a link it shows was opened in it (None otherwise)."""

    jurisdiction: str
    installation: bool
    links: tuple[str, ...] = ()
    # Whether the words name the links: not on a page anyone may open, which says only that
    # there are some (its floor's data, link ids among them, is the API's to give).
    named: bool = True
    # Whether the words name the installation's setting: not on a patron's display, which
    # says what the floor is, never how it is configured.
    setting: bool = True

    def unnamed(self) -> Statement:
        """The same statement, naming no link."""
        return replace(self, named=False)

    def for_patrons(self) -> Statement:
        """The same statement as a floor display shows it: without the setting's name."""
        return replace(self, setting=False)

    @property
    def demonstration(self) -> str | None:
        if not self.installation and not self.links:
            return None
        parts = [INSTALLATION_WORDS] if self.installation else []
        if self.links and not self.named:
            parts.append(
                "links of this floor were opened in demonstration mode, without their notice "
                "periods"
            )
        elif self.links:
            one = len(self.links) == 1
            parts.append(
                ("link " if one else "links ")
                + ", ".join(self.links)
                + (" was" if one else " were")
                + " opened in demonstration mode, without "
                + ("its notice period" if one else "their notice periods")
            )
        text = "; ".join(parts)
        if self.installation and self.setting:
            return f"DEMONSTRATION MODE ({DEMONSTRATION_SETTING}): {text}"
        return f"DEMONSTRATION MODE: {text}"

    def as_dict(self) -> dict[str, Any]:
        """For a JSON answer, a feed or an export's head."""
        return {
            "jurisdiction": self.jurisdiction,
            "demonstration": {
                "installation": self.installation,
                "links": list(self.links) if self.named else [],
                "statement": self.demonstration,
            },
        }


def statement(law: Jurisdiction, *, installation: bool, links: Iterable[str] = ()) -> Statement:
    """The statement of a surface under ``law``: ``installation`` whether the installation runs
    in demonstration mode, ``links`` those it shows that were opened in it."""
    return Statement(law.title, installation, tuple(sorted(set(links))))
