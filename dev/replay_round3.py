"""Replay every defect of hostile-input round 3 (issue 43) through the
regression tests that reproduce it, and say which still reproduce.

    python dev/replay_round3.py            # all of them
    python dev/replay_round3.py M4 L8      # some

Each defect maps to the tests written to fail on it; a defect reproduces
when any of its tests fails. Exit status 1 when one does."""
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
SERVER, STORE, RESOURCES = "tests/review/test_server.py", "tests/review/test_store.py", "tests/review/test_server_resources.py"
BROWSER, PAGE, DECISIONS = "tests/review/test_browser.py", "tests/review/test_page.py", "tests/review/test_decisions.py"
BASE = "tests/init_config/test_base_settings.py"

# defect -> (what it was, the tests that fail on it)
DEFECTS: Dict[str, Tuple[str, List[str]]] = {
    "H1": ("script injection through entity labels", [
        f"{PAGE}::test_hostile_labels_and_texts_are_never_markup", f"{PAGE}::test_the_policy_allows_exactly_the_page_own_style_and_script",
        f"{BROWSER}::test_no_script_from_corpus_data_runs"]),
    "H2": ("any local user reads the corpus and overwrites decisions", [f"{SERVER}::test_server_answers_only_its_owner"]),
    "H3": ("two tabs lose each other's decisions", [
        f"{SERVER}::test_two_tabs_never_write_over_each_other", f"{BROWSER}::test_two_tabs_never_lose_each_others_decisions"]),
    "M1": ("time NaN accepted", [f"{SERVER}::test_a_state_with_an_impossible_time_is_refused", f"{SERVER}::test_a_state_with_nan_anywhere_is_refused"]),
    "M2": ("time 10**400 accepted", [f"{SERVER}::test_a_state_with_an_impossible_time_is_refused"]),
    "M3": ("a FIFO at the state path hangs the server", [
        f"{SERVER}::test_a_named_pipe_at_a_decisions_path_is_refused_never_opened",
        f"{SERVER}::test_a_named_pipe_put_there_while_serving_is_answered_not_waited_on"]),
    "M4": ("idle connections, trickling headers, no thread cap, slow Ctrl+C", [
        f"{RESOURCES}::test_connections_past_the_cap_get_503_and_no_thread",
        f"{RESOURCES}::test_a_request_that_trickles_in_is_cut_at_its_deadline", f"{RESOURCES}::test_a_body_that_stops_coming_is_answered_408",
        f"{RESOURCES}::test_stopping_waits_for_no_idle_connection", f"{RESOURCES}::test_ctrl_c_stops_the_command_at_once_and_says_so"]),
    "M5": ("init-config --base drops --set values", [
        f"{BASE}::test_a_setting_written_from_the_base_is_refused_naming_it",
        f"{BASE}::test_paths_vectors_is_refused_when_the_base_has_vectors_of_its_own",
        f"{BASE}::test_entities_key_set_holds_and_decides_where_the_entities_go",
        "tests/cli/test_init_config.py::test_init_config_base_refuses_a_setting_it_writes_from_the_base"]),
    "M6": ("SplitRateAdam.v1 takes beta1 = 1, eps = 0, grad_clip < 0", [
        "tests/training/test_checks.py::test_split_rate_adam_refuses_every_setting_by_name"]),
    "M7": ("strings from CLI overrides give tracebacks", [
        "tests/training/test_checks.py::test_cli_overrides_are_refused_with_the_setting_named",
        "tests/sweeps/test_budget_settings.py::test_minutes_are_refused_by_name"]),
    "M8": ("SIGTERM while saving leaves model-last unloadable", ["tests/training/test_saving.py"]),
    "M9": ("advise recommends from trials that all scored 0", [
        "tests/advise/test_gates.py::test_advise_refuses_a_dev_of_other_types_before_writing_or_training",
        "tests/advise/test_gates.py::test_advise_says_nothing_learned_instead_of_recommending"]),
    "M10": ("advise --audit takes an audit of another corpus", [
        "tests/advise/test_gates.py::test_advise_refuses_an_audit_of_another_corpus_of_the_same_size",
        "tests/audit/test_gates.py::test_an_audit_records_its_corpus_and_refuses_another_of_the_same_size"]),
    "M11": ("summarize pools a run twice, or other labels as F = 0", [
        "tests/scorers/test_pooling.py::test_an_older_format_copy_of_a_run_is_the_same_run",
        "tests/scorers/test_pooling.py::test_runs_scored_on_other_labels_are_not_pooled"]),
    "M12": ("apply-review adds labels the corpus lacks", [
        "tests/review/test_apply.py::test_check_labels_refuses_a_label_the_corpus_lacks",
        "tests/cli/test_apply_review.py::test_apply_review_refuses_a_label_the_corpus_lacks"]),
    "M13": ("a page without suspects is served, then saves fail", [
        f"{SERVER}::test_a_page_whose_data_the_server_cannot_use_is_refused_at_start"]),
    "L1": ("a kill during saves leaves the two files disagreeing", [
        f"{STORE}::test_each_file_is_synced_before_it_replaces_the_old_and_the_state_goes_first",
        f"{STORE}::test_a_save_cut_short_is_mended_at_the_next_start"]),
    "L2": ("a base without ner is told doc.spans", [f"{BASE}::test_a_base_without_ner_gets_ours_in_doc_ents"]),
    "L3": ("a component named sampled_spancat_tok2vec clashes", [f"{BASE}::test_a_clash_is_an_exact_name_of_what_ours_adds"]),
    "L4": ("--base sm stored as a relative path", [f"{BASE}::test_a_folder_base_is_sourced_by_its_absolute_path"]),
    "L5": ("two Host headers, absolute-form targets", [f"{SERVER}::test_two_host_headers_or_an_absolute_target_are_refused"]),
    "L6": ("no frame, nosniff or referrer headers", [f"{SERVER}::test_every_answer_forbids_framing_sniffing_and_referrers"]),
    "L7": ("no Origin or Content-Type check on PUT", [f"{SERVER}::test_a_save_must_come_from_the_page_as_json"]),
    "L8": ("Content-Length 1e3 or -5 misread", [f"{SERVER}::test_a_malformed_content_length_is_named"]),
    "L9": ("Prodigy/doccano lists read as Label Studio, pretty JSON, UTF-16", [
        f"{DECISIONS}::test_decisions_a_json_list_of_prodigy_records", f"{DECISIONS}::test_decisions_one_pretty_printed_object",
        f"{DECISIONS}::test_decisions_utf16_and_utf8_with_a_byte_order_mark"]),
    "L10": ("duplicate JSON keys: the last wins", [f"{DECISIONS}::test_decisions_a_key_given_twice_is_refused"]),
    "L11": ("-o o.txt writes a DocBin", ["tests/cli/test_docbin_outputs.py::test_a_docbin_output_must_end_in_spacy"]),
    "L12": ("advise's time ignores --max-steps; audit speaks of trials", [
        "tests/advise/test_gates.py::test_the_plan_names_max_steps_and_gives_its_time_as_an_upper_bound",
        "tests/audit/test_gates.py::test_workers_without_ray_say_the_folds_train_one_after_another"]),
    "L13": ("0 suspects beside a 93 % miss rate", ["tests/audit/test_gates.py::test_no_suspect_with_a_large_estimate_says_why"]),
    "L14": ("a second review of the same page starts", [
        f"{SERVER}::test_a_second_server_for_the_same_page_stops_naming_the_folder",
        f"{RESOURCES}::test_a_second_review_of_the_folder_stops_naming_it"]),
    "L15": ("a 30 MB decisions file takes 508 MB", [
        f"{STORE}::test_a_state_file_larger_than_any_state_is_refused_unread", f"{DECISIONS}::test_decisions_json_lines_are_read_a_line_at_a_time"]),
}


