#!/usr/bin/env bash
# GPU call 3: every transformer and frozen-feature config on the GPU, then the
# speed of the fine-tuned configs on the GPU and on the machine's CPU.
set -uo pipefail
timeout ${CHECK_TIMEOUT:-300} python dev/gpu/check_configs.py --glob "transformer/*.cfg" \
  --config ner_minilm --config token_ner_minilm --gpu-id 0 --jobs ${JOBS:-12} --max-steps ${CHECK_STEPS:-100} \
  --set training.eval_frequency=50 --set components.transformer.model.name.name=$MINILM --name gpu_check_transformer &
timeout ${CHECK_TIMEOUT:-300} python dev/gpu/check_configs.py --config features/ner --config features/sampled_spancat_uniform --gpu-id 0 --jobs 2 --max-steps ${CHECK_STEPS:-100} \
  --set training.eval_frequency=50 --set components.tok2vec.model.embed.name.name=$MINILM --name gpu_check_features &
wait
SPEED="--config transformer/ner --config transformer/sampled_spancat_uniform --config transformer/token_ner --warmup 3 --set components.transformer.model.name.name=$MINILM"
taskset -c 0-1 timeout ${SPEED_TIMEOUT:-240} python -m spacy_imbalance benchmark speed $SPEED --steps 100 --repeats 3 --gpu-id 0 --name speed_gpu_transformer &
OMP_NUM_THREADS=14 taskset -c 2-15 timeout ${SPEED_TIMEOUT:-240} python -m spacy_imbalance benchmark speed $SPEED --steps 10 --repeats 1 --gpu-id -1 --name speed_cpu_transformer &
wait
