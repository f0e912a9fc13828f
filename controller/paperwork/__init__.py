"""The paperwork regulators ask for: submissions and their packets, devices removed from play,
corrections, retention, reconciliation, exports, documents, PDFs and signed checkpoints."""
