"""Where tasks run is said once, when a server process starts."""

import logging

from werkbank.apps import announce_task_mode


def test_eager_mode_is_announced(settings, caplog):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    with caplog.at_level(logging.INFO, logger="werkbank"):
        announce_task_mode()
    assert caplog.messages == ["REDIS_URL is not set: Celery tasks run in-process (eager mode)."]


def test_broker_mode_is_announced(settings, caplog):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    with caplog.at_level(logging.INFO, logger="werkbank"):
        announce_task_mode()
    assert caplog.messages == ["Celery tasks go to the broker at REDIS_URL."]
