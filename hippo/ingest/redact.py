"""The redactor moved to `hippo.redact` (it serves every write path, not only ingest)."""

from hippo.redact import redact, redact_text

__all__ = ["redact", "redact_text"]
