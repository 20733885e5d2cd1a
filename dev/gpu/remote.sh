#!/usr/bin/env bash
# On the GPU machine, in the repository root: install what dev/gpu/gather.py
# put in .gpu/ (each bundle once per machine, into .gpu/site), install this
# package from the working tree (every call: the code may have changed),
# restore MiniLM to float32, then run the command given.
#
#     bash dev/gpu/remote.sh python dev/gpu/check_configs.py --glob "*.cfg" --gpu-id 0
#
# The command sees PYTHONPATH with both installs and MINILM, the float32 model
# folder (for --set components.transformer.model.name.name=$MINILM).
set -euo pipefail
GPU=${GPU_DIR:-.gpu}
PY=${PYTHON:-python3}
# outside the repository: the device tool replaces .gpu/ with what a call
# carries, so installs there vanish with the next call's bundle
SITE=${GPU_SITE:-/opt/spacy-imbalance}
mkdir -p "$SITE"
for bundle in spacy transformers; do
  if compgen -G "$GPU/$bundle/*.whl" > /dev/null && [ ! -f "$SITE/$bundle/.installed" ]; then
    echo "remote.sh: installing $GPU/$bundle ($(ls "$GPU/$bundle" | wc -l) wheels)"
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE/$bundle" "$GPU"/$bundle/*.whl
    touch "$SITE/$bundle/.installed"
  fi
done
"$PY" -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --no-cache-dir --upgrade --target "$SITE/package" . > /dev/null
# scripts call "python": the image has only python3 on its PATH
mkdir -p "$SITE/bin" && rm -f "$SITE/bin/python" && printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v "$PY")" > "$SITE/bin/python" && chmod +x "$SITE/bin/python"
export PATH="$SITE/bin:$PATH"
export PYTHONPATH="$SITE/package:$PWD:$SITE/transformers:$SITE/spacy${PYTHONPATH:+:$PYTHONPATH}"
if [ -f "$GPU/minilm/model.safetensors" ] && [ ! -f "$SITE/minilm32/model.safetensors" ]; then
  "$PY" dev/gpu/gather.py --restore "$GPU/minilm" "$SITE/minilm32"
fi
export MINILM="$SITE/minilm32"
export PYTHONUNBUFFERED=1
"$@"
