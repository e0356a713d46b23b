"""PostgreSQL + pgvector: the team's shared store (`--db postgresql://...`).

The same repositories as SQLite's, written once (`hippo.store.sql`), over psycopg 3; here
is what PostgreSQL does its own way (pgvector, tsvector, row-level security). Writers take one transaction-scoped
advisory lock per hippo schema, as SQLite's writers take its write lock, so every
read-then-write of hippo's (write-time dedup, counters, jobs) holds under concurrent
writers; readers never wait (MVCC). docs/postgres.md says what a team gets.
"""
