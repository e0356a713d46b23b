"""Operations on a whole store: doctor, the figures `hippo stats` shows, moving a store (export/import), and the job context every job runs in."""
