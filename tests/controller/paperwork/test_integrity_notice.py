"""The notice to the enforcement agent reads as the property's document: its letterhead, its
times in the property's zone, a line for who recorded it (68 IAC 10-1-6.2(b))."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from controller.paperwork.integrity import DeviceRemoval, notice_pdf
from controller.paperwork.pdf import Letterhead
from tests.pdf_text import pdf_text_or_skip

# 24 Nov 2026 04:30:00 UTC: the evening before in Indianapolis.
AT_US = 1_795_494_600_000_000


def test_the_notice_has_the_letterhead_local_times_and_a_signature_line() -> None:
    head = Letterhead(
        property_name="Blue Heron Casino",
        licence="IGC-0042",
        zone=ZoneInfo("America/Indiana/Indianapolis"),
    )
    removal = DeviceRemoval(
        questioned_at_us=AT_US - 600_000_000,
        device_type="side-bet sensor",
        manufacturer_serial_number="SN-1",
        commission_registration_number="REG-7",
        malfunction_reason="reads a bet on an empty seat",
    )
    pdf = notice_pdf(
        record_id="r1", table_id="stud-1", table_name="Stud 1", location="pit 2",
        link_id="stud", removal=removal, removed_at_us=AT_US, recorded_by="terry.tech",
        letterhead=head,
    )  # fmt: skip
    text = pdf_text_or_skip(pdf)
    assert "Blue Heron Casino" in text and "IGC-0042" in text
    assert "23 Nov 2026 23:30:00 EST" in text  # removed from play, in the property's zone
    assert "23 Nov 2026 23:20:00 EST" in text  # integrity questioned
    assert "+00:00" not in text and "2026-11-24T" not in text
    assert "Recorded by (technician)" in text
