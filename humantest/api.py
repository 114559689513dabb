"""The human-test API under /api/v1/test-plans/: plans, their results and trials, and their studies:
entry links, settings, participants' progress, payments and testers (researchers; changes by the
plan's maker or an admin)."""

from dataclasses import asdict

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, permissions, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response

from accounts.permissions import ownership_problem, requires
from benchmarks.selectors import datasets_for
from evaluation.reports import table_json
from humantest import checklist, exclusions, invitations, payments, selectors, studies
from humantest.models import EntryLink, PaymentBatch
from humantest.plans import PlanRefused, create_test_plan
from humantest.rescoring import schedule_pooled
from humantest.serializers import (
    ExclusionRulesSerializer,
    OpenLinkSerializer,
    StudySerializer,
    TestersSerializer,
    TestPlanSerializer,
)


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
        if self.action in ("results", "trials", "participants", "payments", "payment_file", "exclusions"):
            return [permissions.IsAuthenticated(), requires("humantest.view_results")()]
        if self.action == "report":  # the human baseline report reads the plan's results
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

    @extend_schema(
        operation_id="v1_test_plans_report",
        responses={
            200: OpenApiResponse(
                description="The human baseline report: the reporting checklist filled from what the plan "
                "recorded and its report form (as the page's JSON download)."
            )
        },
    )
    @action(detail=True, methods=["get"])
    def report(self, request, pk=None):
        """The filled human-baseline reporting checklist, its facts and the pre-registration check."""
        import json

        return Response(json.loads(checklist.as_json(checklist.build_report(self.get_object()))))

    # --- studies ----------------------------------------------------------------------------------

    def owned(self):
        """The plan, when the request may change it (its maker or an admin): PermissionDenied if not."""
        plan = self.get_object()
        if problem := ownership_problem(self.request.user, plan, f"test plan “{plan.name}”"):
            raise PermissionDenied(problem)
        return plan

    @extend_schema(
        request=ExclusionRulesSerializer,
        responses={
            200: OpenApiResponse(
                description="The rules' versions (newest first) with their outcome, and every tester's."
            )
        },
    )
    @action(detail=True, methods=["get", "put"])
    def exclusions(self, request, pk=None):
        """The plan's exclusion rules and who they exclude. PUT states the rules (all fields; empty
        ones are off): in place until the first tester starts, a new version after that."""
        if request.method == "PUT":
            plan = self.owned()
            if not isinstance(request.data, dict):
                raise ValidationError({"rules": ["expected a JSON object of rules"]})
            try:
                exclusions.save_rules(plan, request.data, user=request.user)
            except exclusions.RulesRefused as refused:
                raise ValidationError({refused.field: [refused.message]}) from None
            schedule_pooled(plan.pk)
        else:
            plan = self.get_object()
        quality = exclusions.plan_quality(plan)

        def outcome_json(outcome):
            facts = asdict(outcome.facts)
            facts.pop("seconds")
            return {
                **facts,
                "accuracy": outcome.facts.accuracy,
                "status": outcome.status,
                "reasons": outcome.reasons,
            }

        def version_json(version):
            return {
                **{key: value for key, value in version.items() if key != "outcomes"},
                "testers": [outcome_json(outcome) for outcome in version["outcomes"]],
            }

        return Response(
            {
                "versions": [version_json(version) for version in quality["versions"]],
                "current": version_json(quality["current"]),
            }
        )

    @extend_schema(request=StudySerializer, responses=StudySerializer)
    @action(detail=True, methods=["get", "patch"])
    def study(self, request, pk=None):
        """The plan's study settings: consent, times, cap, codes and return addresses, pay rule."""
        if request.method == "GET":
            return Response(StudySerializer(studies.study_for(self.get_object())).data)
        plan = self.owned()
        form = StudySerializer(data=request.data, partial=True)
        form.is_valid(raise_exception=True)
        try:
            study = studies.update_study(plan, **form.validated_data)
        except studies.StudyRefused as refused:
            raise ValidationError({refused.field or "detail": [refused.message]}) from None
        return Response(StudySerializer(study).data)

    def link_data(self, link: EntryLink) -> dict:
        from django.urls import reverse

        return {
            "id": link.pk,
            "platform": link.platform,
            "url": self.request.build_absolute_uri(reverse("join", args=[link.token])),
            "lab_ids": len(link.lab_ids),
            "created_at": link.created_at,
        }

    @extend_schema(
        request=OpenLinkSerializer, responses={200: OpenApiResponse(description="The open links.")}
    )
    @action(detail=True, methods=["get", "post"])
    def links(self, request, pk=None):
        """GET the open entry links; POST {platform, lab_ids} opens a new one (the platform's
        earlier link is revoked)."""
        if request.method == "GET":
            plan = self.get_object()
        else:
            plan = self.owned()
            form = OpenLinkSerializer(data=request.data)
            form.is_valid(raise_exception=True)
            try:
                studies.open_link(
                    plan,
                    form.validated_data["platform"],
                    created_by=request.user,
                    lab_ids=form.validated_data["lab_ids"],
                )
            except studies.StudyRefused as refused:
                raise ValidationError({refused.field or "detail": [refused.message]}) from None
        return Response([self.link_data(link) for link in plan.entry_links.filter(revoked_at__isnull=True)])

    @extend_schema(request=None, responses={200: OpenApiResponse(description="The open links left.")})
    @action(detail=True, methods=["post"], url_path=r"links/(?P<link_id>\d+)/revoke")
    def revoke_link(self, request, pk=None, link_id=None):
        """Revoke an entry link: nobody new arrives by it."""
        plan = self.owned()
        link = plan.entry_links.filter(pk=link_id).first()
        if link is None:
            raise ValidationError({"link": ["no such link of this plan"]})
        studies.revoke_link(link)
        return Response([self.link_data(link) for link in plan.entry_links.filter(revoked_at__isnull=True)])

    @extend_schema(responses={200: OpenApiResponse(description="Progress counts and every participant.")})
    @action(detail=True, methods=["get"])
    def participants(self, request, pk=None):
        """Where the participants are (arrived, consented, practising, running, finished, screened
        out, declined, returned) and each one's platform id, status and times."""
        plan = self.get_object()
        progress = studies.progress(plan)
        people = plan.participants.select_related("session").order_by("arrived_at")
        return Response(
            {
                "progress": progress,
                "participants": [
                    {
                        "platform": person.platform,
                        "participant_id": person.external_id,
                        "attempt_id": person.attempt_id,
                        "status": person.status,
                        "session_status": person.session.status if person.session_id else None,
                        "arrived_at": person.arrived_at,
                        "last_seen_at": person.last_seen_at,
                        "finished_at": person.finished_at,
                    }
                    for person in people
                ],
            }
        )

    @extend_schema(request=None, responses={200: OpenApiResponse(description="The payment batches.")})
    @action(detail=True, methods=["get", "post"])
    def payments(self, request, pk=None):
        """GET the batches; POST makes a batch of every finished participant not yet paid."""
        if request.method == "POST":
            plan = self.owned()
            payments.new_batch(plan, created_by=request.user)
        else:
            plan = self.get_object()
        return Response(
            [
                {
                    "number": batch.number,
                    "created_at": batch.created_at,
                    "rule": batch.rule,
                    "participants": batch.payments.count(),
                    "files": {
                        fmt: request.build_absolute_uri(
                            f"/api/v1/test-plans/{plan.pk}/payments/{batch.number}/{fmt}/"
                        )
                        for fmt in payments.FORMATS
                    },
                }
                for batch in plan.payment_batches.all()
            ]
        )

    @extend_schema(
        operation_id="v1_test_plans_payment_file",
        responses={200: OpenApiResponse(description="The batch as CSV.")},
    )
    @action(detail=True, methods=["get"], url_path=r"payments/(?P<number>\d+)/(?P<fmt>prolific|mturk|full)")
    def payment_file(self, request, pk=None, number=None, fmt=None):
        """A batch as Prolific's or MTurk's bulk-bonus file, or the full table."""
        from django.http import HttpResponse

        from accounts.inputs import attachment

        plan = self.get_object()
        batch = PaymentBatch.objects.filter(plan=plan, number=number).first()
        if batch is None:
            raise ValidationError({"number": ["no such batch"]})
        response = HttpResponse(payments.batch_csv(batch, fmt), content_type="text/csv; charset=utf-8")
        return attachment(response, f"plan-{plan.pk}-payments-{batch.number}-{fmt}.csv")

    @extend_schema(
        request=TestersSerializer, responses={200: OpenApiResponse(description="Who is invited now.")}
    )
    @action(detail=True, methods=["post"])
    def testers(self, request, pk=None):
        """Invite testers (usernames or e-mail addresses; new accounts get one-time log-in links) and
        remove testers, while the plan runs."""
        plan = self.owned()
        form = TestersSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        made = []
        try:
            if form.validated_data["add"]:
                made = invitations.invite(
                    plan, "\n".join(form.validated_data["add"]), invited_by=request.user
                )
        except invitations.InvitationRefused as refused:
            raise ValidationError({"add": [str(refused)]}) from None
        invitations.remove_testers(plan, form.validated_data["remove"])
        return Response(
            {
                "invited": [
                    {
                        "username": entry.username,
                        "email": entry.email,
                        "new": entry.new,
                        "log_in_link": request.build_absolute_uri(entry.link) if entry.link else "",
                    }
                    for entry in made
                ],
                "testers": sorted(plan.testers.values_list("username", flat=True)),
            }
        )
