#!/usr/bin/env bash
# LLM-scale benchmark: conversion without and with calibration of a ~0.85 B
# parameter Llama-style decoder (generated with Debian's python3-torch) and its
# Q-DQ export in onnxruntime-node. See benchmarks/llm_scale.py for what is
# measured; arguments go to it (e.g. --layers 4 --dim 512 for a quick run).
#   benchmarks/llm_scale.sh [llm_scale.py options]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec /usr/bin/python3 "$here/llm_scale.py" "$@"
