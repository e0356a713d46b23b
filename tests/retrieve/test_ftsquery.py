"""A query's terms and their FTS5 spelling: exact outputs, and proof against real FTS5 that
any text is safe."""

from __future__ import annotations

import re
from collections.abc import Iterator

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo.retrieve.ftsquery import match_terms, terms, tokens
from hippo.store.sqlite.lexical import fts5_match, quote


def build_match(query: str, mode: str = "and", **kw: object) -> str | None:
    """What SQLite is asked: the query's terms (`match_terms`) in FTS5 syntax."""
    found = match_terms(query, mode, **kw)  # type: ignore[arg-type]
    return None if found is None else fts5_match(found)

ROWS = {
    1: "Fix the import cycle in src/app.py before release",
    2: "Chrome shows ERR_SSL_PROTOCOL_ERROR behind the corporate proxy",
    3: "Never run git commit --no-verify on main",
    4: "Set key:value pairs in hippo.toml",
    5: "Build fails with E1234 when the cache is cold",
    6: "deploy failed 🔥 on friday",
    7: "Café naïve résumé: keep diacritics out of slugs",
}

# What a query becomes in FTS5: quoted strings (inner quotes doubled) joined by space or OR.
_STRING = r'"(?:[^"]|"")*"'
GRAMMAR = re.compile(rf"{_STRING}(?:(?: | OR ){_STRING})*")


@pytest.fixture(scope="module")
def db() -> Iterator[apsw.Connection]:
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61')")
    for rowid, text in ROWS.items():
        conn.execute("INSERT INTO t(rowid, text) VALUES (?, ?)", (rowid, text))
    yield conn
    conn.close()


def match(conn: apsw.Connection, expr: str) -> set[int]:
    """Rowids matching `expr`; raises apsw.SQLError if FTS5 rejects the syntax."""
    return {row[0] for row in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,))}


def check(conn: apsw.Connection, query: str) -> dict[str, set[int] | None]:
    """Build both modes, check the grammar, run them; return the hits per mode."""
    hits: dict[str, set[int] | None] = {}
    for mode in ("and", "or"):
        expr = build_match(query, mode)  # type: ignore[arg-type]
        if expr is None:
            hits[mode] = None
            continue
        assert GRAMMAR.fullmatch(expr), expr
        hits[mode] = match(conn, expr)
    return hits


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("src/app.py", '"src app py"'),
        ("ERR_SSL_PROTOCOL_ERROR", '"ERR SSL PROTOCOL ERROR"'),
        ("--no-verify", '"no verify"'),
        ("key:value", '"key value"'),
        ("E1234", '"E1234"'),
        ("git commit --force", '"git" "commit" "force"'),
        ('fix the "src/app.py', '"fix" "src app py"'),
        ("NOT", '"NOT"'),
        ("the who", '"the" "who"'),
        ("NEAR(a b)", '"NEAR a" "b"'),
        ("c++ -x +y ^z *", '"c" "x" "y" "z"'),
        ("Error error ERROR", '"Error"'),
        ("don't panic", '"panic"'),
        ("Caroline's support group", '"Caroline" "support" "group"'),
        ("Melanie\u2019s kids", '"Melanie" "kids"'),
        ("O'Neil's car", '"O Neil" "car"'),
        ("rock'n'roll key:s", '"rock n roll" "key s"'),
        ("don't", '"don t"'),
        ("I'm", '"I m"'),
        ("", None),
        ("   \t\n", None),
        ('*** "" () ^ :', None),
    ],
)
def test_build_match_and(query: str, expected: str | None) -> None:
    assert build_match(query) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("how do I fix the login bug", '"fix" OR "login" OR "bug"'),
        ("what about src/app.py and --no-verify", '"src app py" OR "no verify"'),
        ("NOT AND OR", None),
        ("", None),
    ],
)
def test_build_match_or_drops_stopwords(query: str, expected: str | None) -> None:
    assert build_match(query, "or") == expected


def test_and_mode_drops_stopwords_when_something_else_remains() -> None:
    assert build_match("what is the deploy target") == '"deploy" "target"'
    assert build_match("what is the deploy target", stopwords=frozenset()) == (
        '"what" "is" "the" "deploy" "target"'
    )


def test_max_terms_caps_terms_and_phrase_length() -> None:
    words = " ".join(f"w{i}" for i in range(100))
    expr = build_match(words, max_terms=64)
    assert expr is not None and expr.count('"') == 128
    assert build_match("a/b/c/d/e", max_terms=3) == '"a b c"'
    with pytest.raises(ValueError, match="max_terms"):
        build_match("x", max_terms=0)
    with pytest.raises(ValueError, match="mode"):
        build_match("x", "near")  # type: ignore[arg-type]


def test_terms_and_tokens() -> None:
    assert terms("Fix src/app.py, then E1234!") == ["Fix", "src app py", "then", "E1234"]
    assert tokens("naïve café_2 数据库") == ["naïve", "café", "2", "数据库"]
    assert tokens("\u0301\u0302 a") == ["a"]  # bare combining marks are no word
    assert quote('say "hi"') == '"say ""hi"""'


HOSTILE = [
    "src/app.py",
    "ERR_SSL_PROTOCOL_ERROR",
    "--no-verify",
    "key:value",
    "E1234",
    "NOT",
    "AND",
    "OR",
    "NEAR(src app, 2)",
    "*",
    "^start",
    '"unbalanced quote src/app.py',
    "(E1234",
    "E1234)",
    "NOT src/app.py",
    "git commit --no-verify",
    "🔥🔥 deploy failed 🚀",
    "x" * 10_240,
    ('src/app.py AND -foo "bar" (baz) col:E1234 NEAR/3 ^x * ' * 300)[:10_240],
    "",
    '""""',
    "C:\\Users\\dev\\app.py",
    "Robert'); DROP TABLE t;--",
    "\x00 nul byte \x00 E1234",
    "{text}: ERR_SSL_PROTOCOL_ERROR",
]

