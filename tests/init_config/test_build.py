"""init-config's composition: each option changes its own block and nothing
else, the result is what spaCy fills, and the fingerprint ignores layout."""
import pytest
from spacy.util import load_config, registry
from thinc.api import Config

from spacy_imbalance.init_config import ConfigChoice, build_config, config_fingerprint, render, set_overrides, validate_config
from spacy_imbalance.init_config.options import DEFAULT_SAMPLER, HEADS, LOSSES, READERS, SAMPLERS
from spacy_imbalance.spans.negatives.uniform import CHOSEN_RATE, DEFAULT_FIXED

from ..conftest import ROOT


@pytest.fixture(scope="module")
def plain_sampled():
    return build_config(ConfigChoice("sampled_spancat"))


@pytest.mark.parametrize("component", ["ner", "spancat", "spancat_singlelabel", "sampled_spancat", "token_ner", "two_task_ner"])
def test_build_config_gives_a_valid_filled_pipeline_of_the_component(component):
    config = build_config(ConfigChoice(component))
    assert config["nlp"]["pipeline"] == ["tok2vec", component]
    assert config["components"][component]["factory"] == component
    weights = config["training"]["score_weights"]
    assert max(weights, key=lambda key: weights[key] or 0).endswith("_macro_f")
    validate_config(config)
    # filled: spaCy finds nothing to add
    from spacy_imbalance.init_config import fill_config

    assert fill_config(config) == config


@pytest.mark.parametrize("sampler", sorted(SAMPLERS))
def test_build_config_sampler_changes_only_the_negatives(plain_sampled, sampler):
    config = build_config(ConfigChoice("sampled_spancat", sampler=sampler))
    negatives = config["components"]["sampled_spancat"].pop("negatives")
    assert negatives["@misc"] == SAMPLERS[sampler]["@misc"]
    plain = plain_sampled.copy()
    plain["components"]["sampled_spancat"].pop("negatives")
    assert config == plain


def test_build_config_heads_differ_in_their_settings_only(plain_sampled):
    """v1 is the template's head (the first release's); the default, v2, sets
    the model's pooling, width and dropout and sums the loss, nothing else."""
    v1 = build_config(ConfigChoice("sampled_spancat", head="v1"))
    block, first = plain_sampled["components"]["sampled_spancat"], v1["components"]["sampled_spancat"]
    assert (first["model"]["representation"], first["model"]["hidden_width"], first["model"]["dropout"], first["loss"]["normalize"]) == (
        "endpoints_width", 256, 0.1, True,
    )
    assert (block["model"]["representation"], block["model"]["hidden_width"], block["model"]["dropout"], block["loss"]["normalize"]) == (
        "endpoints_mean_max", 128, 0.0, False,
    )
    assert build_config(ConfigChoice("sampled_spancat", head="v2")) == plain_sampled
    for dotted in HEADS["v2"]:
        section, key = dotted.split(".")
        first[section][key] = block[section][key]
    assert v1 == plain_sampled
    validate_config(v1)


def test_build_config_default_is_the_menu_s_default_sampler(plain_sampled):
    negatives = plain_sampled["components"]["sampled_spancat"]["negatives"]
    assert negatives == build_config(ConfigChoice("sampled_spancat", sampler=DEFAULT_SAMPLER))["components"]["sampled_spancat"]["negatives"]
    assert (negatives["@misc"], negatives["fixed"], negatives["overlapping"]) == ("spacy-imbalance.uniform_negatives.v2", True, True)


def test_build_config_default_trains_as_the_factory_s_default(plain_sampled):
    """`nlp.add_pipe("sampled_spancat")` and init-config without options get
    the same head, loss and draw."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sampled_spancat")
    factory = nlp.config["components"]["sampled_spancat"]
    block = plain_sampled["components"]["sampled_spancat"]
    # the factory names functions of their own (uniform_negatives.v3, CrossEntropy.v2) whose defaults
    # are what init-config writes out under the released names: the same objects, setting for setting
    negatives, written = (registry.resolve({"x": b["negatives"]})["x"] for b in (factory, block))
    assert type(negatives) is type(written) and vars(negatives) == vars(written)
    loss, written_loss = (registry.resolve({"x": b["loss"]})["x"] for b in (factory, block))
    assert type(loss) is type(written_loss) and vars(loss) == vars(written_loss)
    assert {k: v for k, v in factory["model"].items() if k != "tok2vec"} == {k: v for k, v in block["model"].items() if k != "tok2vec"}


def test_factory_default_leaves_a_released_function_s_defaults_alone():
    """spaCy fills a block naming the default's function from the default: a
    block naming the released uniform_negatives.v2 or CrossEntropy.v1 with a
    setting left out gets that function's own default, not the chosen one."""
    import spacy

    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("sampled_spancat", config={
        "negatives": {"@misc": "spacy-imbalance.uniform_negatives.v2", "rate": 0.5},
        "loss": {"@losses": "spacy-imbalance.CrossEntropy.v1"},
    })
    assert (pipe.negatives.rate, pipe.negatives.overlapping, pipe.negatives.fixed) == (0.5, False, DEFAULT_FIXED)
    assert pipe.loss.normalize is True
    # and the default's own: the chosen draw, summed
    default = nlp.add_pipe("sampled_spancat", name="default")
    assert (default.negatives.rate, default.negatives.overlapping, default.negatives.fixed) == (CHOSEN_RATE, True, True)
    assert default.loss.normalize is False


