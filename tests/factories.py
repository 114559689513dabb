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


def steps_of(item) -> list[dict]:
    """A TRANCE item's true steps as an answer gives them (object, attribute, value)."""
    return [
        {key: step[key] for key in ("obj_idx", "attr", "val")}
        for step in item.ground_truth["transformations"]
    ]


def trance_answers(dataset, right=lambda index, item: True) -> bytes:
    """A TRANCE prediction file for every item of `dataset`: the true steps where `right(index,
    item)` (items in position order), no step elsewhere."""
    import orjson

    return orjson.dumps(
        {
            item.external_id: steps_of(item) if right(index, item) else []
            for index, item in enumerate(dataset.items.order_by("position"))
        }
    )
