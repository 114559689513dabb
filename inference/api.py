"""The model-run API under /api/v1/model-runs/: start, follow and cancel runs."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response

from accounts.inputs import InputRefused, object_id
from accounts.permissions import ownership_problem, requires
from benchmarks.selectors import datasets_for
from inference.models import ModelRun
from inference.selectors import runs_for
from inference.serializers import ModelRunSerializer, StartRunSerializer
from inference.services import RunRefused, cancel_run, start_run
from inference.views import audit_response


class ModelRunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = ModelRunSerializer
    permission_classes = [permissions.IsAuthenticated, requires("inference.view_modelrun")]

    def get_queryset(self):
        runs = runs_for(self.request.user)
        try:
            dataset = object_id(self.request.query_params.get("dataset"), "dataset")
        except InputRefused as error:
            raise ValidationError({error.field: [error.message]}) from None
        return runs.filter(dataset_id=dataset) if dataset is not None else runs

    def get_permissions(self):
        if self.action == "create":
            return [permissions.IsAuthenticated(), requires("inference.add_modelrun")()]
        if self.action == "cancel":
            return [permissions.IsAuthenticated(), requires("inference.change_modelrun")()]
        return super().get_permissions()

    @extend_schema(request=StartRunSerializer, responses={201: ModelRunSerializer})
    def create(self, request, *args, **kwargs):
        """Start a run: it is queued on the `gpu` queue; follow it by reading it again."""
        form = StartRunSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        dataset = data["dataset"]
        if not datasets_for(request.user).filter(pk=dataset.pk).exists():
            raise ValidationError({"dataset": ["no such dataset"]})
        setting = data["setting"] if data["setting"] is not None else dataset.spec.settings[0].value
        try:
            run = start_run(
                dataset=dataset,
                baseline=data["baseline"],
                setting=setting,
                checkpoint=data["checkpoint"] or None,
                device=data["device"],
                batch_size=data["batch_size"],
                seed=data["seed"],
                options=data["options"],
                user=request.user,
            )
        except RunRefused as error:
            raise ValidationError({"detail": str(error)}) from None
        return Response(
            ModelRunSerializer(run, context=self.get_serializer_context()).data,
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(request=None, responses={(200, "application/x-ndjson"): OpenApiTypes.BINARY})
    @action(detail=True, methods=["get"])
    def audit(self, request, pk=None):
        """A served model's requests and responses, one JSON line each (404 for a run that kept none)."""
        run = self.get_object()
        if not run.audit:
            raise NotFound("this run kept no requests")
        return audit_response(run)

    @extend_schema(request=None, responses=ModelRunSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Cancel a run: a queued one at once, a running one at its next batch (its owner or an admin)."""
        run = self.get_object()
        if problem := ownership_problem(request.user, run, f"model run {run.pk}"):
            raise PermissionDenied(problem)
        run = cancel_run(run)
        return Response(ModelRunSerializer(ModelRun.objects.get(pk=run.pk)).data)
