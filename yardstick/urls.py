from django.conf import settings
from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from django.views.i18n import JavaScriptCatalog
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from accounts.urls import token_view
from benchmarks.api import DatasetViewSet, ImportJobViewSet
from evaluation.api import (
    DatasetCompareView,
    DatasetPairwiseView,
    DatasetReportView,
    ScoringJobViewSet,
    SubmissionViewSet,
)
from humantest.api import TestPlanViewSet
from humantest.study_views import join as humantest_join
from inference.api import ModelRunViewSet
from yardstick import health, metrics, views
from yardstick.media import serve_media

router = DefaultRouter()
router.register("datasets", DatasetViewSet, basename="dataset")
router.register("imports", ImportJobViewSet, basename="importjob")
router.register("submissions", SubmissionViewSet, basename="submission")
router.register("scoring-jobs", ScoringJobViewSet, basename="scoringjob")
router.register("test-plans", TestPlanViewSet, basename="testplan")
router.register("model-runs", ModelRunViewSet, basename="modelrun")

urlpatterns = [
    path("", views.home, name="home"),
    path("health/live", health.live, name="health-live"),
    path("health/ready", health.ready, name="health-ready"),
    path("health/workers", health.workers, name="health-workers"),
    path("metrics", metrics.metrics, name="metrics"),
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("accounts/", include("accounts.urls")),
    # The interface's words for the pages' scripts, in the reader's language (gettext() in JS).
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    path("datasets/", include("benchmarks.urls")),
    path("datasets/", include("evaluation.urls")),
    path("test/", include("humantest.urls")),
    # A study's entry link (humantest/studies.py): short, as participants' platforms show it.
    path("join/<str:token>/", humantest_join, name="join"),
    path("annotate/", include("annotation.urls")),
    path("validate/", include("validation.urls")),
    path("models/", include("inference.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/datasets/<int:pk>/report/", DatasetReportView.as_view(), name="dataset-report"),
    path("api/v1/datasets/<int:pk>/compare/", DatasetCompareView.as_view(), name="dataset-compare"),
    path("api/v1/datasets/<int:pk>/pairwise/", DatasetPairwiseView.as_view(), name="dataset-pairwise"),
    path("api/v1/", include(router.urls)),
    path("api/v1/auth/token/", token_view, name="api-token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its start-up script as a file: the pages' CSP allows no inline script.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    # Dataset media, to the users who may see each file (yardstick/media.py).
    path(f"{settings.MEDIA_URL.strip('/')}/<path:path>", serve_media, name="media"),
]
