"""run.json's ``served``: the usage counts of a session, added to the earlier sessions'."""

from __future__ import annotations

from typing import Any

from assay.runs import NOT_REPORTED, served_identity, served_warnings
from assay.runs._ray import add_usage


def _usage(replies: int, names: dict[str, int], fingerprints: dict[str, int]) -> dict[str, Any]:
    return {
        "calls": replies,
        "served_replies": replies,
        "served_model_names": names,
        "system_fingerprints": fingerprints,
    }


def test_one_build_throughout_is_listed_without_a_warning() -> None:
    served = served_identity({"openai/m": _usage(4, {"m-0613": 4}, {"fp_a": 4})}, {})
    assert served == {
        "openai/m": {"replies": 4, "model_names": {"m-0613": 4}, "system_fingerprints": {"fp_a": 4}}
    }
    assert served_warnings(served) == []


def test_a_server_that_reports_nothing_says_so() -> None:
    served = served_identity({"openai/m": _usage(3, {}, {})}, {})
    assert served["openai/m"]["model_names"] == NOT_REPORTED
    assert served["openai/m"]["system_fingerprints"] == NOT_REPORTED
    assert served_warnings(served) == []


def test_replies_that_reported_nothing_are_counted_beside_the_ones_that_did() -> None:
    served = served_identity({"openai/m": _usage(5, {"m": 5}, {"fp_a": 2})}, {})
    assert served["openai/m"]["system_fingerprints"] == {"fp_a": 2, NOT_REPORTED: 3}
    assert served_warnings(served) == []  # one fingerprint seen: nothing changed that is known


def test_a_changed_fingerprint_or_name_is_a_warning_naming_both_with_counts() -> None:
    usage = {"openai/m": _usage(5, {"m-0613": 3, "m-1106": 2}, {"fp_a": 3, "fp_b": 2})}
    (warning,) = served_warnings(served_identity(usage, {}))
    assert warning.startswith("openai/m: the served model name changed during the run")
    assert "m-0613 for 3 replies, m-1106 for 2 replies" in warning
    assert "the system_fingerprint changed during the run (fp_a for 3 replies" in warning
    assert "a rerun may not reproduce them" in warning


def test_sessions_add_up_and_a_change_between_them_is_a_change() -> None:
    first = served_identity({"openai/m": _usage(3, {"m": 3}, {"fp_a": 3})}, {})
    assert served_warnings(first) == []
    both = served_identity({"openai/m": _usage(2, {"m": 2}, {"fp_b": 2})}, first)
    assert both["openai/m"] == {
        "replies": 5,
        "model_names": {"m": 5},
        "system_fingerprints": {"fp_a": 3, "fp_b": 2},
        "warning": both["openai/m"]["warning"],
    }
    # a model this session did not call keeps what earlier sessions recorded
    again = served_identity({"openai/other": _usage(0, {}, {})}, both)
    assert again == both


def test_an_unreported_count_from_an_earlier_session_is_recounted_not_added_twice() -> None:
    first = served_identity({"openai/m": _usage(3, {"m": 3}, {"fp_a": 1})}, {})
    assert first["openai/m"]["system_fingerprints"] == {"fp_a": 1, NOT_REPORTED: 2}
    both = served_identity({"openai/m": _usage(1, {"m": 1}, {})}, first)
    assert both["openai/m"]["system_fingerprints"] == {"fp_a": 1, NOT_REPORTED: 3}


def test_a_hand_edited_entry_is_read_for_what_counts_it_holds() -> None:
    earlier: dict[str, Any] = {
        "openai/m": {"replies": "many", "model_names": ["m"], "system_fingerprints": {"x": -1}},
        "openai/n": "not an entry",
    }
    served = served_identity({"openai/m": _usage(1, {"m": 1}, {"fp": 1})}, earlier)
    assert served == {
        "openai/m": {"replies": 1, "model_names": {"m": 1}, "system_fingerprints": {"fp": 1}}
    }


def test_ray_workers_usage_sums_the_served_counts() -> None:
    total: dict[str, dict[str, Any]] = {}
    add_usage(total, {"openai/m": {**_usage(2, {"m": 2}, {"fp_a": 2}), "latency_ms": {}}})
    add_usage(total, {"openai/m": {**_usage(1, {"m": 1}, {"fp_b": 1}), "latency_ms": {"p50": 1.0}}})
    assert total["openai/m"]["served_replies"] == 3
    assert total["openai/m"]["system_fingerprints"] == {"fp_a": 2, "fp_b": 1}
    assert "latency_ms" not in total["openai/m"]  # percentiles do not add up
