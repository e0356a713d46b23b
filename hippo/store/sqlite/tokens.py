"""SQLite: token matrices, cached in `embed_cache` under the model id plus a format suffix."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from hippo.store.sqlite import embed_cache

if TYPE_CHECKING:
    from hippo.store.sqlite.database import Sql


class SqliteTokenMatrices:
    def __init__(self, db: Sql) -> None:
        self.db = db

    def get(self, model: str, content_hash: str) -> bytes | None:
        return embed_cache.get(self.db, model, content_hash)

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, bytes]:
        return dict(embed_cache.get_many(self.db, model, hashes))

    def put(self, model: str, matrices: Iterable[tuple[str, bytes]], created_at: str, *,
            replace: bool = True) -> None:
        embed_cache.put(self.db, model, matrices, created_at, replace=replace)
