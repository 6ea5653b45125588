from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularRedocView

from common.http.csp import csp_exempt
from threadless_site.health import healthz, healthz_worker, readyz
from threadless_site.home import favicon, home
from threadless_site.metrics import metrics_view

v1 = [
    path(
        "openapi.json",
        SpectacularJSONAPIView.as_view(authentication_classes=[], permission_classes=[], throttle_classes=[]),
        name="openapi",
    ),
    path(
        "docs",
        # Redoc's page starts it with an inline script and takes its fonts from Google.
        csp_exempt(
            SpectacularRedocView.as_view(
                url_name="openapi", authentication_classes=[], permission_classes=[], throttle_classes=[]
            )
        ),
        name="api-docs",
    ),
    path("", include("memories.api.urls")),
    path("", include("chat.api.urls")),
    path("", include("proxy.urls")),
    path("", include("webhooks.urls")),
]

urlpatterns = [
    path("", home, name="home"),
    path("favicon.ico", favicon),
    path("healthz", healthz),
    path("healthz/worker", healthz_worker),
    path("readyz", readyz),
    path("metrics", metrics_view),
    path("v1/", include(v1)),
    path("manage/agents/", include("console.agent_urls")),
    path("manage/proxy/", include("console.proxy_urls")),
    path("manage/webhooks/", include("console.webhook_urls")),
    path("manage/egress/", include("console.egress_urls")),
    path("manage/", include("console.urls")),
    path("chat/", include("chat.widget.urls")),
    path("admin/", admin.site.urls),
]
