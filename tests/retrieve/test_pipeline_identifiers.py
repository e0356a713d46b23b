"""Exact identifiers are found by BM25 although the real embedding model ranks them low.

Each identifier sits inside a long note about something else, among a dozen memories
on its topic that do not contain it: MiniLM (the default local model) puts the note far
down its list, BM25 puts it first, and fusion brings it to the top.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import hippo
from hippo.memory.records import from_input

TARGETS = {
    "ERR_SSL_PROTOCOL_ERROR": "Friday standup notes: Dana owns the quarterly budget review, the "
    "office move is postponed to March, and the kiosk browser still logs ERR_SSL_PROTOCOL_ERROR",
    "src/app.py": "Onboarding checklist for new hires: laptop, badge, payroll forms, lunch with "
    "the team, then read src/app.py",
    "--no-verify": "Retro summary: the sprint went well, velocity was steady, morale is high; "
    "reminder that nobody uses --no-verify",
}
NEAR_MISSES = [
    "SSL handshake failures on the staging load balancer after the certificate rotation",
    "TLS protocol version mismatch between the old Java client and the new gateway",
    "The browser rejects the connection because the server offers an obsolete SSL protocol",
    "Protocol errors in the SSL layer usually mean the cipher suites do not overlap",
    "Certificate chain incomplete: intermediate CA missing, clients report SSL errors",
    "An SSL error page appears when the proxy intercepts HTTPS traffic",
    "The error code for a failed TLS negotiation is logged by the ingress",
    "SSL protocol errors disappeared after enabling TLS 1.2 on the origin",
    "Secure connection failed: the peer sent an unexpected SSL record",
    "Network error codes from Chromium are listed in net_error_list.h",
    "HTTPS requests fail with a protocol error when port 443 serves plain HTTP",
    "Self-signed certificates trigger an SSL warning in every browser",
    "The Python application package is laid out with the src directory convention",
    "The web app's main module creates the Flask application and registers routes",
    "Application source files live under the src folder of the repository",
    "The app entry module is small; business logic lives in services",
    "Python files are formatted with ruff format before commit",
    "The application starts from a single Python module that builds the server",
    "Source code for the API app is in the src tree; tests are separate",
    "The main app file imports settings and wires the database session",
    "Django apps are registered in INSTALLED_APPS in the settings module",
    "The py launcher picks the interpreter version on Windows machines",
    "Our app module exposes create_app for the test suite",
    "Each microservice keeps its app code in a src package",
    "Git hooks verify formatting and secrets before every commit",
    "Skipping the pre-commit checks is not allowed on any branch",
    "Commit verification hooks run ruff, mypy and the secret scanner",
    "Never bypass the commit hooks, even for a one-line fix",
    "Pushing without running the verification step breaks the build",
    "Signed and verified commits are required for release tags",
    "The hook verification step can be slow on a cold cache",
    "Disabling git hooks is forbidden by the contribution guide",
    "Commit checks must pass locally before a push",
    "Verification of commits happens again in CI",
    "Flags that skip safety checks must never be used in this repository",
    "Verify the pre-push hook output before merging",
]


def test_identifiers_found_although_the_vector_side_misses_them(
    cli: Callable[..., object], db_path: Path
) -> None:
    h = hippo.open(db_path, embedder="local")
    texts = [*TARGETS.values(), *NEAR_MISSES]
    h.add([from_input({"text": t}, h.types, default_project="testproj") for t in texts])
    h.embed(list(TARGETS))  # query vectors cached: the CLI calls below load no model
    h.close()
    for query, text in TARGETS.items():
        r = cli("search", "--json", "--explain", "--", query, embedder=None)
        assert r.exit_code == 0, r.stderr
        top = r.records[0]
        assert top["text"] == text, (query, [x["text"] for x in r.records])
        e = top["explain"]
        assert e["bm25"]["rank"] == 1
        assert e["vector"] is None or e["vector"]["rank"] > 5, (query, e["vector"])
        assert top["degraded"] == []
