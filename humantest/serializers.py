from django.contrib.auth import get_user_model
from rest_framework import serializers

from accounts.roles import TESTER
from humantest.models import PLAN_CHOICES, TestPlan


class TestPlanSerializer(serializers.ModelSerializer):
    """A test plan. POST one to invite testers; its results and trials have their own endpoints.

    The plan's rules are checked when it is made (`plans.create_test_plan`), each broken one
    answered with a 400 naming its field."""

    __test__ = False  # not a pytest test class

    testers = serializers.SlugRelatedField(
        slug_field="username",
        many=True,
        queryset=get_user_model().objects.filter(groups__name=TESTER).distinct(),
        help_text="Usernames of the invited testers (users with the tester role).",
    )
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    pooled_submission = serializers.PrimaryKeyRelatedField(read_only=True)
    practice_items = serializers.ListField(child=serializers.CharField(), required=False)
    fixed_items = serializers.ListField(child=serializers.CharField(), required=False)

    class Meta:
        model = TestPlan
        fields = ["id", *PLAN_CHOICES, "pooled_submission", "created_by", "created_at"]
        read_only_fields = ["id", "pooled_submission", "created_by", "created_at"]
