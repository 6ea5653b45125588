from django.urls import path

from memories.api import memoryfiles, threads, views
from memories.api.hotroutes import HotRouteApi

urlpatterns = [
    path("memories", views.MemoryListApi.as_view(), name="api-memories"),
    # By the app's own id (get-or-create); `path:` so an id with a URL-encoded "/" still matches.
    path("memories/import", views.MemoryImportApi.as_view(), name="api-memory-import"),
    path(
        "memories/external/<path:external_id>/decorate",
        HotRouteApi.as_view(operation="decorate", external=True),
        name="api-decorate-external",
    ),
    path(
        "memories/external/<path:external_id>/report",
        HotRouteApi.as_view(operation="report", external=True),
        name="api-report-external",
    ),
    path(
        "memories/external/<path:external_id>/files",
        memoryfiles.ExternalMemoryFileListApi.as_view(),
        name="api-files-external",
    ),
    path(
        "memories/external/<path:external_id>/files/command",
        memoryfiles.ExternalMemoryFileCommandApi.as_view(),
        name="api-files-command-external",
    ),
    path(
        "memories/external/<path:external_id>/threads",
        threads.ExternalThreadListApi.as_view(),
        name="api-threads-external",
    ),
    path(
        "memories/external/<path:external_id>/threads/<path:thread>",
        threads.ExternalThreadDetailApi.as_view(),
        name="api-thread-external",
    ),
    path(
        "memories/external/<path:external_id>/messages",
        threads.ExternalMessagesImportApi.as_view(),
        name="api-messages-external",
    ),
    path("memories/<str:memory_id>", views.MemoryDetailApi.as_view(), name="api-memory"),
    path("memories/<str:memory_id>/threads", threads.ThreadListApi.as_view(), name="api-threads"),
    path(
        "memories/<str:memory_id>/threads/<path:thread>", threads.ThreadDetailApi.as_view(), name="api-thread"
    ),
    path("memories/<str:memory_id>/messages", threads.MessagesImportApi.as_view(), name="api-messages"),
    path("memories/<str:memory_id>/decorate", HotRouteApi.as_view(operation="decorate"), name="api-decorate"),
    path("memories/<str:memory_id>/report", HotRouteApi.as_view(operation="report"), name="api-report"),
    path("memories/<str:memory_id>/export", views.MemoryExportApi.as_view(), name="api-memory-export"),
    path("memories/<str:memory_id>/entries", views.EntryListApi.as_view(), name="api-entries"),
    path("memories/<str:memory_id>/facts", views.FactListApi.as_view(), name="api-facts"),
    path("memories/<str:memory_id>/facts/<str:fact_id>", views.FactDetailApi.as_view(), name="api-fact"),
    path("memories/<str:memory_id>/search", views.SearchApi.as_view(), name="api-search"),
    path("memories/<str:memory_id>/files", memoryfiles.MemoryFileListApi.as_view(), name="api-files"),
    path(
        "memories/<str:memory_id>/files/command",
        memoryfiles.MemoryFileCommandApi.as_view(),
        name="api-files-command",
    ),
]
