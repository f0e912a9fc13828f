"""The regulated paperwork's reads and writes: one repository module per record, each taking a
connection and handing back typed records (never raw rows). The rules and the order of the
writes stay with their callers in ``controller.paperwork``."""
