#!/usr/bin/env bash
# The fine-tuned MiniLM benchmarks on WNUT-2017 (spacy and transformers bundles
# installed, MINILM set by remote.sh), in parts that each fit one 10-minute
# call; the runs of a part train at once (one core each; keep a part under
# about 15 runs: 24 filled the 80 GB of an H100).
#
#   PART=headline  the fine-tuned headline (project.yml benchmark-transformer's
#                  first systems): spaCy ner, spancat_singlelabel, sampled_spancat
#                  (uniform, weighted v2), token_ner (WCE-2), 3 seeds: 15 runs
#   PART=probe     seed 0 of ner, sampled_spancat (uniform) and token_ner (WCE-2)
#                  at encoder rates 5e-5, 1e-4 and 3e-4 (tags enc5e-5, ...)
#   PART=tokens    two_task_ner (AUC-2T, fitted thresholds), 3 seeds
#   PART=masking   ner against sampled_spancat (uniform) with entities masked at p = 0.5, 3 seeds
#
# STEPS (default 1000, the project's transformer_steps), EVAL (default 100,
# the configs' and project.yml's transformer_eval_frequency), TIMEOUT (seconds
# per part), MINUTES (headline: a time budget per run, spacy-imbalance.time_budget.v1,
# so that every run stops, keeps model-best and is evaluated inside the call;
# a run it stops records stopped_by_budget and the step it reached). The recipe
# (rates, warm-up) is the configs'; every run records the GPU, driver, CUDA,
# CuPy and torch.
set -uo pipefail
PART=${PART:?set PART to headline, probe, tokens or masking}
STEPS=${STEPS:-1000}
EVAL=${EVAL:-100}
T=${TIMEOUT:-540}
COMMON="--corpus wnut17 --max-steps $STEPS --gpu-id 0 --set training.eval_frequency=$EVAL --set components.transformer.model.name.name=$MINILM"
HEADLINE_CONFIGS="transformer/ner transformer/spancat_singlelabel transformer/sampled_spancat_uniform transformer/sampled_spancat_weighted_v2 transformer/token_ner_wce2"
HEADLINE=$(for config in $HEADLINE_CONFIGS; do printf -- '--config %s ' "$config"; done)
# no spaces inside the JSON: the variable is split into --set and its value
BUDGET=${MINUTES:+--set training.before_update={\"@callbacks\":\"spacy-imbalance.time_budget.v1\",\"minutes\":$MINUTES}}
case $PART in
  headline)
    # one benchmark process per run: benchmark.py's --jobs runs side by side
    # only on Ray, which the GPU image lacks (without it they run in turn)
    for config in $HEADLINE_CONFIGS; do
      for seed in 0 1 2; do
        timeout $T python scripts/benchmark.py $COMMON $BUDGET --seed $seed --config $config --summary _run_${config##*/}_s$seed \
          > "headline_${config##*/}_s$seed.log" 2>&1 &
      done
    done
    wait
    rm -f metrics/wnut17/_run_*
    tail -n 2 headline_*.log
    # every run is done: these two only summarise, paired against each built-in
    python scripts/benchmark.py $COMMON $BUDGET --seed 0,1,2 --summary transformer_finetuned --baseline transformer/ner $HEADLINE
    python scripts/benchmark.py $COMMON $BUDGET --seed 0,1,2 --summary transformer_finetuned_vs_spancat --baseline transformer/spancat_singlelabel $HEADLINE
    # archived at once: the next call's copy of the working tree removes what
    # this one wrote under metrics/, and a call cut at its limit archives nothing
    tar czf "${OUT:-.}/headline.tgz" metrics/wnut17/transformer metrics/wnut17/transformer_finetuned* \
      $(find training -name "*.log") headline_*.log
    # seed 0 of each system: saved and reloaded on the GPU, and loaded on the CPU
    python scripts/gpu/reload_check.py $(for config in $HEADLINE_CONFIGS; do printf -- 'training/wnut17/%s-s0/model-best ' "$config"; done) \
      --corpus wnut17 --name reload_check_transformer
    tar czf "${OUT:-.}/reload.tgz" metrics/wnut17/reload_check_transformer.* ;;
  probe)
    for lr in 5e-5 1e-4 3e-4; do
      timeout $T python scripts/benchmark.py $COMMON --seed 0 --jobs 3 --summary transformer_probe_enc$lr --tag enc$lr \
        --set training.optimizer.encoder_learn_rate.initial_rate=$lr \
        --config transformer/ner --config transformer/sampled_spancat_uniform --config transformer/token_ner_wce2 &
    done ;;
  tokens)
    timeout $T python scripts/benchmark.py $COMMON --seed 0,1,2 --jobs 3 --summary transformer_finetuned_two_task --tag fitted \
      --config transformer/two_task_auc_type_head --set components.two_task_ner.en_threshold=null --set components.two_task_ner.be_threshold=null & ;;
  masking)
    timeout $T python scripts/benchmark.py $COMMON --seed 0,1,2 --jobs 6 --summary transformer_finetuned_masking_m50 --baseline transformer/ner --tag m50 \
      --config transformer/ner --config transformer/sampled_spancat_uniform \
      --set corpora.train.@readers=spacy-imbalance.MaskedCorpus.v1 --set corpora.train.p=0.5 --set "corpora.train.seed={seed}" & ;;
  *) echo "PART must be headline, probe, tokens or masking" >&2; exit 2 ;;
esac
wait
