"""The app's shared state is one typed record (transport/state.py), read through it only."""

from pathlib import Path

from tts_server.app import create_app
from tts_server.settings import Settings
from tts_server.transport.state import ServerState, app_state

SERVER = Path(__file__).resolve().parents[3] / "container" / "tts_server"


def test_the_app_keeps_one_server_state_built_from_its_settings():
    state = app_state(create_app(Settings(max_sessions=7, overload_retry_after_s=3)))
    assert isinstance(state, ServerState)
    assert (state.admission.sessions.limit, state.admission.overloaded().retry_after) == (7, 3)
    assert state.lifecycle.deadline_s == state.settings.shutdown_deadline_s


def test_no_module_reads_starlettes_untyped_state_but_the_record_itself():
    readers = sorted(str(path.relative_to(SERVER)) for path in SERVER.rglob("*.py")
                     if "app.state" in path.read_text() and path != SERVER / "transport" / "state.py")
    assert readers == [], f"read the app's state through transport.state.server_state: {readers}"
