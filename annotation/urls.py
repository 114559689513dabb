from django.urls import path

from annotation import views

app_name = "annotation"

urlpatterns = [
    path("", views.my_work, name="my-work"),
    path("projects/", views.project_list, name="project-list"),
    path("projects/new/", views.project_new, name="project-new"),
    path("projects/<int:pk>/", views.project_detail, name="project"),
    path("projects/<int:pk>/plots/<slug:name>.png", views.project_plot, name="project-plot"),
    path("projects/<int:pk>/export/<slug:layout>/", views.project_export, name="project-export"),
    path("projects/<int:pk>/publish/", views.project_publish, name="project-publish"),
    path("projects/<int:pk>/work/", views.work, name="work"),
    path("projects/<int:pk>/next/", views.next_task, name="next"),
    path("projects/<int:pk>/review/", views.review_next, name="review-next"),
    path("assignments/<int:pk>/save/", views.save, name="save"),
    path("assignments/<int:pk>/heartbeat/", views.heartbeat, name="heartbeat"),
    path("assignments/<int:pk>/submit/", views.submit, name="submit"),
    path("assignments/<int:pk>/skip/", views.skip, name="skip"),
    path("review/pairs/<int:pk>/", views.review_pair, name="review-pair"),
]
