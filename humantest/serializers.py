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
    catch_items = serializers.ListField(child=serializers.CharField(), required=False)

    class Meta:
        model = TestPlan
        fields = ["id", *PLAN_CHOICES, "pooled_submission", "created_by", "created_at"]
        read_only_fields = ["id", "pooled_submission", "created_by", "created_at"]


class StudySerializer(serializers.Serializer):
    """A study's settings (humantest/studies.py checks every one when it is changed)."""

    consent_text = serializers.CharField(required=False, allow_blank=True)
    consent_version = serializers.IntegerField(read_only=True)
    opens_at = serializers.DateTimeField(required=False, allow_null=True)
    closes_at = serializers.DateTimeField(required=False, allow_null=True)
    participant_cap = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=10**7)
    idle_limit_s = serializers.IntegerField(required=False, min_value=60, max_value=30 * 24 * 3600)
    completion_code = serializers.CharField(required=False, allow_blank=True, max_length=64)
    completion_url = serializers.CharField(required=False, allow_blank=True, max_length=500)
    screen_out_code = serializers.CharField(required=False, allow_blank=True, max_length=64)
    screen_out_url = serializers.CharField(required=False, allow_blank=True, max_length=500)
    no_consent_code = serializers.CharField(required=False, allow_blank=True, max_length=64)
    no_consent_url = serializers.CharField(required=False, allow_blank=True, max_length=500)
    currency = serializers.CharField(required=False, max_length=3)
    base_pay = serializers.DecimalField(required=False, max_digits=8, decimal_places=2, min_value=0)
    bonus_per_correct = serializers.DecimalField(required=False, max_digits=8, decimal_places=2, min_value=0)
    bonus_threshold = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=1)
    bonus_above = serializers.DecimalField(required=False, max_digits=8, decimal_places=2, min_value=0)
    bonus_cap = serializers.DecimalField(
        required=False, allow_null=True, max_digits=8, decimal_places=2, min_value=0
    )
    stop_against = serializers.CharField(required=False, allow_blank=True, max_length=200)
    stop_metric = serializers.CharField(required=False, allow_blank=True, max_length=32)
    stop_width = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=1_000_000)
    planned_participants = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=10**7
    )
    precision_width = serializers.FloatField(read_only=True)
    stopped_at = serializers.DateTimeField(read_only=True)
    stopped_because = serializers.CharField(read_only=True)


class OpenLinkSerializer(serializers.Serializer):
    platform = serializers.ChoiceField(choices=["prolific", "mturk", "lab"])
    lab_ids = serializers.ListField(child=serializers.CharField(max_length=200), required=False, default=list)


class TestersSerializer(serializers.Serializer):
    __test__ = False

    add = serializers.ListField(
        child=serializers.CharField(max_length=254),
        required=False,
        default=list,
        help_text="Usernames or e-mail addresses.",
    )
    remove = serializers.ListField(child=serializers.CharField(max_length=150), required=False, default=list)


class ExclusionRulesSerializer(serializers.Serializer):
    """A plan's exclusion rules (for the schema: humantest/exclusions.py checks every value)."""

    catch_failures = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    min_median_s = serializers.FloatField(required=False, allow_null=True, min_value=0)
    max_hidden_s = serializers.FloatField(required=False, allow_null=True, min_value=0)
    max_focus_losses = serializers.IntegerField(required=False, allow_null=True, min_value=0)
    exclude_unfinished = serializers.BooleanField(required=False)