def test_build_config_head_leaves_out_a_setting_the_loss_lacks():
    """Dice is a ratio with no normalize: the v2 head sets the model only."""
    config = build_config(ConfigChoice("sampled_spancat", loss="dice"))
    block = config["components"]["sampled_spancat"]
    assert "normalize" not in block["loss"] and block["model"]["hidden_width"] == 128
    validate_config(config)
    # a loss that has it sums under v2 (focal), averages under v1
    focal = {head: build_config(ConfigChoice("sampled_spancat", loss="focal", head=head)) for head in HEADS}
    assert [focal[head]["components"]["sampled_spancat"]["loss"]["normalize"] for head in ("v1", "v2")] == [True, False]
    # filled or not: the setting is read from the loss function, not from the keys the block has
    unfilled = build_config(ConfigChoice("sampled_spancat", loss="focal"), fill=False)
    assert unfilled["components"]["sampled_spancat"]["loss"]["normalize"] is False


@pytest.mark.parametrize("loss", ["mom_v1", "mom_focal_v1"])  # MoM v2 averages per sentence: no span loss
def test_build_config_head_sums_the_base_loss_a_mom_loss_wraps(loss):
    """MoM takes no normalize of its own: its base loss's decides the
    normalizer (v1 of both terms), so the v2 head sums the base."""
    by_head = {head: build_config(ConfigChoice("sampled_spancat", loss=loss, head=head))["components"]["sampled_spancat"]["loss"] for head in HEADS}
    assert "normalize" not in by_head["v2"]
    assert (by_head["v1"]["base"]["normalize"], by_head["v2"]["base"]["normalize"]) == (True, False)


def test_build_config_overrides_set_after_the_head():
    config = build_config(ConfigChoice("sampled_spancat", overrides={"components.sampled_spancat.model.hidden_width": 64}))
    assert config["components"]["sampled_spancat"]["model"]["hidden_width"] == 64


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_build_config_loss_changes_only_the_loss(loss):
    plain = build_config(ConfigChoice("token_ner"))
    config = build_config(ConfigChoice("token_ner", loss=loss))
    assert config["components"]["token_ner"].pop("loss")["@losses"] == LOSSES[loss]["@losses"]
    plain["components"]["token_ner"].pop("loss")
    assert config == plain
    validate_config(build_config(ConfigChoice("token_ner", loss=loss)))


@pytest.mark.parametrize("resample", sorted(READERS))
def test_build_config_resample_changes_only_the_train_reader(resample):
    plain = build_config(ConfigChoice("ner"))
    config = build_config(ConfigChoice("ner", resample=resample))
    train = config["corpora"].pop("train")
    assert train["path"] == "${paths.train}"
    assert train != plain["corpora"].pop("train")
    assert config == plain
    validate_config(build_config(ConfigChoice("ner", resample=resample)))


def test_build_config_two_task_objectives_are_component_settings():
    config = build_config(ConfigChoice("two_task_ner", loss="bce"))
    assert (config["components"]["two_task_ner"]["loss_mode"], config["components"]["two_task_ner"]["lambda_"]) == ("bce", 1.0)
    assert build_config(ConfigChoice("two_task_ner"))["components"]["two_task_ner"]["loss_mode"] == "auc"


