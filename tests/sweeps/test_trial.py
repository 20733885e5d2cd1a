from spacy_imbalance.sweeps import best_dev_score, dev_curve


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
