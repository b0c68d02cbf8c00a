"""A check command is never rewritten (issue 26, item 4).

A check holding a value that looks like a credential is refused -- claims and
tasks, one rule (``ouro.proof.checkrun.check_command``) -- with the reason and
what to do; every other check is stored and run exactly as typed. Redaction of
Arc text stops at whitespace and shell metacharacters, so wherever it applies
it cannot eat a command's separators.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ouro.arc import claims
from ouro.bundle import Bundle
from ouro.desk.tasks import add_task, update_task
from ouro.desk.tracks import add_track
from ouro.errors import InvalidInput
from ouro.proof.redact import redact
from tests.conftest import ouro_json, run_ouro, snapshot

SECRET_CHECKS = [
    "echo password=abc; echo ok",
    "grep -q token=placeholder config.ini",  # the redactor's rules call this a secret
    "curl -u deploy:hunter22 https://x && echo ok",
    "deploy --password hunter22 | tee log",
    "curl 'https://x.example/cb?access_token=abc123&page=2'",
    'curl -H "Authorization: Bearer opaqueQ7xZ2mK9pL4vR8sT" https://x',
    "export DB_PASSWORD=hunter22\n./run",
]

#: checks with nothing secret in them: stored and run exactly as typed
PLAIN_CHECKS = [
    "echo ok; echo done",
    "test -f a && test -f b || echo missing | tee out > log 2>&1",
    'test -n "$TOKEN" && curl -H "Authorization: Bearer $TOKEN" https://x; echo ok',
    "curl --token ${API_TOKEN} https://x; echo ok",
    "PASSWORD=$(cat secret.txt) ./login; echo ok",
    "grep -q 'sort_key: created' config.yaml",
]


@pytest.fixture
def ops(bundle: Bundle) -> Bundle:
    add_track(bundle, "ops")
    return bundle


@pytest.mark.parametrize("check", SECRET_CHECKS)
def test_a_claim_check_holding_a_secret_is_refused(bundle: Bundle, check: str) -> None:
    before = snapshot(bundle.root)
    proc = run_ouro("claim", "add", "it works", "--check", check, bundle=bundle)
    assert proc.returncode == 2, proc.stdout
    assert "check: the command holds a value that looks like a credential" in proc.stderr
    assert "environment variable" in proc.stderr and "$TOKEN" in proc.stderr
    assert snapshot(bundle.root) == before  # nothing stored, rewritten or not


def test_a_task_check_follows_the_same_rule(ops: Bundle) -> None:
    task = add_task(ops, "ops", "y", check="true")
    before = snapshot(ops.root)
    for check in SECRET_CHECKS:
        added = run_ouro("desk", "task", "add", "ops", "x", "--check", check, bundle=ops)
        assert added.returncode == 2 and "looks like a credential" in added.stderr, check
        with pytest.raises(InvalidInput, match="looks like a credential"):
            update_task(ops, task.id, check=check)
        updated = run_ouro("desk", "task", "update", task.id, "--check", check, bundle=ops)
        assert updated.returncode == 2 and "looks like a credential" in updated.stderr
    assert snapshot(ops.root) == before


def test_the_refusal_names_what_looked_secret(bundle: Bundle) -> None:
    with pytest.raises(InvalidInput) as caught:
        claims.add_claim(bundle, "x", check="grep -q token=placeholder config.ini")
    assert "(secret): grep -q token=[redacted:secret] config.ini" in caught.value.message
    assert "placeholder" not in str(caught.value)  # the error never repeats the value


def test_a_literal_listed_in_bundle_json_counts(bundle: Bundle) -> None:
    from ouro.proof.checkrun import check_command

    meta = json.loads(bundle.meta_path.read_text())
    meta["redact"] = {"literals": ["corp-internal-7"]}
    bundle.meta_path.write_text(json.dumps(meta))
    with pytest.raises(InvalidInput, match=r"\(literal\)"):
        check_command(bundle, "ping corp-internal-7")


def test_other_checks_are_stored_and_run_exactly_as_typed(ops: Bundle) -> None:
    for check in PLAIN_CHECKS:
        claim = ouro_json("claim", "add", "x", "--check", check, bundle=ops)
        assert claim["check"] == check
        on_disk = json.loads((ops.root / claim["locator"]).read_text())
        assert on_disk["check"] == check
        task = ouro_json("desk", "task", "add", "ops", "t", "--check", check, bundle=ops)
        assert task["task"]["check"] == check


def test_verify_runs_the_command_as_typed(bundle: Bundle) -> None:
    check = 'test -z "$NOPE_TOKEN" && echo one; echo two | cat'
    claim = claims.add_claim(bundle, "x", check=check)
    out = claims.verify_claim(bundle, claim["id"])
    assert out["run"]["command"] == check and out["evidence"][-1]["command"] == check
    assert out["run"]["exitCode"] == 0 and out["run"]["tail"] == "one\ntwo"
    assert out["evidence"][-1]["provenance"] == "observed-by-ouro"


# --- redaction never eats a separator ------------------------------------------

SEPARATORS = [";", "&&", "||", "|", "&", "\n", ")", ">", "<", " ", "\t"]


@pytest.mark.parametrize("sep", SEPARATORS)
@pytest.mark.parametrize(
    "lead",
    [
        "password=",
        "DB_PASSWORD=",
        "--token ",
        "--password=",
        "?token=",
        "-u deploy:",
        "Authorization: ",
        "url https://u:",
    ],
)
def test_redaction_stops_at_shell_metacharacters(lead: str, sep: str) -> None:
    value = "hunter22Q7xZ2mK9"
    tail = "@host" if lead.startswith("url") else ""
    text = f"echo {lead}{value}{tail}{sep}echo ok"
    out = redact(text)
    if value in out:  # e.g. the URL password needs its '@' before the separator
        assert out == text
    else:
        assert out.endswith(f"{sep}echo ok"), out
        assert out.startswith(f"echo {lead}"), out


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ('echo "password=abc"; echo ok', '"; echo ok'),
        ("echo 'password=abc' && echo ok", "' && echo ok"),
        ('password="a b; c"; echo ok', '"; echo ok'),
    ],
)
def test_quoted_values_are_replaced_inside_their_quotes(text: str, kept: str) -> None:
    out = redact(text)
    assert out.endswith(kept) and "[redacted:password]" in out


@pytest.mark.parametrize(
    "text",
    [
        "password=$DB_PASSWORD",
        "password=${TOKEN}",
        "token: ${TOKEN:-none}",
        "--token $TOKEN",
        "Authorization: Bearer $(cat token.txt)",
        "?token=$TOKEN",
        '{"password": "$PW"}',
    ],
)
def test_a_shell_reference_is_not_a_secret(text: str) -> None:
    assert redact(text) == text


_META = set(";&|()<>\n\t ")


@given(
    lead=st.sampled_from(["password=", "api_key: ", "--secret ", "&sig=", "-u u:", "token="]),
    value=st.text(
        st.characters(blacklist_categories=("Cs", "Cc", "Zs"), blacklist_characters="\"'`$;&|()<>"),
        min_size=3,
        max_size=30,
    ),
    sep=st.sampled_from(SEPARATORS),
    rest=st.text(st.sampled_from(list("ab ;&|()<>\n")), max_size=20),
)
def test_redaction_keeps_every_separator(lead: str, value: str, sep: str, rest: str) -> None:
    text = f"run {lead}{value}{sep}{rest}"
    out = redact(text)
    assert [c for c in out if c in _META] == [c for c in text if c in _META]
