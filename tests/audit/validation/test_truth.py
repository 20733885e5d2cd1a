"""The miss-rate estimate against the realised rate (audit/validation/truth.py)."""
import pytest

from spacy_imbalance.audit.validation.truth import estimate_errors, realised_rates


def test_audit_validation_rates_and_estimate():
    rates = realised_rates({"PER": 3, "LOC": 1}, {"PER": 7, "ORG": 2})
    assert rates == {"LOC": 1.0, "ORG": 0.0, "PER": 0.3, "total": 4 / 13}
    rows = [
        {"label": "PER", "rate": 0.25, "rate_low": 0.2, "rate_high": 0.35},
        {"label": "MISC", "rate": 0.1, "rate_low": 0.0, "rate_high": 0.2},  # no such entity: left out
        {"label": "total", "rate": 0.4, "rate_low": 0.35, "rate_high": 0.45},
    ]
    errors = estimate_errors(rows, rates)
    assert set(errors) == {"PER", "total"}
    assert errors["PER"]["error"] == pytest.approx(-0.05) and errors["PER"]["covered"] is True
    assert errors["total"]["error"] == pytest.approx(0.4 - 4 / 13) and errors["total"]["covered"] is False
