"""Refusals and errors in the site's layout, saying what to do instead."""

import pytest
from django.test import Client, RequestFactory
from django.views.defaults import server_error

from tests.factories import make_user

pytestmark = pytest.mark.django_db


def test_a_refused_page_keeps_the_menu_and_says_why(client):
    client.force_login(make_user("tess", "tester"))
    response = client.get("/datasets/")
    page = response.content.decode()
    assert response.status_code == 403
    assert 'class="topbar"' in page and "Your tests" in page  # the tester's own menu
    assert "Signed in as tess (tester)" in page and "Go to your home page" in page


def test_a_missing_page_keeps_the_layout(client):
    client.force_login(make_user("rita", "researcher"))
    response = client.get("/datasets/999999/")
    assert response.status_code == 404
    assert (
        'class="topbar"' in response.content.decode() and "There is no such page" in response.content.decode()
    )


def test_the_server_error_page_stands_alone():
    response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    assert "Something went wrong on the server" in response.content.decode()


def test_the_favicon_is_found():
    response = Client().get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")
