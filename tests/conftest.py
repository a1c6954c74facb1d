"""Every report a test makes follows the report schema (surgeon/schemas/report.schema.json):
the fuse, inspect and unfuse ``Report``, the ``ValidationReport`` and the ``LintReport`` are
checked each time their ``to_dict`` returns, in every test (tests/library/test_report_schema.py
makes each kind on purpose). jsonschema comes with the test extra: without it the tests fail
rather than pass unchecked."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(autouse=True, scope="session")
def _reports_follow_the_schema():
    import jsonschema

    from surgeon.lint.report import LintReport
    from surgeon.reportfields import schema
    from surgeon.rewrite.report import Report
    from surgeon.validate.report import ValidationReport

    validator = jsonschema.Draft202012Validator(schema())
    originals = {cls: cls.to_dict for cls in (Report, ValidationReport, LintReport)}

    def checked(original):
        def to_dict(self, *args, **kwargs):
            data = original(self, *args, **kwargs)
            validator.validate(json.loads(json.dumps(data)))  # as a file holds it
            return data
        return to_dict
    for cls, original in originals.items():
        cls.to_dict = checked(original)
    try:
        yield
    finally:
        for cls, original in originals.items():
            cls.to_dict = original
