"""A test e-mail backend that holds a worker inside its task: it marks that it is sending, then waits while
a hold file exists, so a test can kill the worker mid-task (after the notice row is written, before the
mail is out and the transaction commits). The marker holds the id of the process that runs the task.
Selected by the worker's EMAIL_BACKEND."""

from __future__ import annotations

import os
import time
from pathlib import Path

from django.core.mail.backends import filebased


class HeldFileBackend(filebased.EmailBackend):
    def send_messages(self, email_messages):
        hold = Path(os.environ["WERKBANK_TEST_MAIL_HOLD"])
        if hold.exists():
            hold.with_suffix(".sending").write_text(str(os.getpid()))
            deadline = time.monotonic() + 60
            while hold.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        return super().send_messages(email_messages)
