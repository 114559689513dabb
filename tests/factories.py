"""Users with roles, for tests."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from accounts.roles import sync_roles

PASSWORD = "a-long-test-password"


def make_user(username: str, *roles: str):
    sync_roles()
    user = get_user_model().objects.create_user(username=username, password=PASSWORD)
    for role in roles:
        user.groups.add(Group.objects.get(name=role))
    return user