def main(chosen: List[str]) -> int:
    unknown = [d for d in chosen if d not in DEFECTS]
    if unknown:
        print(f"unknown defects: {', '.join(unknown)}; known: {', '.join(DEFECTS)}", file=sys.stderr)
        return 2
    defects = {d: DEFECTS[d] for d in (chosen or DEFECTS)}
    tests = sorted({test for _, ids in defects.values() for test in ids})
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *tests], cwd=ROOT)
        outcome = _outcomes(report)
    reproduced = 0
    print(f"\n{'defect':<7}{'tests':>6}  {'':<11}what it was")
    for defect, (what, ids) in defects.items():
        runs = [o for test in ids for node, o in outcome.items() if node == test or node.startswith(test + "::") or node.startswith(test + "[")]
        failed = not runs or any(o != "passed" for o in runs)
        reproduced += failed
        print(f"{defect:<7}{len(runs):>6}  {'REPRODUCES' if failed else 'fixed':<11}{what}")
    print(f"\n{reproduced} of {len(defects)} defects reproduce")
    return 1 if reproduced else 0


def _outcomes(report: Path) -> Dict[str, str]:
    """Node id -> passed / failed / skipped, from pytest's JUnit XML (a
    skipped test is no evidence of a fix)."""
    out = {}
    for case in ET.parse(report).iter("testcase"):
        path = case.get("classname", "").replace(".", "/")
        module, _, cls = path.partition("/Test")
        node = f"{module}.py::" + (f"Test{cls}::" if cls else "") + case.get("name", "")
        kinds = {child.tag for child in case}
        out[node] = "failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds else "passed"
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
