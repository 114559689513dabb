from django.urls import path

from inference import views

app_name = "inference"

urlpatterns = [
    path("", views.run_list, name="run-list"),
    path("new/", views.run_new, name="run-new"),
    path("<int:pk>/", views.run_detail, name="run"),
    path("<int:pk>/cancel/", views.run_cancel, name="run-cancel"),
    path("<int:pk>/requests.jsonl", views.run_audit, name="run-audit"),
]
