"""WSGI entry point: `granian --interface wsgi threadless_site.wsgi:application`, gunicorn, …

Plain Django (its sync views on the server's threads); the async views (the conversation routes and
their SSE streams) want the ASGI entry point, threadless_site.asgi.
"""

import os

from django.core.wsgi import get_wsgi_application

from serving.gctune import tune_gc

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
application = get_wsgi_application()
tune_gc()
