"""Schema of the regulated paperwork: devices removed from play and correction requests.

Records, like the meter history: the facts of each row are fixed when it is written; only its
follow-up (remedial actions, verification, return to play, a decision) is filled in later, once.
The database refuses anything else (migration 0004).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from controller.storage.models import AutoId, Base, Id


class IntegrityRecordRow(Base):
    """68 IAC 10-1-6.2(b): a live gaming device (a table) removed from play."""

    __tablename__ = "integrity_records"

    record_id: Mapped[str] = mapped_column(Id, primary_key=True)
    link_id: Mapped[str] = mapped_column(Id)
    table_id: Mapped[str] = mapped_column(Id, index=True)
    # (b)(1)
    questioned_at_us: Mapped[int] = mapped_column(BigInteger)
    # (b)(2)
    device_type: Mapped[str] = mapped_column(String(200))
    # (b)(3)(A), (B)
    manufacturer_serial_number: Mapped[str | None] = mapped_column(String(100))
    commission_registration_number: Mapped[str] = mapped_column(String(100))
    # (b)(4): from removed_at_us to returned_at_us
    removed_at_us: Mapped[int] = mapped_column(BigInteger)
    # (b)(5)
    malfunction_reason: Mapped[str] = mapped_column(Text)
    # (b)(10)(A), (B)
    complainant_name: Mapped[str | None] = mapped_column(String(200))
    complainant_address: Mapped[str | None] = mapped_column(Text)
    complainant_telephone: Mapped[str | None] = mapped_column(String(50))
    complaint_nature: Mapped[str | None] = mapped_column(Text)
    # The written notice to the enforcement agent, kept as a document.
    notice_sha256: Mapped[str] = mapped_column(ForeignKey("documents.sha256"))
    recorded_by: Mapped[str] = mapped_column(String(100))
    at_us: Mapped[int] = mapped_column(BigInteger)
    # Follow-up, each filled in once. (b)(9):
    verified_by: Mapped[str | None] = mapped_column(String(100))
    verified_at_us: Mapped[int | None] = mapped_column(BigInteger)
    verification: Mapped[str | None] = mapped_column(Text)
    returned_by: Mapped[str | None] = mapped_column(String(100))
    returned_at_us: Mapped[int | None] = mapped_column(BigInteger)


class RemedialActionRow(Base):
    """68 IAC 10-1-6.2(b)(6)-(8): one remedial action on a device removed from play."""

    __tablename__ = "integrity_remedial_actions"

    action_id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    record_id: Mapped[str] = mapped_column(ForeignKey("integrity_records.record_id"), index=True)
    # (b)(6)
    description: Mapped[str] = mapped_column(Text)
    # (b)(7): JSON list of {printed_name, signature, occupational_license_number}
    employees: Mapped[str] = mapped_column(Text)
    # (b)(8)(A), (B)
    outside_company_name: Mapped[str | None] = mapped_column(String(200))
    outside_company_address: Mapped[str | None] = mapped_column(Text)
    outside_company_telephone: Mapped[str | None] = mapped_column(String(50))
    outside_individuals: Mapped[str] = mapped_column(Text)  # JSON list of names
    recorded_by: Mapped[str] = mapped_column(String(100))
    at_us: Mapped[int] = mapped_column(BigInteger)


class CorrectionRequestRow(Base):
    """A supervisor's request to correct a meter, applied only on a second person's approval."""

    __tablename__ = "correction_requests"

    request_id: Mapped[str] = mapped_column(Id, primary_key=True)
    link_id: Mapped[str] = mapped_column(Id)
    delta_units: Mapped[int] = mapped_column(BigInteger)
    category: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(Text)
    document_sha256: Mapped[str | None] = mapped_column(ForeignKey("documents.sha256"))
    requested_by: Mapped[str] = mapped_column(String(100))
    at_us: Mapped[int] = mapped_column(BigInteger)
    # The meter of a link of levels to correct (L2, L1.reserve...); null: the link's one meter.
    meter: Mapped[str | None] = mapped_column(String(32))
    # The decision, made once.
    status: Mapped[str] = mapped_column(String(16))  # pending, approved, rejected
    decided_by: Mapped[str | None] = mapped_column(String(100))
    decided_at_us: Mapped[int | None] = mapped_column(BigInteger)
    decision_reason: Mapped[str | None] = mapped_column(Text)
    correction_id: Mapped[str | None] = mapped_column(Id)

    __table_args__ = (Index("ix_correction_requests_link_at", "link_id", "at_us"),)


__all__ = ["CorrectionRequestRow", "IntegrityRecordRow", "RemedialActionRow"]
