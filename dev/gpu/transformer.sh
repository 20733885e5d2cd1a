#!/usr/bin/env bash
# The fine-tuned MiniLM benchmarks on WNUT-2017 (spacy and transformers bundles
# installed, MINILM set by remote.sh), in parts that each fit one 10-minute
# call, archived into $OUT (PART.tgz) in that call; the runs of a part train at once (one core each; keep a part under
# about 15 runs: 24 filled the 80 GB of an H100).
#
#   PART=headline  the fine-tuned headline (project.yml benchmark-transformer's
#                  first systems): spaCy ner, spancat_singlelabel, sampled_spancat
#                  (uniform, weighted v2), token_ner (WCE-2), 3 seeds: 15 runs
#   PART=probe     seed 0 of ner, sampled_spancat (uniform) and token_ner (WCE-2)
#                  at encoder rates 5e-5, 1e-4 and 3e-4 (tags enc5e-5, ...)
#   PART=tokens    two_task_ner (AUC-2T, fitted thresholds), 3 seeds
#   PART=masking   ner against sampled_spancat (uniform) with entities masked at p = 0.5, 3 seeds
#   PART=never_worse  issue 42's fine-tuned grid (dev/never_worse_grid.sh's transformer cells):
#                  ner, spancat_singlelabel and sampled_spancat (init-config's default: the setting chosen on dev), NW=nw on
#                  the complete train set or NW=nw_m50 with p = 0.5 of its entities removed, 3 seeds:
#                  9 runs, then the built-in's and ours' thresholds tuned on dev; one call each
#
# SEEDS (default 0,1,2: the headline's seeds; e.g. 1,2 when seed 0 ran elsewhere),
# STEPS (default 1000, the project's transformer_steps), EVAL (default 100,
# the configs' and project.yml's transformer_eval_frequency), TIMEOUT (seconds
# per run), MINUTES (a time budget per run, spacy-imbalance.time_budget.v1,
# so that every run stops, keeps model-best and is evaluated inside the call;
# a run it stops records stopped_by_budget and the step it reached). The recipe
# (rates, warm-up) is the configs'; every run records the GPU, driver, CUDA,
# CuPy and torch.
set -uo pipefail
PART=${PART:?set PART to headline, probe, tokens or masking}
STEPS=${STEPS:-1000}
EVAL=${EVAL:-100}
T=${TIMEOUT:-540}
SEEDS=${SEEDS:-0,1,2}
FIRST_SEED=${SEEDS%%,*}
COMMON="--corpus wnut17 --max-steps $STEPS --gpu-id 0 --set training.eval_frequency=$EVAL --set components.transformer.model.name.name=$MINILM"
# no spaces inside the JSON: the variable is split into --set and its value
BUDGET=${MINUTES:+--set training.before_update={\"@callbacks\":\"spacy-imbalance.time_budget.v1\",\"minutes\":$MINUTES}}
HEADLINE_CONFIGS="transformer/ner transformer/spancat_singlelabel transformer/sampled_spancat_uniform transformer/sampled_spancat_weighted_v2 transformer/token_ner_wce2"

# side_by_side "CONFIGS" "SEEDS" "SUMMARY OPTIONS" [run options...]: one
# benchmark process per run, all at once (benchmark.py's --jobs runs side by
# side only on Ray, which the GPU image lacks: without it they run in turn),
# each log in run_<config>_s<seed>[_<tag>].log; then one more call, with the
# summary options (--summary, --baseline), that only summarises: every run is
# done by then
side_by_side() {
  local configs=$1 seeds=$2 summary=$3 config seed tag="" i
  shift 3
  local args=("$@")
  for ((i = 0; i < ${#args[@]}; i++)); do [ "${args[$i]}" = "--tag" ] && tag=_${args[$((i + 1))]}; done
  for config in $configs; do
    for seed in ${seeds//,/ }; do
      # a --summary of its own: the runs' summaries would overwrite each other
      timeout $T python -m spacy_imbalance benchmark run $COMMON $BUDGET --seed "$seed" --config "$config" "$@" --summary "_run_${config##*/}_s$seed$tag" \
        > "run_${config##*/}_s$seed$tag.log" 2>&1 &
    done
  done
  wait
  rm -f metrics/wnut17/_run_*
  tail -q -n 1 run_*.log
  # shellcheck disable=SC2086
  python -m spacy_imbalance benchmark run $COMMON $BUDGET --seed "$seeds" $(printf -- '--config %s ' $configs) "$@" $summary
}

case $PART in
  headline)
    side_by_side "$HEADLINE_CONFIGS" "$SEEDS" "--summary transformer_finetuned --baseline transformer/ner"
    # the same runs paired against the other built-in (nothing retrains)
    python -m spacy_imbalance benchmark run $COMMON $BUDGET --seed "$SEEDS" $(printf -- '--config %s ' $HEADLINE_CONFIGS) \
      --summary transformer_finetuned_vs_spancat --baseline transformer/spancat_singlelabel
    # archived at once: the next call's copy of the working tree removes what
    # this one wrote under metrics/, and a call cut at its limit archives nothing
    tar czf "${OUT:-.}/headline.tgz" metrics/wnut17/transformer metrics/wnut17/transformer_finetuned* \
      $(find training -name "*.log") run_*.log
    # the first seed of each system: saved and reloaded on the GPU, and loaded on the CPU
    python dev/gpu/reload_check.py $(printf -- "training/wnut17/%s-s$FIRST_SEED/model-best " $HEADLINE_CONFIGS) \
      --corpus wnut17 --name reload_check_transformer
    tar czf "${OUT:-.}/reload.tgz" metrics/wnut17/reload_check_transformer.* ;;
  probe)
    for lr in 5e-5 1e-4 3e-4; do
      side_by_side "transformer/ner transformer/sampled_spancat_uniform transformer/token_ner_wce2" 0 "--summary transformer_probe_enc$lr" \
        --tag enc$lr --set training.optimizer.encoder_learn_rate.initial_rate=$lr &
    done
    wait ;;
  tokens)
    side_by_side transformer/two_task_auc_type_head 0,1,2 "--summary transformer_finetuned_two_task" --tag fitted \
      --set components.two_task_ner.en_threshold=null --set components.two_task_ner.be_threshold=null ;;
  masking)
    side_by_side "transformer/ner transformer/sampled_spancat_uniform" 0,1,2 \
      "--summary transformer_finetuned_masking_m50 --baseline transformer/ner" --tag m50 \
      --set corpora.train.@readers=spacy-imbalance.MaskedCorpus.v1 --set corpora.train.p=0.5 --set "corpora.train.seed={seed}" ;;
  never_worse)
    NW=${NW:?set NW to nw or nw_m50}
    masked=()
    [ "$NW" = nw_m50 ] && masked=(--set corpora.train.@readers=spacy-imbalance.MaskedCorpus.v1 --set corpora.train.p=0.5 --set "corpora.train.seed={seed}")
    # ours: sampled_spancat as init-config writes it by default (the setting chosen on dev)
    side_by_side "transformer/ner transformer/spancat_singlelabel transformer/sampled_spancat" "$SEEDS" \
      "--summary never_worse_transformer_$NW --baseline transformer/spancat_singlelabel" --tag "$NW" "${masked[@]}"
    # the built-in and ours with thresholds tuned on dev alike (`-tuned` records beside the runs)
    python -m spacy_imbalance benchmark tune --corpus wnut17 --config transformer/spancat_singlelabel \
      --config transformer/sampled_spancat --tag "$NW" --seed "$SEEDS" --gpu-id 0 ;;
  *) echo "PART must be headline, probe, tokens, masking or never_worse" >&2; exit 2 ;;
esac
if [ "$PART" != headline ]; then
  tar czf "${OUT:-.}/$PART${NW:+_$NW}.tgz" metrics/wnut17/transformer metrics/wnut17/transformer_* $(ls -d metrics/wnut17/never_worse_* 2>/dev/null) \
    $(find training -name "*.log") run_*.log
fi
