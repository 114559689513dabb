from django.conf import settings
from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.urls import include, path
from django.views.static import serve
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.authtoken.views import obtain_auth_token
from rest_framework.routers import DefaultRouter

from benchmarks.api import DatasetViewSet, ImportJobViewSet
from evaluation.api import DatasetReportView, SubmissionViewSet
from humantest.api import TestPlanViewSet
from yardstick import views

router = DefaultRouter()
router.register("datasets", DatasetViewSet, basename="dataset")
router.register("imports", ImportJobViewSet, basename="importjob")
router.register("submissions", SubmissionViewSet, basename="submission")
router.register("test-plans", TestPlanViewSet, basename="testplan")

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("datasets/", include("benchmarks.urls")),
    path("datasets/", include("evaluation.urls")),
    path("test/", include("humantest.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/datasets/<int:pk>/report/", DatasetReportView.as_view(), name="dataset-report"),
    path("api/v1/", include(router.urls)),
    path("api/v1/auth/token/", obtain_auth_token, name="api-token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    # Dataset media is for signed-in users only; a production server may serve it directly.
    path(
        f"{settings.MEDIA_URL.strip('/')}/<path:path>",
        login_required(serve),
        {"document_root": settings.MEDIA_ROOT},
        name="media",
    ),
]
