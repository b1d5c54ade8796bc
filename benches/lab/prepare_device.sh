#!/usr/bin/env bash
# Here (no GPU): builds and packs, in .device-stage/ (ignored; at most 64 MiB travel), what
# benches/lab/device_session.sh runs on the GPU machine in one call: the GPU test binaries, the
# examples (the CLI among them) and the lab's generated kernel sources.
# Usage, from anywhere:  bash benches/lab/prepare_device.sh
# Then call the device tool with carry [".device-stage"] and the command
#   bash benches/lab/device_session.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
../shared/device/stage > /tmp/monoscan-stage.log
cd .device-stage
# CPU-only tests and the multi-GPU example stay here (they do not need the GPU machine).
rm -f tests/cpu tests/laws tests/cli tests/monoscan tests/compile tests/cache examples/multi_gpu
rm -rf benches
tar -cJf pack.tar.xz tests examples
rm -rf tests examples
cd ..
LAB_OUT="$PWD/.device-stage/lab" bash benches/lab/run.sh gen
du -sh .device-stage
