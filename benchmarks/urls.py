from django.urls import path

from benchmarks import views

app_name = "benchmarks"

urlpatterns = [
    path("", views.DatasetListView.as_view(), name="dataset-list"),
    path("import/", views.ImportView.as_view(), name="import"),
    path("import/<int:pk>/", views.ImportJobView.as_view(), name="import-job"),
    path("<int:pk>/", views.DatasetDetailView.as_view(), name="dataset-detail"),
    path("<int:pk>/export/", views.DatasetExportView.as_view(), name="dataset-export"),
    path("<int:pk>/items/<int:item_pk>/", views.ItemDetailView.as_view(), name="item-detail"),
]
