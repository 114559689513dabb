"""The evaluation API under /api/v1/: submissions (an evaluation server) and report tables."""

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from accounts.inputs import InputRefused, object_id
from accounts.permissions import requires
from benchmarks.records import FormatError
from benchmarks.selectors import datasets_for
from benchmarks.spec import OFFICIAL
from evaluation.comparison import ComparisonInputError
from evaluation.models import ScoringJob, Submission
from evaluation.reports import table_json
from evaluation.selectors import (
    RowNotFound,
    report_row_labels,
    report_table,
    submissions_for,
)
from evaluation.serializers import ScoringJobSerializer, SubmissionSerializer
from evaluation.services import (
    SubmissionRefused,
    owner_problem,
    scored_in_request,
    start_scoring_job,
    submit_predictions,
)


class SubmissionViewSet(
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.ListModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = SubmissionSerializer
    permission_classes = [permissions.IsAuthenticated, requires("evaluation.view_submission")]

    def get_queryset(self):
        submissions = submissions_for(self.request.user)
        try:
            dataset = object_id(self.request.query_params.get("dataset"), "dataset")
        except InputRefused as error:
            raise ValidationError({error.field: [error.message]}) from None
        return submissions.filter(dataset_id=dataset) if dataset is not None else submissions

    def get_permissions(self):
        if self.action in ("create", "destroy"):
            return [permissions.IsAuthenticated(), requires("evaluation.add_submission")()]
        return super().get_permissions()

    @extend_schema(
        responses={
            201: SubmissionSerializer,
            202: OpenApiResponse(
                ScoringJobSerializer,
                description="A dataset of more scoring units than the server scores in a request "
                "(YARDSTICK_SCORE_IN_REQUEST_UNITS): the file was checked and a worker scores it; "
                "follow the job at /api/v1/scoring-jobs/<id>/ (its Location).",
            ),
            400: OpenApiResponse(description="Every bad record or field named; nothing stored."),
        }
    )
    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if not datasets_for(request.user).filter(pk=data["dataset"].pk).exists():
            raise ValidationError({"dataset": ["no such dataset"]})
        upload = data["file"]
        in_request = scored_in_request(data["dataset"])
        try:
            submitted = (submit_predictions if in_request else start_scoring_job)(
                dataset=data["dataset"],
                name=data["name"],
                producer=data.get("producer", Submission.Producer.MODEL),
                setting=data.get("setting", ""),
                variant=data.get("variant") or OFFICIAL,
                data=upload.read(),
                source=upload.name,
                created_by=request.user,
            )
        except FormatError as error:
            raise ValidationError({"file": error.summary()}) from None
        except SubmissionRefused as error:
            raise ValidationError({error.field or "non_field_errors": [str(error)]}) from None
        except ValueError as error:
            raise ValidationError({"non_field_errors": [str(error)]}) from None
        if in_request:
            return Response(self.get_serializer(submitted).data, status=status.HTTP_201_CREATED)
        job = ScoringJobSerializer(submitted, context=self.get_serializer_context()).data
        location = reverse("scoringjob-detail", args=[submitted.pk], request=request)
        return Response(
            {**job, "url": location}, status=status.HTTP_202_ACCEPTED, headers={"Location": location}
        )

    def perform_destroy(self, instance):
        # Everybody with the role reads every report; only who made a submission (or an admin)
        # removes it from them. (An admin may remove a test plan's rows here too; the plan's next
        # answer makes them again.)
        if problem := owner_problem(user=self.request.user, submission=instance):
            raise PermissionDenied(problem)
        instance.delete()


class ScoringJobViewSet(viewsets.ReadOnlyModelViewSet):
    """Uploads scored by a worker: a researcher follows their own, an admin every one."""

    serializer_class = ScoringJobSerializer
    permission_classes = [permissions.IsAuthenticated, requires("evaluation.view_submission")]
    queryset = ScoringJob.objects.none()  # the schema's model; each request reads get_queryset()

    def get_queryset(self):
        jobs = ScoringJob.objects.filter(dataset__in=datasets_for(self.request.user)).select_related(
            "created_by"
        )
        return jobs if self.request.user.is_superuser else jobs.filter(created_by=self.request.user)


class DatasetReportView(APIView):
    """GET /api/v1/datasets/<id>/report/: the dataset's report table (rows, cells, intervals);
    `?table=<key>`: one of the benchmark's diagnostic tables instead (404 for an unknown key)."""

    permission_classes = [
        permissions.IsAuthenticated,
        requires("benchmarks.view_dataset"),
        requires("evaluation.view_report"),
    ]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "table", str, description="A diagnostic table's key (the report page lists them)."
            )
        ],
        responses={200: OpenApiResponse(description="The report table: rows, cells, intervals.")},
    )
    def get(self, request, pk: int):
        dataset = get_object_or_404(datasets_for(request.user), pk=pk)
        key = request.query_params.get("table", "")
        diagnostic = dataset.spec.diagnostic(key) if key else None
        if key and diagnostic is None:
            raise Http404("no such table")
        return Response(table_json(report_table(dataset, diagnostic=diagnostic)))


