import os

from django.core.wsgi import get_wsgi_application

from neuromem_site.tracing import tracing_configure

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "neuromem_site.settings")
application = get_wsgi_application()
tracing_configure()
