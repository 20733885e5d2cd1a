#!/usr/bin/env bash
# Speed on the GPU machine (spacy and transformers bundles installed, MINILM
# set by remote.sh): CNN and fine-tuned MiniLM configs on the GPU (2 cores)
# and, at the same time, on the machine's CPU (the other 14 cores).
set -uo pipefail
CNN="--config ner --config sampled_spancat_uniform --config spancat_singlelabel --config token_ner --config two_task_auc_type_head"
TRF="--config transformer/ner --config transformer/sampled_spancat_uniform --config transformer/token_ner --set components.transformer.model.name.name=$MINILM"
T=${TIMEOUT:-200}
(
  taskset -c 0-1 timeout $T python -m spacy_imbalance benchmark speed $CNN --steps 100 --warmup 5 --repeats 2 --gpu-id 0 --name speed_gpu_cnn
  taskset -c 0-1 timeout $T python -m spacy_imbalance benchmark speed $TRF --steps 50 --warmup 3 --repeats 2 --gpu-id 0 --name speed_gpu_transformer
) &
(
  OMP_NUM_THREADS=14 taskset -c 2-15 timeout $T python -m spacy_imbalance benchmark speed $CNN --steps 100 --warmup 5 --repeats 2 --gpu-id -1 --name speed_cpu_cnn
  OMP_NUM_THREADS=14 taskset -c 2-15 timeout $T python -m spacy_imbalance benchmark speed $TRF --steps 10 --warmup 1 --repeats 1 --gpu-id -1 --name speed_cpu_transformer
) &
wait
