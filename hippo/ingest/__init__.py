"""Ingest: transcript files read into Echo, verbatim and chunked (`hippo ingest`)."""
