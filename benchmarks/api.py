"""The catalog's HTTP API under /api/v1/: thin viewsets over the same services as the pages."""

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts.permissions import requires
from benchmarks.selectors import dataset_items, datasets_for, import_jobs_for
from benchmarks.serializers import DatasetSerializer, ImportJobSerializer, ItemSerializer
from benchmarks.services import ImportRefused, export_chunks, start_import_job


class DatasetViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = DatasetSerializer
    permission_classes = [permissions.IsAuthenticated, requires("benchmarks.view_dataset")]

    def get_queryset(self):
        return datasets_for(self.request.user)

    @extend_schema(responses=ItemSerializer(many=True))
    @action(detail=True, methods=["get"])
    def items(self, request, pk=None):
        items = dataset_items(self.get_object()).select_related("scene")
        page = self.paginate_queryset(items)
        return self.get_paginated_response(ItemSerializer(page, many=True).data)

    @extend_schema(responses={200: OpenApiResponse(description="The official file, streamed.")})
    @action(detail=True, methods=["get"], permission_classes=[requires("benchmarks.export_dataset")])
    def export(self, request, pk=None):
        return StreamingHttpResponse(export_chunks(self.get_object()), content_type="application/json")


# The schema is generated without a signed-in user, so the id's type cannot come from the queryset.
@extend_schema_view(retrieve=extend_schema(parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH)]))
class ImportJobViewSet(
    mixins.CreateModelMixin, mixins.RetrieveModelMixin, mixins.ListModelMixin, viewsets.GenericViewSet
):
    serializer_class = ImportJobSerializer
    permission_classes = [permissions.IsAuthenticated, requires("benchmarks.import_dataset")]

    def get_queryset(self):
        return import_jobs_for(self.request.user)

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            job = start_import_job(
                user=request.user,
                benchmark=data["benchmark"],
                name=data["name"],
                split=data.get("split", ""),
                version=data.get("version", "1"),
                upload=data["upload"],
                scenes_upload=data.get("scenes_upload"),
                images_upload=data.get("images_upload"),
            )
        except ImportRefused as error:
            raise ValidationError({"name": [str(error)]}) from None
        return Response(self.get_serializer(job).data, status=status.HTTP_201_CREATED)
