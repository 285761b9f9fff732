"""Bolt's listener runner without its ack polling step.

With ``process_before_response=False`` (the bot's setting, HTTP and Socket Mode alike), Bolt
1.30's ``ThreadListenerRunner.run`` hands the listener to the listener executor and then polls
``ack.response`` with ``time.sleep(0.01)``: every ack reaches Slack up to 10 ms after the
listener called it. :class:`AckWaitingRunner` does the same thing but waits on the ack's event
(``TimedAck.wait``, set the moment the response is), so the response leaves as soon as it
exists. Everything else — the automatic ack of events, the error handling of a listener that
raises, lazy listeners, ``process_before_response=True`` — is Bolt's own code (the listener's
error path below mirrors ``run_ack_function_asynchronously`` of Bolt 1.30).
"""

from __future__ import annotations

import time

from slack_bolt import App, BoltRequest, BoltResponse
from slack_bolt.listener import Listener
from slack_bolt.listener.thread_runner import ThreadListenerRunner
from slack_bolt.logger.messages import warning_did_not_call_ack

from bot.slack.ack_timing import TimedAck


class AckWaitingRunner(ThreadListenerRunner):
    def run(
        self,
        request: BoltRequest,
        response: BoltResponse,
        listener_name: str,
        listener: Listener,
        starting_time: float | None = None,
    ) -> BoltResponse | None:
        ack = request.context.ack
        if (
            self.process_before_response
            or request.lazy_only
            or listener.lazy_functions
            or not isinstance(ack, TimedAck)
        ):
            return super().run(request, response, listener_name, listener, starting_time)
        started = time.time() if starting_time is None else starting_time
        if listener.auto_acknowledgement:
            ack()  # events: acknowledged at once, as Bolt does
        self.listener_executor.submit(self._run_listener, request, response, listener, ack)
        ack.wait(listener.ack_timeout - (time.time() - started))
        if response is not None:
            return response
        if ack.response is None:
            self.logger.warning(warning_did_not_call_ack(listener_name))
            return None
        self._debug_log_completion(started, ack.response)
        return ack.response

    def _run_listener(
        self, request: BoltRequest, response: BoltResponse | None, listener: Listener, ack: TimedAck
    ) -> None:
        try:
            self.listener_start_handler.handle(request=request, response=response)
            listener.run_ack_function(request=request, response=response)  # type: ignore[arg-type]
        except Exception as e:
            if listener.auto_acknowledgement:
                self.listener_error_handler.handle(error=e, request=request, response=response)
            else:
                if response is None:
                    response = BoltResponse(status=500)
                response.status = 500
                if ack.response is not None:  # already acknowledged
                    response = None
                self.listener_error_handler.handle(error=e, request=request, response=response)
                if response is not None:
                    ack.response = response
        finally:
            self.listener_completion_handler.handle(request=request, response=response)  # type: ignore[arg-type]


def install_ack_waiting(app: App) -> None:
    """Run ``app``'s listeners with :class:`AckWaitingRunner` (its acks as ``TimedAck``:
    install ack_timing too)."""
    bolt = app.listener_runner
    app._listener_runner = AckWaitingRunner(  # Bolt offers no setter for it
        logger=bolt.logger,
        process_before_response=bolt.process_before_response,
        listener_error_handler=bolt.listener_error_handler,
        listener_start_handler=bolt.listener_start_handler,
        listener_completion_handler=bolt.listener_completion_handler,
        listener_executor=bolt.listener_executor,
        lazy_listener_runner=bolt.lazy_listener_runner,
    )
