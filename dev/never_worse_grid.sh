#!/usr/bin/env bash
# Issue 42's headline grid on WNUT-2017 (docs/benchmarks/never_worse.md): spaCy's
# ner, spancat_singlelabel and sampled_spancat with the setting chosen on dev
# (configs/*/sampled_spancat_uniform.cfg with OURS below, runs tagged ..._v3; the
# released head, uniform_negatives.v2 alone, ran as ..._v2), on frozen MiniLM features and fine-tuned MiniLM,
# trained on the complete train set (tag nw) and with each training entity
# removed with p = 0.5 (tag nw_m50; dev and test complete), seeds 0-2.
#
# One run at a time on one thread, in the order that answers most first: seed 0
# of every cell (the built-ins of an encoder before ours), then seeds 1-2 of the
# features cells, then seeds 1-2 of the fine-tuned spancat_singlelabel and
# sampled_spancat, then of the fine-tuned ner.
# Resumable: `spacy-imbalance benchmark run` skips a run whose record matches its config,
# budget and overrides. A fine-tuned run takes about an hour on a CPU core; on a
# GPU run `PART=never_worse NW=nw` and `NW=nw_m50` of dev/gpu/transformer.sh.
#
#   bash dev/never_worse_grid.sh              # the whole grid, in order
#   ENCODERS=features bash dev/never_worse_grid.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
ENCODERS=${ENCODERS:-features transformer}
MASK=(--set corpora.train.@readers=spacy-imbalance.MaskedCorpus.v1 --set corpora.train.p=0.5 --set "corpora.train.seed={seed}")
# ours: the shipped uniform config with the setting chosen on the dev trials (docs/benchmarks/never_worse.md):
# uniform_negatives.v2 with its defaults (one draw per sentence kept all run, no correction) and the negatives
# that overlap gold, and spaCy's head settings and pooling (width 128, no head dropout, the loss summed over the
# trained spans, endpoints_mean_max); project.yml study-never-worse and dev/gpu/transformer.sh set the same
OURS=(--set components.sampled_spancat.negatives.@misc=spacy-imbalance.uniform_negatives.v2
  --set components.sampled_spancat.negatives.overlapping=true --set components.sampled_spancat.model.hidden_width=128
  --set components.sampled_spancat.model.dropout=0.0 --set components.sampled_spancat.model.representation=endpoints_mean_max
  --set components.sampled_spancat.loss.normalize=false)

# run ENCODER SYSTEM SEED TAG: one run (skipped when done)
run() {
  local encoder=$1 system=$2 seed=$3 tag=$4 budget
  case $encoder in
    # the budgets of the published headlines: headline-features and the fine-tuning recipe
    features) budget=(--max-steps 4000 --set training.patience=1000) ;;
    transformer) budget=(--max-steps 1000 --set training.eval_frequency=100) ;;
  esac
  local masked=() ours=()
  [ "$tag" = nw_m50 ] && masked=("${MASK[@]}")
  if [ "$system" = sampled_spancat ]; then system=sampled_spancat_uniform; tag=${tag}_v3; ours=("${OURS[@]}"); fi
  "$PYTHON" -m spacy_imbalance benchmark run --corpus wnut17 --config "$encoder/$system" --seed "$seed" --tag "$tag" \
    "${budget[@]}" "${masked[@]}" "${ours[@]}" --summary "_never_worse_run" || echo "FAILED: $encoder/$system-$tag seed $seed"
  rm -f metrics/wnut17/_never_worse_run*
}

cells() {  # ENCODER "SYSTEMS" "SEEDS"
  local encoder=$1 system seed tag
  [[ " $ENCODERS " == *" $encoder "* ]] || return 0
  for seed in $3; do for tag in nw nw_m50; do for system in $2; do run "$encoder" "$system" "$seed" "$tag"; done; done; done
}

ALL="ner spancat_singlelabel sampled_spancat"
cells features "ner spancat_singlelabel" 0
cells features sampled_spancat 0
cells transformer "spancat_singlelabel ner" 0
cells transformer sampled_spancat 0
cells features "$ALL" "1 2"
cells transformer "spancat_singlelabel sampled_spancat" "1 2"
cells transformer ner "1 2"
echo "never-worse grid: every run done"
