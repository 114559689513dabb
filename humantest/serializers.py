from django.contrib.auth import get_user_model
from rest_framework import serializers

from accounts.roles import TESTER
from humantest import plans
from humantest.models import PLAN_CHOICES, TestPlan


class TestPlanSerializer(serializers.ModelSerializer):
    """A test plan. POST one to invite testers; its results and trials have their own endpoints."""

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

    def validate(self, data):
        problems = plans.plan_problems(
            dataset=data["dataset"],
            setting=data.get("setting", ""),
            balance_by=data.get("balance_by", ""),
            draw=data.get("draw", TestPlan.Draw.RANDOM),
            practice_items=data.get("practice_items", []),
            fixed_items=data.get("fixed_items", []),
            row_label=data.get("row_label", "Human"),
        )
        if problems:
            raise serializers.ValidationError({field: [message] for field, message in problems.items()})
        return data
