#!/usr/bin/env bash
# Issue 42's headline grid on WNUT-2017 (docs/benchmarks/never_worse.md): spaCy's
# ner, spancat_singlelabel and sampled_spancat as init-config writes it by default
# (configs/*/sampled_spancat.cfg: the sampler and head chosen on the dev trials; the
# released head, uniform_negatives.v2 alone, ran as ..._v2), on frozen MiniLM features and fine-tuned MiniLM,
# trained on the complete train set (tag nw) and with each training entity
# removed with p = 0.5 (tag nw_m50; dev and test complete), seeds 0-2; and on the
# CNN, init-config's default encoder (configs/*.cfg, 2,000 steps: vars.max_steps, the CNN benchmarks' budget).
#
# One run at a time on one thread, in the order that answers most first: seed 0
# of every cell (the built-ins of an encoder before ours), then seeds 1-2 of the
# features and CNN cells, then seeds 1-2 of the fine-tuned spancat_singlelabel and
# sampled_spancat, then of the fine-tuned ner.
# Each run of spancat_singlelabel and ours is then tuned on dev (`benchmark tune`, `-tuned` records).
# Resumable: `spacy-imbalance benchmark run` skips a run whose record matches its config,
# budget and overrides, and `benchmark tune` a run tuned before. A fine-tuned run takes about an hour on a CPU core; on a
# GPU run `PART=never_worse NW=nw` and `NW=nw_m50` of dev/gpu/transformer.sh.
#
#   bash dev/never_worse_grid.sh              # the whole grid, in order
#   ENCODERS="features cnn" bash dev/never_worse_grid.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
ENCODERS=${ENCODERS:-features cnn transformer}
MASK=(--set corpora.train.@readers=spacy-imbalance.MaskedCorpus.v1 --set corpora.train.p=0.5 --set "corpora.train.seed={seed}")
# run ENCODER SYSTEM SEED TAG: one run (skipped when done)
run() {
  local encoder=$1 system=$2 seed=$3 tag=$4 budget
  case $encoder in
    # the budgets of the published headlines: headline-features and the fine-tuning recipe
    features) budget=(--max-steps 4000 --set training.patience=1000) ;;
    transformer) budget=(--max-steps 1000 --set training.eval_frequency=100) ;;
    # the CNN masking studies' (project.yml vars.max_steps)
    cnn) budget=(--max-steps 2000) ;;
  esac
  local config=$encoder/$system
  [ "$encoder" = cnn ] && config=$system
  local masked=()
  [ "$tag" = nw_m50 ] && masked=("${MASK[@]}")
  "$PYTHON" -m spacy_imbalance benchmark run --corpus wnut17 --config "$config" --seed "$seed" --tag "$tag" \
    "${budget[@]}" "${masked[@]}" --summary "_never_worse_run" || echo "FAILED: $encoder/$system-$tag seed $seed"
  rm -f metrics/wnut17/_never_worse_run*
  # the built-in and ours also with thresholds tuned on dev alike (skipped when tuned before)
  if [ "$system" != ner ]; then
    "$PYTHON" -m spacy_imbalance benchmark tune --corpus wnut17 --config "$config" --seed "$seed" --tag "$tag" \
      || echo "FAILED: tuning $encoder/$system-$tag seed $seed"
  fi
}

cells() {  # ENCODER "SYSTEMS" "SEEDS"
  local encoder=$1 system seed tag
  [[ " $ENCODERS " == *" $encoder "* ]] || return 0
  for seed in $3; do for tag in nw nw_m50; do for system in $2; do run "$encoder" "$system" "$seed" "$tag"; done; done; done
}

ALL="ner spancat_singlelabel sampled_spancat"
cells features "ner spancat_singlelabel" 0
cells features sampled_spancat 0
cells cnn "$ALL" 0
cells transformer "spancat_singlelabel ner" 0
cells transformer sampled_spancat 0
cells features "$ALL" "1 2"
cells cnn "$ALL" "1 2"
cells transformer "spancat_singlelabel sampled_spancat" "1 2"
cells transformer ner "1 2"
echo "never-worse grid: every run done"
