#!/usr/bin/env bash
# The image's wheelhouse, dist/wheels: assistant-monitor (an abi3 wheel with its compiled core,
# built here by maturin with cargo), its exporters and a wheel of every dependency, for the Python
# that runs this script (the image's must be the same minor version). deploy/docker/Dockerfile installs from
# it with no index and no compiler.
#   PYTHON=python3.11 deploy/docker/wheels.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
"${PYTHON:-python3}" -m pip wheel --quiet --wheel-dir dist/wheels ./exporters .
ls dist/wheels/assistant_monitor*.whl
