"""The Celery app shared by the web process and the workers.

The broker comes from CELERY_BROKER_URL. By default it is Kombu's filesystem transport, which
needs no server: `make run` starts a real worker beside the web server on a laptop. Point the
variable at Redis (redis://...) to run many workers on many machines with the same code.

Each task's lines carry its name, id and job (yardstick/logs.py).
"""

import os

from celery import Celery
from celery.signals import task_postrun, task_prerun

from yardstick.logs import task_finished, task_started

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "yardstick.settings")

app = Celery("yardstick")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
task_prerun.connect(task_started)
task_postrun.connect(task_finished)
