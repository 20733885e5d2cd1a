from spacy_imbalance.sweeps import best_dev_score, dev_curve
from spacy_imbalance.sweeps.trial import step_record


def test_dev_curve_reads_spacys_training_table(tmp_path):
    log = tmp_path / "run.log"
    log.write_text(
        "E    #       LOSS TOK2VEC  LOSS NER  ENTS_MACRO_F  SCORE \n"
        "---  ------  ------------  --------  ------------  ------\n"
        "  0       0          0.00     50.92          0.00    0.00\n"
        "  3     200         45.32   1670.94         10.67    0.11\n"
        "  7    1400        100.68   1098.70         19.87    0.20\n"
        "Saved pipeline to output directory\n",
        encoding="utf8",
    )
    assert dev_curve(log) == [[0, 0.0], [200, 0.11], [1400, 0.2]]
    assert best_dev_score({"dev_curve": [[0, 0.0], [200, 0.3], [400, 0.2]]}) == 0.3
    assert best_dev_score({"dev_curve": []}) is None


def test_step_record_flags_a_run_cut_by_the_cap_while_improving():
    # best at the last evaluation, at the cap: a longer budget might have helped
    assert step_record({"dev_curve": [[0, 0.0], [500, 0.2], [1000, 0.3]], "train_steps": 1000}) == {
        "steps_trained": 1000, "cut_by_step_cap": True}
    # past its best at the cap, or stopped early: not cut while improving
    assert step_record({"dev_curve": [[500, 0.3], [1000, 0.2]], "train_steps": 1000})["cut_by_step_cap"] is False
    assert step_record({"dev_curve": [[500, 0.3], [700, 0.3]], "train_steps": 1000}) == {
        "steps_trained": 700, "cut_by_step_cap": False}
    # a time budget stopped it at step 400: its steps, not the cap's
    assert step_record({"dev_curve": [[200, 0.1], [400, 0.2]], "train_steps": 1000, "steps_trained": 400}) == {
        "steps_trained": 400, "cut_by_step_cap": False}
    assert step_record({}) == {}
