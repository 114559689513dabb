"""The human-test API under /api/v1/test-plans/: plans, their results and their trials (researchers)."""

from dataclasses import asdict

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, permissions, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.permissions import requires
from benchmarks.selectors import datasets_for
from evaluation.reports import table_json
from humantest import selectors
from humantest.plans import PlanRefused, create_test_plan
from humantest.serializers import TestPlanSerializer


class TestPlanViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    __test__ = False  # not a pytest test class

    serializer_class = TestPlanSerializer
    permission_classes = [permissions.IsAuthenticated, requires("humantest.view_testplan")]

    def get_queryset(self):
        return (
            selectors.plans_for_researcher(self.request.user)
            .prefetch_related("testers")
            .order_by("-created_at")
        )

    def get_permissions(self):
        if self.action == "create":
            return [permissions.IsAuthenticated(), requires("humantest.add_testplan")()]
        if self.action in ("results", "trials"):
            return [permissions.IsAuthenticated(), requires("humantest.view_results")()]
        return super().get_permissions()

    def perform_create(self, serializer):
        if not datasets_for(self.request.user).filter(pk=serializer.validated_data["dataset"].pk).exists():
            raise ValidationError({"dataset": ["no such dataset"]})
        try:
            serializer.instance = create_test_plan(created_by=self.request.user, **serializer.validated_data)
        except PlanRefused as refused:
            raise ValidationError({field: [message] for field, message in refused.problems.items()}) from None

    @extend_schema(
        responses={200: OpenApiResponse(description="Per-tester and pooled figures, and the metric table.")}
    )
    @action(detail=True, methods=["get"])
    def results(self, request, pk=None):
        results = selectors.plan_results(self.get_object())

        def figures(result):
            data = asdict(result)
            data.pop("seconds")
            return data

        return Response(
            {
                "testers": [figures(result) for result in results["testers"]],
                "pooled": figures(results["pooled"]),
                "table": table_json(results["table"]),
            }
        )

    @extend_schema(
        responses={200: OpenApiResponse(description="One row per test trial (as the JSON export).")}
    )
    @action(detail=True, methods=["get"])
    def trials(self, request, pk=None):
        return Response(selectors.export_rows(self.get_object()))
