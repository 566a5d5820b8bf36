"""The one Celery app: configured from Django settings (CELERY_*), tasks found in each app."""

import os

from celery import Celery

from neuromem_site import broker

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "neuromem_site.settings")
broker.install()

app = Celery("neuromem")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
