from django.urls import path

from validation import views

app_name = "validation"

urlpatterns = [
    path("", views.my_plans, name="my-plans"),
    path("plans/", views.plan_list, name="plan-list"),
    path("plans/new/", views.plan_new, name="plan-new"),
    path("plans/<int:pk>/", views.plan_detail, name="plan"),
    path("plans/<int:pk>/error-rates.png", views.plan_plot, name="plan-plot"),
    path("plans/<int:pk>/export.<slug:extension>", views.plan_export, name="plan-export"),
    path("plans/<int:pk>/mark/", views.plan_mark, name="plan-mark"),
    path("plans/<int:pk>/work/", views.work, name="work"),
    path("plans/<int:pk>/next/", views.next_task, name="next"),
    path("assignments/<int:pk>/save/", views.save, name="save"),
    # A lease is a lease: the annotation queue's heartbeat serves validation assignments as they are.
    path("assignments/<int:pk>/heartbeat/", views.heartbeat, name="heartbeat"),
    path("assignments/<int:pk>/submit/", views.submit, name="submit"),
    path("assignments/<int:pk>/skip/", views.skip, name="skip"),
]
