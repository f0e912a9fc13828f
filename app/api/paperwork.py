"""The regulated paperwork over HTTP: devices removed from play
(``app.api.integrity_records``), corrections by two people (``app.api.corrections``), the
reconciliation of a link's meter for auditors (``app.api.reconciliation``) and how an amount
or a rate as typed is read (``app.api.amount_text``), under one router."""

from fastapi import APIRouter

from app.api import amount_text, corrections, integrity_records, reconciliation
from app.api.corrections import (
    APPROVERS,
    AUDIT_READERS,
    REQUESTERS,
    CorrectionRequestRead,
    RejectRequest,
    approve_correction,
    list_corrections,
    reject_correction,
    request_correction,
)
from app.api.integrity_records import (
    RECORD_READERS,
    TABLE_WORKERS,
    EmployeeModel,
    EmployeeRead,
    IntegrityRecordCreate,
    IntegrityRecordRead,
    RemedialActionCreate,
    RemedialActionRead,
    VerificationCreate,
    add_remedial_action,
    get_record,
    list_records,
    remove_from_play,
    return_to_play,
    verify_device,
)
from app.api.reconciliation import (
    RECON_COLUMNS,
    ReconciliationRead,
    ReconciliationReport,
    TableContributionRead,
    export_reconciliation,
    get_reconciliation,
)

router = APIRouter()
router.include_router(integrity_records.router)
router.include_router(corrections.router)
router.include_router(reconciliation.router)
router.include_router(amount_text.router)

__all__ = [
    "APPROVERS",
    "AUDIT_READERS",
    "RECON_COLUMNS",
    "RECORD_READERS",
    "REQUESTERS",
    "TABLE_WORKERS",
    "CorrectionRequestRead",
    "EmployeeModel",
    "EmployeeRead",
    "IntegrityRecordCreate",
    "IntegrityRecordRead",
    "ReconciliationRead",
    "ReconciliationReport",
    "RejectRequest",
    "RemedialActionCreate",
    "RemedialActionRead",
    "TableContributionRead",
    "VerificationCreate",
    "add_remedial_action",
    "approve_correction",
    "export_reconciliation",
    "get_reconciliation",
    "get_record",
    "list_corrections",
    "list_records",
    "reject_correction",
    "remove_from_play",
    "request_correction",
    "return_to_play",
    "router",
    "verify_device",
]
