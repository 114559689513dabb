"""Choosing the interface's language in the page header: signed-in people and anonymous visitors alike.

A signed-in person's choice is their preference (accounts.Preference, any device they sign in on);
an anonymous visitor's, on the log-in page for one, is Django's language cookie. Both go through the
CSRF check and go back only to an address of this site.
"""

import pytest
from django.conf import settings
from django.test import Client

from accounts.models import Preference
from tests.factories import make_user

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"
CHOOSE = "/accounts/language/"


def csrf_client() -> tuple[Client, str]:
    """A browser that has opened the log-in page: CSRF checked, holding the page's token."""
    client = Client(enforce_csrf_checks=True)
    page = client.get(LOGIN)
    assert page.status_code == 200
    return client, client.cookies[settings.CSRF_COOKIE_NAME].value


def test_the_log_in_page_offers_the_language_menu_to_anonymous_visitors(client):
    page = client.get(LOGIN).content.decode()
    assert 'id="language-form"' in page and f'action="{CHOOSE}"' in page
    assert 'value="zh-hans"' in page and "简体中文" in page
    assert 'name="next" value="/accounts/login/"' in page


def test_an_anonymous_visitor_choosing_chinese_gets_the_log_in_page_in_chinese():
    client, token = csrf_client()
    response = client.post(CHOOSE, {"language": "zh-hans", "next": LOGIN, "csrfmiddlewaretoken": token})
    assert response.status_code == 302 and response["Location"] == LOGIN
    assert client.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    page = client.get(LOGIN)
    assert page.status_code == 200 and page["Content-Language"] == "zh-hans"
    assert '<html lang="zh-hans">' in page.content.decode()
    assert Preference.objects.count() == 0  # nobody's account was touched
    # And back to English.
    client.post(CHOOSE, {"language": "en", "next": LOGIN, "csrfmiddlewaretoken": token})
    assert client.get(LOGIN)["Content-Language"] == "en"


def test_an_anonymous_choice_without_the_csrf_token_is_refused():
    client, _ = csrf_client()
    response = client.post(CHOOSE, {"language": "zh-hans", "next": LOGIN})
    assert response.status_code == 403
    assert settings.LANGUAGE_COOKIE_NAME not in client.cookies


@pytest.mark.parametrize(
    "target", ["https://evil.example.org/", "//evil.example.org/x", "http:///evil.example.org"]
)
def test_a_choice_goes_back_only_to_this_site(client, target):
    response = client.post(CHOOSE, {"language": "zh-hans", "next": target})
    assert response.status_code == 302 and response["Location"] == "/"


def test_an_unknown_language_changes_nothing(client):
    response = client.post(CHOOSE, {"language": "xx", "next": LOGIN})
    assert response.status_code == 302 and settings.LANGUAGE_COOKIE_NAME not in response.cookies
    assert client.get(LOGIN)["Content-Language"] == "en"


def test_choosing_is_a_post(client):
    assert client.get(CHOOSE).status_code == 405


def test_a_signed_in_choice_is_the_persons_preference_and_outlives_logging_out(client):
    person = make_user("ann", "annotator")
    client.force_login(person)
    response = client.post(CHOOSE, {"language": "zh-hans", "next": "/"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert Preference.objects.get(user=person).language == "zh-hans"
    assert client.get("/")["Content-Language"] == "zh-hans"
    client.post("/accounts/logout/")
    assert client.get(LOGIN)["Content-Language"] == "zh-hans"  # the log-in page keeps the choice
