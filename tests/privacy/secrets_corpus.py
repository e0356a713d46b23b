"""A corpus of secret shapes real tools issue, with realistic but fake values.

Each `Secret` is a line a developer or an agent could write (a shell command, a config
line, a header, a connection string, a JSON body) and the secret value in it. Values are
drawn from a seeded generator in each vendor's documented shape, so the redactor meets
the real format, never a copy of a fixture it was tuned on.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

RUN = 12  # no run of this many characters of a secret may survive anywhere


@dataclass(frozen=True)
class Secret:
    kind: str
    line: str  # the secret in context
    value: str  # what must not survive
    public: str = ""  # a vendor's fixed prefix of the value (it names the kind, no secret)

    def runs(self) -> set[str]:
        """Every RUN-character run of the value (the whole value when shorter), lines apart,
        but those inside the public prefix."""
        out: set[str] = set()
        for part in self.value.splitlines():
            part = part.strip()
            if part.startswith("-----"):  # a PEM label names the kind, it is no secret
                continue
            if len(part) <= RUN:
                if len(part) >= 8:
                    out.add(part)
                continue
            skip = len(self.public) - RUN + 1 if part.startswith(self.public) else 0
            out.update(part[i : i + RUN] for i in range(max(skip, 0), len(part) - RUN + 1))
        return out


_ALNUM = string.ascii_letters + string.digits
_B64URL = _ALNUM + "-_"


class _Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def pick(self, alphabet: str, n: int) -> str:
        """n characters with at least one digit, one upper and one lower (when possible)."""
        while True:
            s = "".join(self.r.choice(alphabet) for _ in range(n))
            need = [set(string.digits), set(string.ascii_uppercase), set(string.ascii_lowercase)]
            if all(not (k & set(alphabet)) or (k & set(s)) for k in need):
                return s

    def alnum(self, n: int) -> str:
        return self.pick(_ALNUM, n)

    def b64url(self, n: int) -> str:
        return self.pick(_B64URL, n)

    def hex(self, n: int) -> str:
        return self.pick("0123456789abcdef", n)

    def upper(self, n: int) -> str:
        return self.pick(string.ascii_uppercase + string.digits, n)

    def b64(self, nbytes: int) -> str:
        return base64.b64encode(self.r.randbytes(nbytes)).decode()

    def digits(self, n: int) -> str:
        return "".join(self.r.choice(string.digits) for _ in range(n))

    def password(self) -> str:
        return self.pick(_ALNUM, 10) + self.r.choice("!#%^*~") + self.alnum(3)


def _jwt(g: _Gen) -> str:
    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    return (part({"alg": "HS256", "typ": "JWT"}) + "." +
            part({"sub": g.digits(10), "name": g.alnum(12), "iat": int(g.digits(9))}) + "." +
            g.b64url(43))


def _pem(g: _Gen, label: str) -> str:
    body = base64.b64encode(g.r.randbytes(300)).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----"


def corpus(seed: int = 17) -> list[Secret]:
    """At least 60 shapes; the same list for the same seed."""
    g = _Gen(seed)
    out: list[Secret] = []

    def add(kind: str, value: str, template: str = "{v}", public: str = "") -> None:
        out.append(Secret(kind, template.format(v=value), value, public))

    # Model providers.
    add("openai", f"sk-proj-{g.b64url(48)}T3BlbkFJ{g.b64url(48)}", "export OPENAI_API_KEY={v}")
    add("openai-legacy", f"sk-{g.alnum(20)}T3BlbkFJ{g.alnum(20)}", "openai.api_key = '{v}'")
    add("openai-svcacct", f"sk-svcacct-{g.b64url(64)}", "key: {v}")
    add("anthropic", f"sk-ant-api03-{g.b64url(93)}AA", "ANTHROPIC_API_KEY={v} claude")
    add("anthropic-admin", f"sk-ant-admin01-{g.b64url(93)}AA", "admin key {v}")
    add("huggingface", "hf_" + g.pick(string.ascii_letters, 34), "huggingface-cli login --token {v}")
    add("groq", f"gsk_{g.alnum(52)}", "GROQ_API_KEY={v}")
    add("replicate", f"r8_{g.alnum(37)}", "REPLICATE_API_TOKEN={v}")
    add("perplexity", f"pplx-{g.alnum(48)}", "curl -H 'x-key: {v}' https://api.perplexity.ai")
    add("xai", f"xai-{g.alnum(80)}", "use {v} for grok")
    add("google-api", f"AIza{g.b64url(35)}", "https://maps.googleapis.com/maps/api/js?key={v}")
    add("google-oauth-secret", f"GOCSPX-{g.b64url(28)}", '"client_secret":"{v}"')
    add("google-oauth-token", f"ya29.{g.b64url(120)}", "access_token={v}")
    # Code hosts and registries.
    add("github-pat", f"ghp_{g.alnum(36)}", "git clone https://{v}@github.com/org/repo.git")
    add("github-oauth", f"gho_{g.alnum(36)}", "GH_TOKEN={v} gh pr list")
    add("github-app", f"ghs_{g.alnum(36)}", "installation token {v}")
    add("github-refresh", f"ghr_{g.alnum(76)}", "refresh with {v}")
    add("github-fine-grained", f"github_pat_11{g.upper(20)}_{g.alnum(59)}", "token: {v}")
    add("gitlab-pat", f"glpat-{g.b64url(20)}", "curl --header 'PRIVATE-TOKEN: {v}' https://gitlab.com")
    add("gitlab-deploy", f"gldt-{g.b64url(20)}", "deploy token {v}")
    add("gitlab-runner", f"glrt-{g.b64url(20)}", "gitlab-runner register --token {v}")
    add("npm", f"npm_{g.alnum(36)}", "//registry.npmjs.org/:_authToken={v}")
    add("pypi", f"pypi-AgEIcHlwaS5vcmc{g.b64url(60)}", "password = {v}")
    add("docker-pat", f"dckr_pat_{g.b64url(27)}", "docker login -u dev -p {v}")
    add("bitbucket", f"ATBB{g.alnum(32)}", "app password {v}")
    add("atlassian", f"ATATT3xFfGF0{g.b64url(180)}", "JIRA_API_TOKEN={v}")
    # Cloud.
    add("aws-access-key", "AKIA" + g.upper(16), "aws_access_key_id = {v}")
    add("aws-secret-key", g.pick(_ALNUM + "+/", 40), "aws_secret_access_key = {v}")
    add("aws-session", "ASIA" + g.upper(16), "AWS_ACCESS_KEY_ID={v}")
    add("aws-session-token", g.b64(120), "aws_session_token = {v}")
    add("azure-storage", "AccountKey=" + g.b64(64),
        "DefaultEndpointsProtocol=https;AccountName=devstore;{v};EndpointSuffix=core.windows.net")
    add("digitalocean", f"dop_v1_{g.hex(64)}", "doctl auth init -t {v}")
    add("digitalocean-oauth", f"doo_v1_{g.hex(64)}", "DO token {v}")
    add("vault", f"hvs.{g.b64url(90)}", "VAULT_TOKEN={v}")
    add("doppler", f"dp.pt.{g.alnum(43)}", "DOPPLER_TOKEN={v}")
    add("terraform", f"{g.alnum(14)}.atlasv1.{g.b64url(67)}", 'token = "{v}"')
    add("pulumi", f"pul-{g.hex(40)}", "PULUMI_ACCESS_TOKEN={v}")
    add("tailscale", f"tskey-auth-{g.alnum(12)}-{g.alnum(33)}", "tailscale up --authkey={v}")
    add("fly", f"fo1_{g.b64url(43)}", "FLY_API_TOKEN={v}")
    add("netlify", f"nfp_{g.alnum(40)}", "NETLIFY_AUTH_TOKEN={v}")
    add("supabase", f"sbp_{g.hex(40)}", "supabase login --token {v}")
    add("planetscale", f"pscale_pw_{g.b64url(43)}", "password: {v}")
    add("databricks", f"dapi{g.hex(32)}", "DATABRICKS_TOKEN={v}")
    # Payments, messaging, SaaS.
    add("stripe-secret", f"sk_live_{g.alnum(99)}", "stripe.api_key = \"{v}\"")
    add("stripe-restricted", f"rk_live_{g.alnum(99)}", "restricted {v}")
    add("stripe-test", f"sk_test_{g.alnum(99)}", "STRIPE_SECRET_KEY={v}")
    add("stripe-webhook", f"whsec_{g.alnum(32)}", "endpoint secret {v}")
    add("slack-bot", f"xoxb-{g.digits(12)}-{g.digits(13)}-{g.alnum(24)}", "SLACK_BOT_TOKEN={v}")
    add("slack-user", f"xoxp-{g.digits(12)}-{g.digits(12)}-{g.digits(13)}-{g.hex(32)}",
        "user token {v}")
    add("slack-app", f"xapp-1-A{g.upper(10)}-{g.digits(13)}-{g.hex(64)}", "SLACK_APP_TOKEN={v}")
    add("slack-webhook", f"hooks.slack.com/services/T{g.upper(8)}/B{g.upper(10)}/{g.alnum(24)}",
        "curl -X POST https://{v} -d '{{}}'")
    add("discord-webhook", f"discord.com/api/webhooks/{g.digits(18)}/{g.b64url(68)}",
        "post to https://{v}")
    add("twilio", f"SK{g.hex(32)}", "TWILIO_API_KEY={v}")
    add("sendgrid", f"SG.{g.b64url(22)}.{g.b64url(43)}", "SENDGRID_API_KEY={v}")
    add("mailgun", f"key-{g.hex(32)}", "api:{v}")
    add("mailchimp", f"{g.hex(32)}-us{g.digits(2)[:1] or '1'}", "MAILCHIMP_KEY={v}")
    add("shopify", f"shpat_{g.hex(32)}", "X-Shopify-Access-Token: {v}")
    add("linear", f"lin_api_{g.alnum(40)}", "LINEAR_API_KEY={v}")
    add("notion", f"ntn_{g.alnum(46)}", "NOTION_TOKEN={v}")
    add("postman", f"PMAK-{g.hex(24)}-{g.hex(34)}", "postman key {v}")
    add("sentry", f"sntrys_{g.b64url(60)}", "SENTRY_AUTH_TOKEN={v}")
    add("newrelic", f"NRAK-{g.upper(27)}", "NEW_RELIC_API_KEY={v}")
    add("grafana", f"glsa_{g.alnum(32)}_{g.hex(8)}", "grafana token {v}")
    add("figma", f"figd_{g.b64url(43)}", "FIGMA_TOKEN={v}")
    add("square", f"sq0atp-{g.b64url(22)}", "square {v}")
    add("telegram", f"{g.digits(10)}:AA{g.b64url(33)}", "TELEGRAM_BOT_TOKEN={v}")
    add("age", "AGE-SECRET-KEY-1" + g.pick(string.ascii_uppercase + string.digits, 58), "{v}",
        public="AGE-SECRET-KEY-1")
    # Generic shapes.
    add("jwt", _jwt(g), "Authorization: Bearer {v}")
    add("bearer", g.b64url(40), "curl -H 'Authorization: Bearer {v}' https://api.internal")
    add("basic-auth", base64.b64encode(f"deploy:{g.password()}".encode()).decode(),
        "Authorization: Basic {v}")
    add("rsa-key", _pem(g, "RSA PRIVATE KEY"), "{v}")
    add("openssh-key", _pem(g, "OPENSSH PRIVATE KEY"), "key file:\n{v}\nend")
    add("pgp-key", _pem(g, "PGP PRIVATE KEY BLOCK"), "{v}")
    add("postgres-url", g.password(), "DATABASE_URL=postgres://app:{v}@db.internal:5432/app")
    add("redis-empty-user", g.password(), "redis://:{v}@cache.internal:6379/0")
    add("url-password-at", "p@ss" + g.alnum(12), "https://bob:{v}@git.internal/repo.git")
    add("mysql-flag", g.password(), "mysql -u root --password={v} app")
    add("env-password", g.password(), "DB_PASSWORD={v}")
    add("yaml-password", g.alnum(16), "  password: {v}")
    add("json-secret", g.alnum(24), '{{"client_secret": "{v}"}}')
    add("escaped-json", "letmein" + g.alnum(8),
        '{{"tool":"http","body":"password=\\"{v}\\""}}')
    add("turkish-i", g.alnum(16), "İstanbul deploy: API_KEY={v}")
    return out


def placements(s: Secret) -> dict[str, str]:
    """The same secret as different writers put it: plain, in a tool call's escaped JSON
    arguments, and in a sentence an extractor keeps."""
    return {
        "plain": s.line,
        "tool_json": json.dumps({"command": s.line}),
        "sentence": f"We decided to use this credential for the deploy: {s.line}",
    }
