#!/usr/bin/env bash
# Install llama-cpp-python[server] into .venv when it is missing: the real OpenAI-compatible server
# of the slow tests (tests/test_llm_server.py) and of benchmarks/judge_server_parse_rates.py.
# PyPI ships it as source only, so pip builds llama.cpp here: CPU only, no multimodal library, no
# tests/examples/tools (minutes on 2 cores; pip keeps the built wheel in its cache for the next run).
# GGML_NATIVE=OFF builds the portable AVX2 kernels: a native build on this machine's CPU (AVX-512,
# AMX) crashed (SIGSEGV) on every prompt longer than one token with llama-cpp-python 0.3.36.
# Needs .venv (scripts/setup.sh) and a C++ compiler with CMake (build-essential, cmake).
set -euo pipefail
cd "$(dirname "$0")/.."
probe='import llama_cpp, llama_cpp.server.app, uvicorn, fastapi, sse_starlette, starlette_context, pydantic_settings'
if .venv/bin/python -c "$probe" 2>/dev/null; then
  exit 0
fi
for tool in cmake c++; do
  if ! command -v "$tool" >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "setup: installing a C++ toolchain and CMake for llama-cpp-python"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential cmake >/dev/null
      break
    fi
    echo "setup: llama-cpp-python needs $tool on PATH" >&2
    exit 1
  fi
done
echo "setup: building llama-cpp-python[server] from source (CPU only; several minutes)"
start=$(date +%s)
CMAKE_ARGS="-DGGML_CUDA=OFF -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF" \
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
  .venv/bin/pip install -q -c constraints.txt 'llama-cpp-python[server]'
.venv/bin/python -c "$probe"
echo "setup: llama-cpp-python[server] ready in $(( $(date +%s) - start ))s"
