"""One settings schema (`hippo.config.TABLES`): unknown tables and keys alike are exit 78,
in one line naming the nearest known name; the schema lists what the owners read."""

from __future__ import annotations

import dataclasses

import pytest

from hippo import config


def _fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def test_the_schema_lists_every_field_the_owning_modules_read() -> None:
    from hippo.extract.settings import ExtractSettings
    from hippo.layers.hint import AgentSettings
    from hippo.maintain.settings import MaintainParams
    from hippo.mcp.params import McpParams
    from hippo.memory.memtypes import MemType
    from hippo.paid.spend import Limits
    from hippo.retrieve.params import SearchParams
    from hippo.serve.spawn import ServeParams

    t = config.TABLES
    assert set(t["search"]) == _fields(SearchParams)
    assert set(t["maintain"]) == _fields(MaintainParams)
    assert set(t["extract"]) == _fields(ExtractSettings)
    assert set(t["mcp"]) == _fields(McpParams)
    assert set(t["serve"]) == _fields(ServeParams)
    assert set(t["agents"]) == _fields(AgentSettings)
    assert set(t["guard"]["*"]) == _fields(Limits)
    assert set(t["types"]["*"]) == _fields(MemType) - {"name"}
    assert not set(t) & {o.name for o in config.OPTIONS}


@pytest.mark.parametrize(("text", "message"), [
    ("[serach]\nrrf_k = 3\n", "unknown table [serach] in {c}; did you mean [search]?"),
    ('embeder = "hash"\n', "unknown setting 'embeder' in {c}; did you mean 'embedder'?"),
    ("[search]\nrrf_kk = 3\n", ("unknown setting 'rrf_kk' in [search] of {c}; did you mean "
                               "'rrf_k'?")),
    ("[guard.my-llm]\ncals_per_day = 1\n", ("unknown setting 'cals_per_day' in "
                                            "[guard.my-llm] of {c}; did you mean "
                                            "'calls_per_day'?")),
    ("[types.incident]\ntua_days = 3\n", ("unknown setting 'tua_days' in [types.incident] of "
                                         "{c}; did you mean 'tau_days'?")),
    ("[maintain]\ntreshold = 0.9\n", ("unknown setting 'treshold' in [maintain] of {c}; did "
                                     "you mean 'threshold'?")),
    ("[extract]\nmodle = 'x'\n", ("unknown setting 'modle' in [extract] of {c}; did you mean "
                                 "'model'?")),
    ("search = 3\n", "[search] in {c} must be a table"),
    ("[db]\npath = 'x'\n", "'db' in {c} is a setting, not a table"),
])
def test_an_unknown_table_or_key_is_exit_78_naming_the_nearest(cli, isolated_home, text,
                                                               message) -> None:
    conf = isolated_home / "config.toml"
    conf.write_text(text)
    r = cli("config")
    assert (r.exit_code, r.stdout, r.stderr) == (78, "", f"hippo: {message.format(c=conf)}\n")


def test_without_a_near_name_every_known_one_is_listed(isolated_home) -> None:
    from hippo.errors import ConfigError

    (isolated_home / "config.toml").write_text("[ingest]\nzzzz = 1\n")
    with pytest.raises(ConfigError, match=r"^unknown setting 'zzzz' in \[ingest\] of .*; "
                                          r"known: 'paths'$"):
        config.load()


def test_free_names_and_known_tables_pass(isolated_home) -> None:
    (isolated_home / "config.toml").write_text(
        "rerank = true\n[search]\nrrf_k = 30\n[types.incident]\ntau_days = 3\n"
        "[maintain.retire_days]\nincident = 9\n[guard.openai-chat]\ncalls_per_day = 5\n"
        "[ingest]\npaths = ['x']\n[mcp]\nmax_writes = 3\n")
    s = config.load()
    assert s["rerank"] is True and s.table("search") == {"rrf_k": 30}