class DatasetCompareView(APIView):
    """GET /api/v1/datasets/<id>/compare/?a=<row>&b=<row>[&metric=M]: two report rows compared on the
    units both answered (paired difference with its BCa interval; McNemar, Holm-adjusted). A worker
    computes it once per set of submissions: 202 {"status": "computing"} until it is there."""

    permission_classes = [
        permissions.IsAuthenticated,
        requires("benchmarks.view_dataset"),
        requires("evaluation.view_report"),
    ]

    @extend_schema(
        parameters=[
            OpenApiParameter("a", str, required=True, description="a report row's label"),
            OpenApiParameter("b", str, required=True, description="another row's label"),
            OpenApiParameter(
                "metric", str, required=False, description='only columns with this label, e.g. "Acc"'
            ),
        ],
        responses={
            200: OpenApiResponse(description="Per column: n, means, difference, interval, McNemar."),
            202: OpenApiResponse(description='{"status": "computing"}: a worker compares them; ask again.'),
        },
    )
    def get(self, request, pk: int):
        dataset = get_object_or_404(datasets_for(request.user), pk=pk)
        from evaluation.tasks import current_comparison

        try:
            result = current_comparison(
                dataset,
                request.query_params.get("a", ""),
                request.query_params.get("b", ""),
                metric=request.query_params.get("metric") or None,
            )
        except (RowNotFound, ComparisonInputError) as error:
            raise ValidationError({"detail": str(error)}) from None
        if result is None:
            return Response({"status": "computing"}, status=202)
        return Response(result)


class DatasetPairwiseView(APIView):
    """GET /api/v1/datasets/<id>/pairwise/: every pair of report rows on each setting's headline
    column (paired interval, McNemar Holm-adjusted over the table). A worker computes it once per
    set of submissions: 202 {"status": "computing"} until it is there, then 200 with the table."""

    permission_classes = [
        permissions.IsAuthenticated,
        requires("benchmarks.view_dataset"),
        requires("evaluation.view_report"),
    ]

    @extend_schema(
        responses={
            200: OpenApiResponse(
                description="pairs: per pair and column, n, means, difference, interval, McNemar."
            ),
            202: OpenApiResponse(description='{"status": "computing"}: ask again later.'),
            409: OpenApiResponse(description='{"status": "failed"}: these rows could not be compared.'),
        },
    )
    def get(self, request, pk: int):
        from evaluation.tasks import current_pairwise

        dataset = get_object_or_404(datasets_for(request.user), pk=pk)
        if len(report_row_labels(dataset)) < 2:
            raise ValidationError({"detail": "a comparison needs two scored rows"})
        result = current_pairwise(dataset)
        if result is None:
            return Response({"status": "computing"}, status=202)
        if "error" in result:
            # Not a server fault: the rows as they are cannot be compared (the report page says
            # why); a new or changed submission makes the table computed again.
            return Response(
                {
                    "status": "failed",
                    "detail": "the comparison of every pair could not be computed for these rows; "
                    "it is computed again when a submission of this dataset changes",
                },
                status=409,
            )
        return Response({"status": "ready", **result})
