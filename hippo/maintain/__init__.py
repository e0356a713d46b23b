"""Upkeep of the Brain: consolidate near-duplicates, retire stale tasks, corrections by a
person, undo of a run from the audit log, re-embedding with another model, cron entries."""
