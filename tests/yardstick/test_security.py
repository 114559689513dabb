"""A deployment's defaults and the log-in: production settings, lockouts, password reset, the schema.

Each test is one finding of the security review (issue 10), and failed before its fix.
"""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def settings_in_a_fresh_process(tmp_path, code: str, **environment: str) -> str:
    """Run `code` after Django's setup in a new process whose environment holds only `environment`
    (and what a shell always has), as a deployment would start."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "DATABASE_URL"))}
    env.update(
        YARDSTICK_VAR_DIR=str(tmp_path / "var"), DJANGO_SETTINGS_MODULE="yardstick.settings", **environment
    )
    program = f"import django; django.setup(); from django.conf import settings; {code}"
    result = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_check_deploy_reports_nothing_with_debug_off_a_key_and_the_hosts(tmp_path):
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "DATABASE_URL"))}
    env.update(
        YARDSTICK_VAR_DIR=str(tmp_path / "var"),
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="yardstick.example.org",
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "DEBUG"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_debug_is_off_unless_asked_for_and_https_is_the_default_then(tmp_path):
    shown = settings_in_a_fresh_process(
        tmp_path,
        "print(settings.DEBUG, settings.SECURE_SSL_REDIRECT, settings.SESSION_COOKIE_SECURE, "
        "settings.CSRF_COOKIE_SECURE, settings.SECURE_HSTS_SECONDS > 0)",
    )
    assert shown == "False True True True True"
    # A key was made for this var/ folder, readable by its owner only, and is kept.
    key_file = tmp_path / "var" / "secret_key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert settings_in_a_fresh_process(tmp_path, "print(settings.SECRET_KEY)") == key_file.read_text().strip()
    # `make run` asks for DEBUG; a TLS-terminating proxy relaxes the redirect, naming its header.
    relaxed = settings_in_a_fresh_process(
        tmp_path,
        "print(settings.DEBUG, settings.SECURE_SSL_REDIRECT, settings.SECURE_PROXY_SSL_HEADER)",
        DJANGO_DEBUG="1",
        DJANGO_SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO",
    )
    assert relaxed == "True False ('HTTP_X_FORWARDED_PROTO', 'https')"


def test_passwords_are_stored_with_a_slow_hash_outside_the_tests(tmp_path):
    # The tests hash with one round of MD5 for speed (conftest.py); the app itself keeps Django's
    # PBKDF2 with its hundreds of thousands of rounds.
    shown = settings_in_a_fresh_process(
        tmp_path,
        "from django.contrib.auth.hashers import get_hasher; hasher = get_hasher(); "
        "print(hasher.algorithm, hasher.iterations >= 600_000)",
    )
    assert shown == "pbkdf2_sha256 True"


def test_repeated_failed_log_ins_lock_the_account_for_that_client(settings):
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 3
    make_user("rita", "researcher")
    client = Client()
    for _ in range(3):
        response = client.post(reverse("login"), {"username": "rita", "password": "wrong"})
        assert response.status_code in (200, 429)
    locked = client.post(reverse("login"), {"username": "rita", "password": PASSWORD})
    assert locked.status_code == 429 and "Too many failed log-ins" in locked.content.decode()
    assert "Try again in 15 minutes" in locked.content.decode() and "PT15M" not in locked.content.decode()
    assert "_auth_user_id" not in client.session  # the right password does not get in while locked
    # Another user, or the same one from another address, is not locked.
    make_user("ron", "researcher")
    assert client.post(reverse("login"), {"username": "ron", "password": PASSWORD}).status_code == 302
    elsewhere = Client(REMOTE_ADDR="10.0.0.9")
    assert elsewhere.post(reverse("login"), {"username": "rita", "password": PASSWORD}).status_code == 302


def test_the_api_token_endpoint_is_throttled_and_counts_towards_the_lockout(settings):
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 3
    make_user("script", "researcher")
    api = APIClient()
    codes = [
        api.post("/api/v1/auth/token/", {"username": "script", "password": "wrong"}).status_code
        for _ in range(3)
    ]
    assert codes == [400, 400, 400]
    locked = api.post("/api/v1/auth/token/", {"username": "script", "password": PASSWORD})
    assert locked.status_code in (400, 429) and "token" not in locked.json()
    # And however the guesses are spread over usernames, a client gets a few tries a minute.
    answers = [
        api.post("/api/v1/auth/token/", {"username": f"user{index}", "password": "x"}).status_code
        for index in range(12)
    ]
    assert 429 in answers


def test_without_mail_the_password_reset_says_to_ask_an_admin_and_sends_nothing(client, settings):
    settings.PASSWORD_RESET_BY_EMAIL = False
    make_user("rita", "researcher")
    page = client.get(reverse("login")).content.decode()
    assert reverse("password_reset") not in page and "Ask an administrator" in page
    response = client.post(reverse("password_reset"), {"email": "rita@example.org"})
    assert response.status_code == 404 and "sends no e-mail" in response.content.decode()
    assert mail.outbox == []


def test_with_mail_the_password_reset_sends_the_link(client, settings):
    settings.PASSWORD_RESET_BY_EMAIL = True
    user = make_user("rita", "researcher")
    user.email = "rita@example.org"
    user.save()
    assert reverse("password_reset") in client.get(reverse("login")).content.decode()
    assert client.post(reverse("password_reset"), {"email": "rita@example.org"}).status_code == 302
    assert len(mail.outbox) == 1 and "/accounts/reset/" in mail.outbox[0].body


def test_the_api_schema_and_its_docs_are_for_signed_in_users(client):
    assert client.get("/api/schema/").status_code in (401, 403)
    assert client.get("/api/docs/").status_code in (302, 401, 403)
    client.force_login(make_user("tess", "tester"))
    assert client.get("/api/schema/").status_code == 200
