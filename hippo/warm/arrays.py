"""The arrays a warm index keeps one store's Brain vectors in (`hippo.warm.index`): one
block of rows per project, so a search scans only the projects its filters name."""

from __future__ import annotations

import numpy as np

# What one vector costs besides its floats: id, created (8 bytes each), 1/length and two
# label codes (4 each), its entries in the id → row and id → project maps (about 100 each).
ROW_BYTES = 8 * 2 + 4 * 3 + 2 * 100


class Arrays:
    """The vectors of one project (global: ''), rows 0..n-1 live; a dropped row is
    overwritten at once."""

    def __init__(self, dim: int, capacity: int) -> None:
        self.dim, self.n, self.zero = dim, 0, 0
        self.ids = np.zeros(capacity, np.int64)
        self.vecs = np.zeros((capacity, dim), np.float32)
        self.inv = np.zeros(capacity, np.float32)  # 1 / length; 0: a vector of no length
        self.labels = np.zeros((capacity, 2), np.int32)  # type, tier codes
        self.created = np.zeros(capacity, np.int64)
        self.where: dict[int, int] = {}

    @staticmethod
    def bytes_for(dim: int, capacity: int) -> int:
        return capacity * (4 * dim + ROW_BYTES)

    @property
    def capacity(self) -> int:
        return len(self.ids)

    def nbytes(self) -> int:
        return self.bytes_for(self.dim, self.capacity)

    def grown(self, capacity: int) -> Arrays:
        new = Arrays(self.dim, capacity)
        n = self.n
        new.n, new.zero, new.where = n, self.zero, self.where
        for name in ("ids", "vecs", "inv", "labels", "created"):
            getattr(new, name)[:n] = getattr(self, name)[:n]
        self.vecs[:] = 0
        return new

    def put(self, key: int, vec: np.ndarray, labels: tuple[int, int], created: int) -> None:
        """Set `key`'s row (a new one at the end; the caller made room)."""
        r = self.where.get(key)
        if r is None:
            r = self.where[key] = self.n
            self.n += 1
        elif self.inv[r] == 0:
            self.zero -= 1
        self.ids[r], self.vecs[r], self.labels[r], self.created[r] = key, vec, labels, created
        norm = float(np.linalg.norm(vec.astype(np.float64)))
        self.inv[r] = 1.0 / norm if norm and np.isfinite(norm) else 0.0
        self.zero += int(self.inv[r] == 0)

    def drop(self, key: int) -> None:
        """Remove `key`: the last row moves into its place, and the last row is zeroed."""
        r = self.where.pop(key, None)
        if r is None:
            return
        self.zero -= int(self.inv[r] == 0)
        last = self.n - 1
        if r != last:
            for a in (self.ids, self.vecs, self.inv, self.labels, self.created):
                a[r] = a[last]
            self.where[int(self.ids[r])] = r
        for a in (self.ids, self.vecs, self.inv, self.labels, self.created):
            a[last] = 0
        self.n = last


class Held:
    """A store's vectors, one `Arrays` per project: a search scans only the projects its
    filters name (the current one and global, by default), within `max_bytes` in all."""

    def __init__(self, dim: int, max_bytes: int) -> None:
        self.dim, self.max_bytes = dim, max_bytes
        self.blocks: dict[int, Arrays] = {}
        self.home: dict[int, int] = {}  # id → its project's code

    @property
    def n(self) -> int:
        return len(self.home)

    @property
    def zero(self) -> int:  # vectors of no length (sqlite-vec's distance to them is NaN)
        return sum(b.zero for b in self.blocks.values())

    def nbytes(self) -> int:
        return sum(b.nbytes() for b in self.blocks.values())

    def put(self, key: int, vec: np.ndarray, project: int, labels: tuple[int, int],
            created: int) -> bool:
        """False when it would take more than `max_bytes`."""
        if self.home.get(key, project) != project:
            self.drop(key)
        block = self.blocks.get(project) or Arrays(self.dim, 0)
        if block.n == block.capacity and key not in block.where:
            others = self.nbytes() - (block.nbytes() if project in self.blocks else 0)
            room = (self.max_bytes - others) // Arrays.bytes_for(self.dim, 1)
            if room <= block.n:
                return False
            block = block.grown(min(room, max(block.capacity * 3 // 2, block.capacity + 16)))
        self.blocks[project] = block
        block.put(key, vec, labels, created)
        self.home[key] = project
        return True

    def drop(self, key: int) -> None:
        project = self.home.pop(key, None)
        if project is not None:
            self.blocks[project].drop(key)

    def vector(self, key: int) -> np.ndarray:
        block = self.blocks[self.home[key]]
        return block.vecs[block.where[key]]

    def clear(self) -> None:
        for block in self.blocks.values():
            block.vecs[:] = 0


__all__ = ["ROW_BYTES", "Arrays", "Held"]
