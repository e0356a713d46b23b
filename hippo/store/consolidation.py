"""What consolidation, retire and undo read and write besides the memories themselves:
candidates, changes since a run, pairs an undo keeps apart, a run's audit entries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hippo.store.memories import FIELDS
from hippo.store.sql import Repository, render

if TYPE_CHECKING:
    from hippo.store.base import Row

COLUMNS = ", ".join(FIELDS)
LAST_AUDIT = "SELECT coalesce(max(id), 0) FROM audit"
CANDIDATES = (
    "SELECT id, type, coalesce(project, '') FROM memories WHERE status = 'active' "
    "AND author = 'machine' AND pinned = 0 AND canonical = 0 AND superseded_by IS NULL "
    "ORDER BY id"
)
CHANGED_SINCE = ("SELECT DISTINCT memory_id FROM audit WHERE id > ? AND actor != ? "
                 "ORDER BY memory_id")
KEPT_APART = "SELECT a, b, run_id FROM keep_apart ORDER BY a, b"
KEEP_APART = ("INSERT INTO keep_apart(a, b, run_id, at) VALUES (?, ?, ?, ?) "
              "ON CONFLICT DO NOTHING")
DROP_KEPT_APART = "DELETE FROM keep_apart WHERE run_id = ?"
SAME_STATEMENT = ("SELECT id FROM memories WHERE dedup_key = ? AND id != ? "
                  "AND status IN ('active', 'done') ORDER BY id LIMIT 1")
RETIRE_CANDIDATES = (
    f"SELECT {COLUMNS} FROM memories WHERE pinned = 0 AND canonical = 0 AND "
    "(status = 'done' OR (status = 'active' AND type {in_list})) ORDER BY id"
)
RUN_AUDIT = "SELECT memory_id, action, before, after FROM audit WHERE run_id = ? ORDER BY id"
POINTING_AT = ("SELECT id FROM memories WHERE consolidated_into = ? OR superseded_by = ? "
               "ORDER BY id")


class Consolidation(Repository):
    """What consolidation, retire and undo read and write besides the memories."""

    def last_audit_id(self) -> int:
        """The id of the newest audit entry (0 when there is none)."""
        return int(self.db.scalar(LAST_AUDIT))

    def candidates(self) -> list[tuple[int, str, str]]:
        """(id, type, project or "") of active, machine-written, unpinned, non-canonical,
        unsuperseded memories: those consolidation may merge."""
        return [(int(r[0]), r[1], r[2]) for r in self.db.execute(CANDIDATES)]

    def changed_since(self, audit_id: int, actor: str) -> list[int]:
        """Memories changed after audit entry `audit_id` by anyone but `actor`."""
        return [int(r[0]) for r in self.db.execute(CHANGED_SINCE, (audit_id, actor))]


    def kept_apart(self) -> list[tuple[int, int, str]]:
        """(a, b, run) pairs an undo of run's merge keeps from merging again (a < b)."""
        return [(int(a), int(b), run_id) for a, b, run_id in self.db.execute(KEPT_APART)]

    def keep_apart(self, a: int, b: int, run_id: str, at: str) -> None:
        """Keep memories a < b from merging again (recorded by the undo `run_id`)."""
        self.db.execute(KEEP_APART, (a, b, run_id, at))

    def drop_kept_apart(self, run_id: str) -> None:
        """Forget the pairs the undo `run_id` kept apart."""
        self.db.execute(DROP_KEPT_APART, (run_id,))

    def same_statement(self, dedup_key: str, other_than: int) -> int | None:
        """The oldest live (active or done) memory other than `other_than` with that dedup
        key, or None."""
        other = self.db.scalar(SAME_STATEMENT, (dedup_key, other_than))
        return None if other is None else int(other)

    def retire_candidates(self, types: Sequence[str]) -> list[Row]:
        """Unpinned, non-canonical memories that are done, or active and of one of `types`,
        by id (brain columns)."""
        d = self.db.dialect
        return self.db.rows(render(d, RETIRE_CANDIDATES), (d.listed(list(types)),))

    def run_changes(self, run_id: str) -> list[Row]:
        """The audit entries of a run in order: memory_id, action, before, after (JSON)."""
        return self.db.rows(RUN_AUDIT, (run_id,))

    def pointing_at(self, memory_id: int) -> list[int]:
        """Memories consolidated into or superseded by `memory_id`, by id."""
        return [int(r[0]) for r in self.db.execute(POINTING_AT, (memory_id, memory_id))]
