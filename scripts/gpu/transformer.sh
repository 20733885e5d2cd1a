#!/usr/bin/env bash
# GPU call 2 (spacy and transformers bundles installed, MINILM set by
# remote.sh): the fine-tuned MiniLM benchmark on WNUT-2017, 3 seeds, all runs
# at once (one core each): spaCy ner, spancat_singlelabel, sampled_spancat
# (uniform), token_ner (CE, WCE-2), two_task_ner (AUC-2T, fitted thresholds),
# and the masking study at p = 0.5 (ner against sampled_spancat uniform).
set -uo pipefail
STEPS=${STEPS:-600}
COMMON="--corpus wnut17 --seed 0,1,2 --max-steps $STEPS --gpu-id 0 --set training.eval_frequency=100 --set training.patience=${PATIENCE:-300} --set components.transformer.model.name.name=$MINILM"
T=${TIMEOUT:-530}
timeout $T python scripts/benchmark.py $COMMON --jobs 15 --summary transformer_runs --baseline transformer/ner \
  --config transformer/ner --config transformer/spancat_singlelabel --config transformer/sampled_spancat_uniform --config transformer/token_ner --config transformer/token_ner_wce2 &
timeout $T python scripts/benchmark.py $COMMON --jobs 3 --summary transformer_two_task --tag fitted \
  --config transformer/two_task_auc_type_head --set components.two_task_ner.en_threshold=null --set components.two_task_ner.be_threshold=null &
timeout $T python scripts/benchmark.py $COMMON --jobs 6 --summary transformer_masking_m50 --baseline transformer/ner --tag m50 \
  --config transformer/ner --config transformer/sampled_spancat_uniform \
  --set corpora.train.@readers=spacy-imbalance.MaskedCorpus.v1 --set corpora.train.p=0.5 --set "corpora.train.seed={seed}" &
wait
