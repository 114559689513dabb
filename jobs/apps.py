from django.apps import AppConfig


class JobsConfig(AppConfig):
    """Work a Celery worker does for a person who waits for it (an import, an upload being scored,
    a model run): one status vocabulary, one progress and heartbeat helper, one reaper of jobs whose
    worker died, and one way to queue a task.

    It sits at the bottom with accounts: the apps whose rows are jobs import it, it imports none.
    """

    name = "jobs"
