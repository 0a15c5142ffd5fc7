#!/usr/bin/env bash
# Regenerates docs/matrix.md, docs/matrix.json and docs/matrix.html: every built-in framework adapter,
# the TensorFlow.js peer, the example TinyTorch package and the reference, measured side by side. Needs the
# extras installed:
#   pip install -r requirements-matrix.txt -e .   (the measured versions; clang on PATH for tinygrad, CMake and a
#                                                 C/C++ compiler for ggml-python's source build)
#   pip install --no-deps -r requirements-torchrec.txt   (TorchRec without its CUDA fbgemm-gpu)
#   (cd examples/tfjs && npm ci)                  (TensorFlow.js for the Node.js peer; needs node on PATH)
# MindSpore needs NumPy < 2, so it is measured in an environment of its own and merged in (embconf matrix
# --merge) when MINDSPORE_PYTHON names that environment's python (pip install -e '.[mindspore]' there).
# tests/adapters/test_frameworks.py re-runs each column and fails when its failing cases differ from docs/matrix.json.
set -euo pipefail
cd "$(dirname "$0")/.."
outputs=(--markdown docs/matrix.md --json docs/matrix.json --html docs/matrix.html --regenerate-with "bash docs/regenerate-matrix.sh")
main=(
  --impl reference
  --impl tinytorch:examples/tinytorch_student/tinytorch/core/embeddings.py
  --impl torch
  --impl flax --impl flax:x64
  --impl keras --impl keras:jax --impl keras:torch
  --impl tinygrad
  --impl transformers:distilbert --impl transformers:marian --impl transformers:m2m100 --impl transformers:whisper
  --impl transformers:llama --impl transformers:gpt_neox --impl transformers:qwen2 --impl transformers:gemma
  --impl transformers:phi
  --impl transformers:phi3 --impl transformers:qwen2_vl
  --impl rotary_embedding_torch --impl rotary_embedding_torch:freqs
  --impl torchtune --impl torchtune:llama3 --impl x_transformers --impl megatron
  --impl ggml
  --impl paddle --impl paddle:functional
  --impl mlx
  --impl haiku --impl haiku:one_hot
  --impl equinox
  --impl onnxruntime --impl onnxruntime_rope --impl onnxruntime_rope:contrib
  --impl torch_bag --impl torch_bag:functional --impl tensorflow_bag --impl tensorflow_bag:safe
  --impl torchrec --impl torchrec:fused --impl keras_rs
  --impl ggml_quant --impl ggml_quant:cpy --impl gguf --impl mlx_quant --impl fbgemm --impl onnxruntime_quant --impl torchao
  --impl 'subprocess:node examples/tfjs/embconf_tfjs.js' --impl 'subprocess:node examples/tfjs/embconf_tfjs.js layer'
  --case-timeout 120
)
if [ -z "${MINDSPORE_PYTHON:-}" ]; then
  exec embconf matrix "${main[@]}" "${outputs[@]}" "$@"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
embconf matrix "${main[@]}" --json "$work/main.json" "$@"
"$MINDSPORE_PYTHON" -m embconf matrix --impl mindspore --case-timeout 120 --json "$work/mindspore.json" "$@"
embconf matrix --merge "$work/main.json" --merge "$work/mindspore.json" "${outputs[@]}"
