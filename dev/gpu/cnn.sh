#!/usr/bin/env bash
# GPU call 1 (after the spacy bundle is installed by remote.sh): every CNN
# config trained and evaluated on the GPU, then the speed of six of them on
# the GPU and, at the same time on other cores, on the machine's CPU.
set -uo pipefail
CHECK_STEPS=${CHECK_STEPS:-200}
python -c "import spacy, thinc, cupy; from thinc.api import require_gpu; require_gpu(0); print('spacy', spacy.__version__, 'thinc', thinc.__version__, 'cupy', cupy.__version__)" || exit 1
timeout ${CHECK_TIMEOUT:-330} python dev/gpu/check_configs.py --glob "*.cfg" --skip minilm --gpu-id 0 --jobs ${JOBS:-10} \
  --max-steps $CHECK_STEPS --set training.eval_frequency=100 --name gpu_check_cnn
SPEED="--config ner --config spancat --config spancat_singlelabel --config sampled_spancat_uniform --config token_ner --config two_task_auc_type_head --steps 100 --warmup 5 --repeats 3"
# the GPU process gets 2 cores, the CPU one the other 14
taskset -c 0-1 timeout ${SPEED_TIMEOUT:-240} python -m spacy_imbalance benchmark speed $SPEED --gpu-id 0 --name speed_gpu_cnn &
OMP_NUM_THREADS=14 taskset -c 2-15 timeout ${SPEED_TIMEOUT:-240} python -m spacy_imbalance benchmark speed $SPEED --gpu-id -1 --name speed_cpu_cnn &
wait