@pytest.mark.parametrize(
    "choice, named",
    [
        (ConfigChoice("tagger"), "--component"),
        (ConfigChoice("token_ner", sampler="uniform"), "--sampler"),
        (ConfigChoice("sampled_spancat", sampler="hard"), "--sampler"),
        (ConfigChoice("sampled_spancat", head="v3"), "--head"),
        (ConfigChoice("spancat_singlelabel", head="v1"), "--head"),
        (ConfigChoice("ner", loss="focal"), "--loss"),
        (ConfigChoice("token_ner", loss="auc"), "--loss"),
        (ConfigChoice("two_task_ner", loss="focal"), "--loss"),
        (ConfigChoice("ner", resample="smote"), "--resample"),
        (ConfigChoice("ner", encoder="bert"), "--encoder"),
        (ConfigChoice("ner", overrides={"components.nerr.moves": None}), "components.nerr"),
    ],
)
def test_build_config_names_the_bad_option(choice, named):
    with pytest.raises(ValueError, match=named.replace(".", r"\.")):
        build_config(choice)


def test_build_config_vectors_only_for_english_by_default():
    assert build_config(ConfigChoice("ner", encoder="vectors"))["paths"]["vectors"] == "en_core_web_md"
    german = build_config(ConfigChoice("ner", encoder="vectors", lang="de"))
    assert german["paths"]["vectors"] is None and german["nlp"]["lang"] == "de"


def test_set_overrides_sets_nested_settings_and_refuses_new_sections():
    config = Config({"a": {"b": {"c": 1}}})
    assert set_overrides(config, {"a.b.c": 2, "a.b.d": [1]})["a"]["b"] == {"c": 2, "d": [1]}
    with pytest.raises(ValueError, match=r"\[a\.x\]"):
        set_overrides(config, {"a.x.c": 1})


def test_render_puts_notes_above_their_section_or_setting():
    config = Config({"a": {"x": 1, "b": {"y": 2}}})
    text = render(config, header=["made here"], notes={"a.b": "why b", "a.x": "why x\nand more"})
    assert text.splitlines() == ["# made here", "[a]", "# why x", "# and more", "x = 1", "", "# why b", "[a.b]", "y = 2"]
    with pytest.raises(ValueError, match="a.z"):
        render(config, header=[], notes={"a.z": "nowhere"})


def test_config_fingerprint_leaves_out_a_setting_added_at_its_no_op_value():
    """scope_o_weight = 0 trains as configs did before the setting existed:
    the fingerprint is the old one; any other value is a new fingerprint."""
    old = '[components]\n\n[components.c]\nfactory = "sampled_spancat"\nmax_span_width = 8\n'
    assert config_fingerprint(old + "scope_o_weight = 0.0\n") == config_fingerprint(old)
    assert config_fingerprint(old + "scope_o_weight = 0\n") == config_fingerprint(old)
    assert config_fingerprint(old + "scope_o_weight = 0.3\n") != config_fingerprint(old)
    # only as a component's setting
    assert config_fingerprint("[training]\nscope_o_weight = 0.0\n") != config_fingerprint("[training]\n")


def test_config_fingerprint_ignores_layout_not_settings():
    text = "[a]\nx = 1\ny = \"s\"\n"
    assert config_fingerprint(text) == config_fingerprint("# a comment\n[a]\ny = \"s\"\n\nx = 1\n")
    assert config_fingerprint(text) != config_fingerprint("[a]\nx = 2\ny = \"s\"\n")


def test_shipped_configs_train_what_init_config_writes():
    """The recipe of sampled_spancat_li is init-config with its overrides: the
    shipped file's settings are exactly those."""
    shipped = load_config(ROOT / "configs" / "sampled_spancat_li.cfg", interpolate=False)
    built = build_config(ConfigChoice(
        "sampled_spancat", sampler="uniform_v1", head="v1",
        overrides={"components.sampled_spancat.max_span_width": 128, "components.sampled_spancat.model.representation": "endpoints_product"},
    ))
    assert shipped == built


@pytest.mark.parametrize("encoder,overrides,every", [
    # a --set max_steps under the templates' 200 evaluated step 0 alone, which became model-best
    ("cnn", {"training.max_steps": 100}, 10),
    ("cnn", {"training.max_steps": 5}, 1),
    ("transformer", {"training.max_steps": 500}, 50),
    # the templates' own budgets evaluate often enough already: 20,000 at 200, 1,000 at 100
    ("cnn", {}, 200),
    ("transformer", {}, 100),
    ("cnn", {"training.max_steps": 0}, 200),  # no step cap: max_epochs ends the run
    ("cnn", {"training.max_steps": 100, "training.eval_frequency": 50}, 50),  # as given
])
def test_build_config_evaluates_a_run_of_its_max_steps_at_least_ten_times(encoder, overrides, every):
    config = build_config(ConfigChoice("ner", encoder=encoder, overrides=overrides), fill=False)
    assert config["training"]["eval_frequency"] == every
