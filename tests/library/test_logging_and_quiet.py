"""Notes and warnings go through ``logging`` under ``surgeon`` (silent unless the application
configures logging: a NullHandler on the package logger), and ``quiet=True`` silences progress
for one call as ``SURGEON_QUIET=1`` does for the process."""

import io
import logging
import sys
import threading

from click.testing import CliRunner

import surgeon
from surgeon import progress
from surgeon.cli import cli

from ..builders import relu_model
from ..relu_patterns import DoublingRelu, KernellessRelu
from .stn_sample import DYNAMIC, STN, stn_feeds


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _on_terminal(monkeypatch) -> _Terminal:
    """stderr as a terminal, progress drawn at once (no delay): what a call shows lands in the
    returned screen. Called in the test itself: pytest's capture sets sys.stderr again between a
    fixture and its test."""
    screen = _Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    monkeypatch.setenv("SURGEON_PROGRESS_DELAY", "0")
    monkeypatch.delenv("SURGEON_QUIET", raising=False)
    return screen


def test_the_package_logger_is_silent_unless_configured():
    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("surgeon").handlers)


def test_notes_are_info_and_warnings_are_warning_under_surgeon(caplog):
    with caplog.at_level(logging.INFO, logger="surgeon"):
        result = surgeon.fuse(relu_model(), plugins=[KernellessRelu()], quiet=True)
        surgeon.run(DYNAMIC, quiet=True)  # drawn inputs with dynamic dims set to 1: a note
    records = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert ("surgeon.api", logging.WARNING, result.warnings[0]) in records  # no plugin can run what it wrote
    assert any(name == "surgeon.run" and level == logging.INFO and "dynamic dim(s)" in text
               for name, level, text in records)


def test_validation_notes_are_logged(caplog):
    with caplog.at_level(logging.INFO, logger="surgeon"):
        report = surgeon.validate(STN, surgeon.fuse(STN, quiet=True).model, quiet=True)
    logged = [r.getMessage() for r in caplog.records if r.name == "surgeon.validate"]
    assert report.notes and logged[: len(report.notes)] == report.notes


def test_a_failed_validation_is_a_warning_naming_the_rewrite(caplog):
    wrong = surgeon.fuse(relu_model(), plugins=[DoublingRelu()], quiet=True).model
    with caplog.at_level(logging.WARNING, logger="surgeon"):
        report = surgeon.validate(relu_model(), wrong, plugins=[DoublingRelu()], quiet=True)
    warned = [r.getMessage() for r in caplog.records if r.name == "surgeon.validate" and r.levelno == logging.WARNING]
    assert not report.passed and warned == [f"validation failed: {line}" for line in report.failures()]


def test_an_installed_plugin_that_fails_to_load_is_a_warning_on_the_plugins_logger(caplog, monkeypatch):
    class BrokenEntryPoint:
        name, value, dist = "broken", "no_such_module:X", None

        def load(self):
            raise ImportError("no module named no_such_module")
    monkeypatch.setattr("surgeon.rewrite.plugins.entry_points", lambda group: [BrokenEntryPoint()])
    with caplog.at_level(logging.WARNING, logger="surgeon"):
        found = surgeon.PluginSet.installed()
    assert [(r.name, r.getMessage()) for r in caplog.records] == [("surgeon.plugins", found.warnings[0])]


def test_the_command_line_prints_what_it_printed_and_no_log_line():
    result = CliRunner().invoke(cli, ["run", STN])
    assert result.exit_code == 0
    notes = [line for line in result.stderr.splitlines() if "random inputs" in line]
    assert len(notes) == 1 and notes[0].startswith("note: ")  # printed by the command; the record went nowhere


def test_progress_shows_on_a_terminal_and_quiet_silences_one_call(monkeypatch):
    terminal = _on_terminal(monkeypatch)
    surgeon.fuse(STN)
    assert "loading stn_ts_opset20_2d.onnx" in terminal.getvalue()
    terminal.seek(0), terminal.truncate()
    surgeon.fuse(STN, validate=True, quiet=True)
    surgeon.run(STN, stn_feeds(), quiet=True)
    surgeon.validate(STN, STN, quiet=True, far=False)
    surgeon.inspect(STN, quiet=True)
    surgeon.unfuse(surgeon.fuse(STN, quiet=True).model, quiet=True)
    assert terminal.getvalue() == ""


def test_quiet_is_for_its_own_call_only(monkeypatch):
    """Another thread's call still shows progress while one call is quiet."""
    _on_terminal(monkeypatch)
    seen = []
    with progress.quieted(True):
        worker = threading.Thread(target=lambda: seen.append(progress.enabled()))
        worker.start()
        worker.join()
        assert not progress.enabled()
    assert seen == [True] and progress.enabled()


def test_the_environment_variable_still_silences(monkeypatch):
    terminal = _on_terminal(monkeypatch)
    monkeypatch.setenv("SURGEON_QUIET", "1")
    surgeon.fuse(STN)
    assert terminal.getvalue() == ""
