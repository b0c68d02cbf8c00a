"""A seeded set of credential shapes: (kind, text as typed, the part that must never show).

Shared by the redactor tests and the render-surface tests. Built from parts so
this file holds no string that a secret scanner would flag as a real credential.
"""

from __future__ import annotations

_T = "Q7xZ2mK9pL4vR8sT1wY6nB3c"  # a fake high-entropy tail

#: kind -> (text as a user would type it, the secret part that must never appear)
SHAPES: dict[str, tuple[str, str]] = {
    "anthropic_key": ("key sk-" + "ant-api03-" + _T, "sk-" + "ant-api03-" + _T),
    "openai_key": ("sk-" + "proj-" + _T + "AbCd", "sk-" + "proj-" + _T + "AbCd"),
    "github_token": ("gh" + "p_" + _T + "0123456789ab", "gh" + "p_" + _T + "0123456789ab"),
    "github_pat": ("github" + "_pat_" + _T + "_" + _T, "github" + "_pat_" + _T + "_" + _T),
    "gitlab_token": ("glpat" + "-" + _T, "glpat" + "-" + _T),
    "slack_token": ("xox" + "b-123456789012-" + _T, "xox" + "b-123456789012-" + _T),
    "aws_access_key": ("AK" + "IA" + "QWERTYUIOPASDFGH", "AK" + "IA" + "QWERTYUIOPASDFGH"),
    "aws_secret": (
        "aws_secret_access_key=" + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKY",
    ),
    "google_api_key": ("AI" + "za" + _T + "0123456789a", "AI" + "za" + _T + "0123456789a"),
    "stripe_key": ("sk" + "_live_" + _T, "sk" + "_live_" + _T),
    "npm_token": ("npm" + "_" + _T + "abcdefghijkl", "npm" + "_" + _T + "abcdefghijkl"),
    "huggingface_token": ("hf" + "_" + _T + "abcdefghij", "hf" + "_" + _T + "abcdefghij"),
    "sendgrid_key": ("SG" + "." + _T + "." + _T + _T, _T + "." + _T + _T),
    "bearer_token": ("Authorization: Bearer " + "opaque" + _T, "opaque" + _T),
    "basic_auth": (
        "Authorization: Basic " + "ZGVwbG95OmNvcnJlY3QtaG9yc2U=",
        "ZGVwbG95OmNvcnJlY3QtaG9yc2U=",
    ),
    "curl_user": ("curl -u deploy:" + "Horse" + _T[:8] + " https://x", "Horse" + _T[:8]),
    "jwt": (
        "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiJib2IifQ." + "sig" + _T,
        "eyJzdWIiOiJib2IifQ." + "sig" + _T,
    ),
    "url_password": (
        "https://drill:" + "hunter2" + _T[:6] + "@db.example.com/x",
        "hunter2" + _T[:6],
    ),
    "url_token": ("https://x.example/cb?access_token=" + "tok" + _T + "&page=2", "tok" + _T),
    "private_key": (
        "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEv" + _T + "\n-----END " + "RSA PRIVATE KEY-----",
        "MIIEv" + _T,
    ),
    "password_assign": ("password=" + "Zebra" + _T[:10], "Zebra" + _T[:10]),
    "password_quoted": (
        'password: "correct ' + "horse battery " + _T[:5] + '"',
        "horse battery " + _T[:5],
    ),
    "password_json": ('{"db_password": "p4ss ' + "word " + _T[:6] + '"}', "word " + _T[:6]),
    "api_key_colon": ("api_key: " + "k3y" + _T, "k3y" + _T),
    "token_assign": ("token=" + "t0k" + _T[:12], "t0k" + _T[:12]),
    "client_secret": ("client_secret=" + "cs" + _T[:14], "cs" + _T[:14]),
    "env_export": ("export SERVICE_TOKEN=" + "svc" + _T[:9], "svc" + _T[:9]),
    "cli_flag": ("deploy --password " + "Flag" + _T[:9], "Flag" + _T[:9]),
    "azure_account_key": ("AccountName=x;AccountKey=" + "Az" + _T + "==;", "Az" + _T),
}
