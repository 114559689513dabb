from django.urls import path

from evaluation import views

app_name = "evaluation"

urlpatterns = [
    path("<int:pk>/report/", views.ReportView.as_view(), name="report"),
    path("<int:pk>/report/compare/", views.CompareView.as_view(), name="report-compare"),
    path(
        "<int:pk>/report/compare.<str:extension>",
        views.CompareExportView.as_view(),
        name="report-compare-export",
    ),
    path("<int:pk>/report/compare/overlap/", views.OverlapView.as_view(), name="report-overlap"),
    path("<int:pk>/report/pairwise/", views.PairwiseView.as_view(), name="report-pairwise"),
    path("<int:pk>/report/scoring/", views.ScoringJobsView.as_view(), name="report-scoring"),
    path(
        "<int:pk>/report/pairwise.<str:extension>",
        views.PairwiseExportView.as_view(),
        name="report-pairwise-export",
    ),
    path("<int:pk>/report.<str:extension>", views.ReportExportView.as_view(), name="report-export"),
    path(
        "<int:pk>/report/submissions/<int:submission_pk>/rename/",
        views.SubmissionRenameView.as_view(),
        name="submission-rename",
    ),
    path(
        "<int:pk>/report/submissions/<int:submission_pk>/delete/",
        views.SubmissionDeleteView.as_view(),
        name="submission-delete",
    ),
]
