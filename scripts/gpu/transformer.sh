#!/usr/bin/env bash
# The fine-tuned MiniLM benchmark on WNUT-2017 (spacy and transformers bundles
# installed, MINILM set by remote.sh), in parts that each fit one 10-minute
# call; the runs of a part train at once (one core each; keep a part under
# about 15 runs: 24 filled the 80 GB of an H100).
#
#   PART=probe    seed 0 of ner, sampled_spancat (uniform) and token_ner (WCE-2)
#                 at learning rates 5e-5, 1e-4 and 2e-4 (tags lr5e-5, ...)
#   PART=spans    spaCy ner, spancat_singlelabel, sampled_spancat (uniform), 3 seeds
#   PART=tokens   token_ner (CE, WCE-2), two_task_ner (AUC-2T, fitted thresholds), 3 seeds
#   PART=masking  ner against sampled_spancat (uniform) with entities masked at p = 0.5, 3 seeds
#
# STEPS (default 1000), LR (5e-5), WARMUP (100), TIMEOUT (seconds per part).
set -uo pipefail
PART=${PART:?set PART to probe, spans, tokens or masking}
STEPS=${STEPS:-1000}
LR=${LR:-5e-5}
WARMUP=${WARMUP:-100}
T=${TIMEOUT:-530}
COMMON="--corpus wnut17 --max-steps $STEPS --gpu-id 0 --set training.eval_frequency=100 --set training.patience=${PATIENCE:-1000}
  --set training.optimizer.learn_rate.warmup_steps=$WARMUP --set components.transformer.model.name.name=$MINILM"
case $PART in
  probe)
    for lr in 5e-5 1e-4 2e-4; do
      timeout $T python scripts/benchmark.py $COMMON --seed 0 --jobs 3 --summary transformer_probe_lr$lr --tag lr$lr \
        --set training.optimizer.learn_rate.initial_rate=$lr \
        --config transformer/ner --config transformer/sampled_spancat_uniform --config transformer/token_ner_wce2 &
    done ;;
  spans)
    timeout $T python scripts/benchmark.py $COMMON --seed 0,1,2 --jobs 9 --summary transformer_spans --baseline transformer/ner \
      --set training.optimizer.learn_rate.initial_rate=$LR \
      --config transformer/ner --config transformer/spancat_singlelabel --config transformer/sampled_spancat_uniform & ;;
  tokens)
    timeout $T python scripts/benchmark.py $COMMON --seed 0,1,2 --jobs 6 --summary transformer_tokens \
      --set training.optimizer.learn_rate.initial_rate=$LR --config transformer/token_ner --config transformer/token_ner_wce2 &
    timeout $T python scripts/benchmark.py $COMMON --seed 0,1,2 --jobs 3 --summary transformer_two_task --tag fitted \
      --set training.optimizer.learn_rate.initial_rate=$LR \
      --config transformer/two_task_auc_type_head --set components.two_task_ner.en_threshold=null --set components.two_task_ner.be_threshold=null & ;;
  masking)
    timeout $T python scripts/benchmark.py $COMMON --seed 0,1,2 --jobs 6 --summary transformer_masking_m50 --baseline transformer/ner --tag m50 \
      --set training.optimizer.learn_rate.initial_rate=$LR \
      --config transformer/ner --config transformer/sampled_spancat_uniform \
      --set corpora.train.@readers=spacy-imbalance.MaskedCorpus.v1 --set corpora.train.p=0.5 --set "corpora.train.seed={seed}" & ;;
  *) echo "PART must be probe, spans, tokens or masking" >&2; exit 2 ;;
esac
wait