# Hostile queries that name something stored: the AND query must find that row.
FINDS = {
    "src/app.py": 1,
    "ERR_SSL_PROTOCOL_ERROR": 2,
    "--no-verify": 3,
    "key:value": 4,
    "E1234": 5,
    '"unbalanced quote src/app.py': None,  # "unbalanced"/"quote" are not stored
    "(E1234": 5,
    "E1234)": 5,
    "NOT src/app.py": 1,
    "git commit --no-verify": 3,
    "🔥🔥 deploy failed 🚀": 6,
    "\x00 nul byte \x00 E1234": None,
}


def test_hostile_list_is_25() -> None:
    assert len(HOSTILE) == 25 and len(set(HOSTILE)) == 25


@pytest.mark.parametrize("query", HOSTILE, ids=lambda q: repr(q[:30]))
def test_hostile_queries_build_valid_fts5(db: apsw.Connection, query: str) -> None:
    hits = check(db, query)
    if query in FINDS and FINDS[query] is not None:
        assert hits["and"] == {FINDS[query]}
        assert hits["or"] is not None and FINDS[query] in hits["or"]
    if not query.strip() or query == '""""' or query == "*":
        assert hits == {"and": None, "or": None}


def test_or_mode_finds_any_named_identifier(db: apsw.Connection) -> None:
    expr = build_match("src/app.py --no-verify E1234 unrelated", "or")
    assert expr is not None and match(db, expr) == {1, 3, 5}
    # The AND form needs every term, so it finds nothing: the pipeline falls back to OR.
    and_expr = build_match("src/app.py --no-verify E1234 unrelated")
    assert and_expr is not None and match(db, and_expr) == set()


def test_possessive_query_finds_the_plain_word() -> None:
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t(rowid, text) VALUES (1, 'Caroline joined a support group')")
    conn.execute("INSERT INTO t(rowid, text) VALUES (2, 'Caroline''s group meets weekly')")
    for mode in ("and", "or"):
        expr = build_match("Caroline's group", mode)  # type: ignore[arg-type]
        assert expr is not None and match(conn, expr) == {1, 2}
    assert terms("it's what we're doing, isn't it") == ["it", "what", "we", "doing", "not"]
    assert terms("it's", keep_clitics=True) == ["it s"]


def test_diacritics_and_stemming_still_match(db: apsw.Connection) -> None:
    assert match(db, build_match("cafe resume") or "") == {7}
    assert match(db, build_match("building failed") or "") == {5}


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_builds_valid_fts5(db: apsw.Connection, query: str) -> None:
    check(db, query)


HOSTILE_ALPHABET = st.sampled_from(
    list("\"'*^:()-+/\\._{}[],;!?@#$%&=<>|~` \t\n\x00") + ["AND", "OR", "NOT", "NEAR", "app", "é"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(HOSTILE_ALPHABET, max_size=40).map("".join))
def test_operator_soup_builds_valid_fts5(db: apsw.Connection, query: str) -> None:
    check(db, query)


# Characters on which our tokenizer and SQLite's unicode61 are known to agree.
AGREED = st.characters(max_codepoint=0x2FF) | st.sampled_from(
    list("数据库İıßøœ\u0301\u0308") + ["\U0001f525"]
)


@settings(max_examples=200, deadline=None)
@given(st.text(AGREED, max_size=60))
def test_tokens_agree_with_fts5_unicode61(db: apsw.Connection, text: str) -> None:
    tokenizer = db.fts5_tokenizer("unicode61")

    def fts(s: str) -> list[str]:
        return [str(t[-1]) for t in tokenizer(s.encode(), apsw.FTS5_TOKENIZE_DOCUMENT, None)]

    ours = [piece for token in tokens(text) for piece in fts(token)]
    assert ours == fts(text)


def test_terms_say_when_and_and_or_find_the_same_rows() -> None:
    one_and, one_or = match_terms("deploy"), match_terms("deploy", "or")
    assert one_and is not None and one_or is not None and one_and.same_match(one_or)
    two_and, two_or = match_terms("deploy target"), match_terms("deploy target", "or")
    assert two_and is not None and two_or is not None and not two_and.same_match(two_or)
    assert fts5_match(two_or) == '"deploy" OR "target"'


@pytest.mark.parametrize(("query", "extra"), [
    ("Do the SessionLive tests pass?", ["Session Live"]),
    ("HTTPServer and TranscriptSelection", ["HTTP Server", "Transcript Selection"]),
    ("iOS x2 café snake_case", []),  # a one-letter part, digits, not ASCII, a phrase already
])
def test_or_mode_also_reads_a_camel_case_word_as_its_parts(query: str, extra: list[str]) -> None:
    found = match_terms(query, "or")
    assert found is not None and [w for w in found.words if w not in terms(query)] == extra
    every = match_terms(query, "and")  # and-mode stays as written
    assert every is not None and not set(extra) & set(every.words)


def test_a_camel_case_query_finds_the_file_named_in_snake_case() -> None:
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t(rowid, text) VALUES (1, '`mix test test/session_live_test.exs`: "
                 "12 tests, 0 failures')")
    conn.execute("INSERT INTO t(rowid, text) VALUES (2, 'The LiveView renders rows')")
    expr = build_match("SessionLive LiveView", "or")
    assert expr is not None and match(conn, expr) == {1, 2}
