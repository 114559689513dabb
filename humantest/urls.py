from django.urls import path, re_path

from humantest import quality_views, report_views, study_views, views

app_name = "humantest"

urlpatterns = [
    path("", views.my_tests, name="my-tests"),
    path("history/", views.history, name="history"),
    path("plans/", views.plan_list, name="plan-list"),
    path("plans/new/", views.plan_new, name="plan-new"),
    path("plans/<int:pk>/", views.plan_results, name="plan-results"),
    path("plans/<int:pk>/delete/", views.plan_delete, name="plan-delete"),
    re_path(r"^plans/(?P<pk>\d+)/trials\.(?P<fmt>csv|json)$", views.plan_export, name="plan-export"),
    path("plans/<int:pk>/study/", study_views.study_page, name="study"),
    path(
        "plans/<int:pk>/payments/<int:number>.<slug:fmt>.csv",
        study_views.payment_export,
        name="payment-export",
    ),
    path("plans/<int:pk>/testers/", study_views.testers_page, name="testers"),
    path("plans/<int:pk>/quality/", quality_views.quality_page, name="quality"),
    path("plans/<int:pk>/quality/testers.csv", quality_views.quality_export, name="quality-export"),
    path("plans/<int:pk>/quality/plot.svg", quality_views.quality_plot, name="quality-plot"),
    path("plans/<int:pk>/report/", report_views.report_page, name="report"),
    re_path(
        r"^plans/(?P<pk>\d+)/report\.(?P<fmt>md|tex|json)$", report_views.report_export, name="report-export"
    ),
    path("plans/<int:pk>/preregistration/", report_views.preregistration, name="preregistration"),
    re_path(
        r"^plans/(?P<pk>\d+)/preregistration\.(?P<fmt>md|json)$",
        report_views.preregistration_export,
        name="preregistration-export",
    ),
    path("plans/<int:plan_pk>/start/", views.start, name="start"),
    path("sessions/<int:pk>/", views.session_page, name="session"),
    path("sessions/<int:pk>/consent/", study_views.consent, name="consent"),
    path("sessions/<int:pk>/practice/", views.practice, name="practice"),
    path("sessions/<int:pk>/begin/", views.begin, name="begin"),
    path("sessions/<int:pk>/pause/", views.pause, name="pause"),
    path("sessions/<int:pk>/resume/", views.resume, name="resume"),
    path("trials/<int:pk>/answer/", views.answer, name="answer"),
    path("trials/<int:pk>/timeout/", views.timeout, name="timeout"),
]
