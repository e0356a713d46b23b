"""`layer_sizes`: each layer's token cost, consistent with what `hippo context` prints."""

from __future__ import annotations

from pathlib import Path

from hippo.embed import tokens
from hippo.layers import layer_sizes
from hippo.store import connect


def test_sizes_match_the_commands(cli, rules_db: Path) -> None:
    sizes = layer_sizes(connect(rules_db), "A")
    floor = sizes["rule_floor"]
    *_, summary = cli("context", "-p", "A", "--json").records
    assert floor["memories"] == 66 and floor["budget"] == 800 and floor["unverified"] == 21
    assert floor["loaded"] == summary["included"] and floor["loaded_tokens"] == summary["tokens"]
    *every, _ = cli("context", "-p", "A", "--json", "--budget", "100000").records
    whole = "## Rules (project: A)\n" + "".join(f"- {r['text']}\n" for r in every)
    assert floor["tokens"] == tokens.count(whole) > floor["loaded_tokens"]
    assert sizes["guidance"]["memories"] == 2 and sizes["guidance"]["loaded"] == 2
    # Curated retrieval (search) holds every active rule, reviewed or not.
    assert sizes["curated"]["memories"] == 87 + 3  # active rules, procedure, tool, fact
    assert sizes["echo"] == {"chunks": 0, "tokens": 0}
    everything = layer_sizes(connect(rules_db), None, all_projects=True, echo=False)
    assert everything["rule_floor"]["memories"] == 170 and "echo" not in everything
