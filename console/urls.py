from django.urls import path

from console import memory_views, views

app_name = "console"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("projects/", views.projects, name="projects"),
    path("projects/<str:project_id>/", views.project_detail, name="project"),
    path("projects/<str:project_id>/keys/", views.key_create, name="key_create"),
    path("projects/<str:project_id>/keys/<int:key_id>/revoke/", views.key_revoke, name="key_revoke"),
    path("memories/", memory_views.memories, name="memories"),
    path("memories/<str:memory_id>/", memory_views.memory_detail, name="memory"),
    path("memories/<str:memory_id>/delete/", memory_views.memory_delete, name="memory_delete"),
    path("memories/<str:memory_id>/facts/", memory_views.fact_add, name="fact_add"),
    path("memories/<str:memory_id>/facts/<str:fact_id>/", memory_views.fact_edit, name="fact_edit"),
    path(
        "memories/<str:memory_id>/facts/<str:fact_id>/delete/", memory_views.fact_delete, name="fact_delete"
    ),
    path("digests/", views.digests, name="digests"),
]
