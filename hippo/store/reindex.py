"""Each store's vectors as maintenance sees them: `hippo reindex`'s side table
(`<table>_next`, each vector with the content hash it was computed from) beside the live
one, the Brain vectors consolidation compares, and the vectors doctor checks and repairs.
What the vector index does its own way (SQLite's vec0, PostgreSQL's pgvector) each backend's
subclass does (`hippo.store.sqlite.reindex`, `hippo.store.postgres.reindex`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from hippo.store.sql import Repository, render
from hippo.store.vectors import TABLES

if TYPE_CHECKING:
    from hippo.store.base import Row

SIDE = "{}_next"
COUNT = "SELECT count(*) FROM {table}"
HASHES = "SELECT id, content_hash FROM {content}"
TEXTS = "SELECT id, text, content_hash FROM {content} WHERE id {{in_list}}"
DROP_SIDE_ROW = "DELETE FROM {table} WHERE {key} = ?"
UNEMBEDDED = {
    "brain": ("SELECT id FROM memories WHERE status = 'active' AND id NOT IN "
              "(SELECT memory_id FROM memories_vec) ORDER BY id"),
    "echo": ("SELECT id FROM echo_chunks WHERE id NOT IN (SELECT chunk_id FROM echo_vec) "
             "ORDER BY id"),
}
ORPHANS = {
    "brain": ("SELECT memory_id FROM memories_vec WHERE memory_id NOT IN "
              "(SELECT id FROM memories WHERE status = 'active') ORDER BY memory_id"),
    "echo": ("SELECT chunk_id FROM echo_vec WHERE chunk_id NOT IN (SELECT id FROM echo_chunks) "
             "ORDER BY chunk_id"),
}
CHUNKS = ("SELECT id, text, project, session_id, started_at FROM echo_chunks "
          "WHERE id {in_list} ORDER BY id")
DROP_CHUNK_VECTOR = "DELETE FROM echo_vec WHERE chunk_id = ?"


class Reindex(Repository):
    """Each store's vectors as maintenance sees them."""

    # -- what each backend does its own way --------------------------------------------
    def memory_vectors(self) -> Iterator[tuple[int, str, str, bytes]]:
        """Every stored Brain vector: (memory id, type, project or "", vector), streamed."""
        raise NotImplementedError

    def put_chunk_vector(self, chunk_id: int, blob: bytes, project: str, session_id: int,
                         started: int | None) -> None:
        """Store the vector of an Echo chunk, with its filter columns (where it has them)."""
        d = self.db.dialect
        self.db.execute(d.chunk_vector, {"id": chunk_id, "vec": d.vector(blob),
                                         "project": project, "session": session_id,
                                         "started": started})

    def move_chunk_vectors(self, src: str, dst: str) -> None:
        """Follow a project's move in the Echo vectors (where they carry a project)."""
        raise NotImplementedError

    def set_chunk_vector_project(self, chunk_id: int, project: str) -> None:
        """Follow one chunk's move to `project` in its vector (where it carries one)."""
        raise NotImplementedError

    def declares(self, store: str, dimensions: int) -> bool:
        """Whether the vector index of `store` is declared with `dimensions`."""
        raise NotImplementedError

    def vector_metadata(self, store: str,
                        keys: Sequence[int] | None = None) -> dict[int, tuple[Any, ...]]:
        """key -> metadata columns of the live vectors (only `keys` when given)."""
        raise NotImplementedError

    def side_metadata(self, store: str) -> dict[int, tuple[Any, tuple[Any, ...]]]:
        """key -> (content hash, metadata columns) of the side table's vectors."""
        raise NotImplementedError

    def write_side(self, store: str, key: int, vector: bytes, metadata: tuple[Any, ...],
                   content_hash: str) -> None:
        """Put one vector (replacing any) into the store's side table."""
        raise NotImplementedError

    def create_side_table(self, store: str, dim: int, *, drop_old: bool) -> None:
        """Create the side table for `dim` dimensions (after dropping the old one when
        `drop_old`); an existing one is kept."""
        raise NotImplementedError

    def swap_side_table(self, store: str, dim: int) -> None:
        """Replace the live table by the side table's vectors and drop the side table."""
        raise NotImplementedError

    # -- the live vectors ---------------------------------------------------------------

    def vector_count(self, store: str) -> int:
        """How many vectors the store's live table holds."""
        return int(self.db.scalar(COUNT.format(table=TABLES[store][0])))

    def unembedded(self, store: str) -> list[int]:
        """Ids that should have a vector in `store` and have none (active memories, chunks)."""
        return [int(r[0]) for r in self.db.execute(UNEMBEDDED[store])]

    def orphan_vectors(self, store: str) -> list[int]:
        """Ids of vectors in `store` with no active memory (brain) or chunk (echo) behind."""
        return [int(r[0]) for r in self.db.execute(ORPHANS[store])]

    def chunks_to_embed(self, ids: Sequence[int]) -> list[Row]:
        """Those Echo chunks by id: id, text, project, session_id, started_at."""
        d = self.db.dialect
        return self.db.rows(render(d, CHUNKS), (d.listed([int(i) for i in ids]),))

    def drop_chunk_vector(self, chunk_id: int) -> None:
        """Remove the vector of an Echo chunk."""
        self.db.execute(DROP_CHUNK_VECTOR, (chunk_id,))

    # -- the side table ----------------------------------------------------------------
    def has_side_table(self, store: str) -> bool:
        """Whether the store has a side table (a reindex in progress)."""
        return self.db.has_table(SIDE.format(TABLES[store][0]))

    def side_count(self, store: str) -> int:
        """How many vectors the store's side table holds."""
        return int(self.db.scalar(COUNT.format(table=SIDE.format(TABLES[store][0]))))

    def content_hashes(self, store: str) -> list[tuple[int, str]]:
        """(id, content hash) of every text the store holds."""
        return [(int(k), h) for k, h in self.db.execute(HASHES.format(content=TABLES[store][2]))]

    def texts(self, store: str, keys: Sequence[int]) -> list[tuple[int, str, str]]:
        """(id, text, content hash) of the texts `keys` that exist."""
        d = self.db.dialect
        sql = render(d, TEXTS.format(content=TABLES[store][2]))
        return [(int(r[0]), r[1], r[2])
                for r in self.db.execute(sql, (d.listed([int(k) for k in keys]),))]

    def drop_side_row(self, store: str, key: int) -> None:
        """Remove one vector from the store's side table."""
        live, column, _ = TABLES[store]
        self.db.execute(DROP_SIDE_ROW.format(table=SIDE.format(live), key=column), (key,))



