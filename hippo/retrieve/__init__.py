"""Retrieval: Brain and Echo search, stage by stage (`hippo search`, `hippo echo`)."""
