#!/usr/bin/env bash
# envhub's benchmarks on a lent GPU, in one call (the session's device tool; docs/performance.md, "On a GPU (H100)").
#
# The device machine has jax with CUDA, flax, optax, ... but not envhub, gymnax, brax or the peer hubs, and no
# internet: they travel as wheels in .whl/ (built and downloaded here, see benchmarks/gpu/README.md) and install
# into /tmp/site. envhub finds its backends through entry points, so the plugins go in as distributions.
#
#   bash benchmarks/gpu/run.sh                   # there: run(command="bash benchmarks/gpu/run.sh", carry=[".whl"])
#   SMALL=1 PY=/tmp/simvenv/bin/python OUT=/tmp/gpuout bash benchmarks/gpu/run.sh   # here: the logic, tiny sizes, CPU
#
# Each benchmark writes <name>.json and runs under `timeout`, capped by what is left of BUDGET seconds, so one
# that fails or hangs leaves the rest; ONLY="name ..." runs those alone (a rerun). The JSON files come back in
# $OUT/results.tar (the device returns at most 8 files), everything printed in $OUT/log.txt.
set -u
PY=${PY:-python3}
OUT=${OUT:?OUT is the folder the results go to}
BUDGET=${BUDGET:-370}
SMALL=${SMALL:-0}
export PYTHONUNBUFFERED=1
export MUJOCO_GL=${MUJOCO_GL:-disable}  # no rendering here; envhub-brax would pick EGL, which PyOpenGL cannot load there
mkdir -p "$OUT"
RES=$(mktemp -d)
LOG=$OUT/log.txt
START=$(date +%s)
cd "$(dirname "$0")/../.." || exit 1

main() {
if [ -d .whl ]; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site
fi

echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -m) $(nproc) CPUs; envhub at $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi -L
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv
fi
(cd /tmp && $PY -) <<'EOF'
import importlib.metadata as md, sys
import jax
print("python", sys.version.split()[0], "| jax", jax.__version__, "| backend", jax.default_backend(), "| devices", jax.devices())
names = ["jaxlib", "jax-cuda13-plugin", "envhub", "envhub-gymnax", "envhub-brax", "gymnax", "brax", "mujoco",
         "mujoco-mjx", "flax", "numpy", "jaxnasium", "gxm"]
def version(n):
    try:
        return md.version(n)
    except md.PackageNotFoundError:
        return "-"
print(" ".join(f"{n}={version(n)}" for n in names))
import envhub
print("envhub from", envhub.__file__)
EOF

if [ "$SMALL" = 1 ]; then  # the script's logic on a CPU: tiny sizes
    G_SMALL=8,64; G_BIG=128; G_STEPS=20; REPS=2; P_1=64; P_2=128; P_STEPS=20; B_ENVS=4; B_STEPS=10; PEER_G=64
else
    G_SMALL=1024,16384; G_BIG=262144; G_STEPS=1000; REPS=9; P_1=16384; P_2=262144; P_STEPS=500; B_ENVS=4096; B_STEPS=100
    PEER_G=16384,262144
fi

# bench NAME CAP_SECONDS ARGS...: python ARGS --json $RES/NAME.json under timeout min(CAP, what is left of BUDGET);
# then $OUT/results.tar holds every JSON written so far (one file back however many runs, kept if a later one hangs)
bench() {
    local name=$1 cap=$2; shift 2
    if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then
        return
    fi
    local left=$((BUDGET - ($(date +%s) - START)))
    local limit=$((cap < left ? cap : left))
    if [ "$limit" -lt 15 ]; then
        echo "== $name: skipped, ${left}s of the ${BUDGET}s budget left"
        return
    fi
    echo
    echo "== $name (limit ${limit}s, t=$(($(date +%s) - START))s): $*"
    local t0=$(date +%s)
    timeout -k 5 "$limit" $PY "$@" --json "$RES/$name.json"
    local rc=$?
    echo "== $name: exit $rc after $(($(date +%s) - t0))s$([ $rc = 124 ] && echo ' (timed out)')"
    tar -cf "$OUT/results.tar" -C "$RES" .
}

bench gymnax_cartpole_${G_SMALL//,/_} 90 benchmarks/gymnax_cartpole.py --num-envs $G_SMALL --steps $G_STEPS --repeats $REPS --schemes
bench gymnax_cartpole_$G_BIG 90 benchmarks/gymnax_cartpole.py --num-envs $G_BIG --steps $G_STEPS --repeats $REPS --schemes
bench peers_gymnax 80 benchmarks/gpu/peers_sized.py --suite gymnax --num-envs $PEER_G --steps $G_STEPS --repeats $REPS
bench params_gymnax_$P_1 40 benchmarks/params_rollout.py --envs gymnax/CartPole-v1 --num-envs $P_1 --steps $P_STEPS \
    --repeats $REPS
bench params_gymnax_$P_2 60 benchmarks/params_rollout.py --envs gymnax/CartPole-v1 --num-envs $P_2 --steps $P_STEPS \
    --repeats $REPS
bench brax_inverted_pendulum 80 benchmarks/brax_envs.py --envs inverted_pendulum --num-envs $B_ENVS \
    --episode-lengths 50 --steps $B_STEPS --repeats 5
bench params_brax 80 benchmarks/params_rollout.py --envs brax/inverted_pendulum --num-envs $B_ENVS \
    --steps $B_STEPS --repeats 5
bench brax_ant 100 benchmarks/brax_envs.py --envs ant --num-envs $B_ENVS --episode-lengths 1000 \
    --steps $B_STEPS --repeats 5
bench peers_brax 80 benchmarks/gpu/peers_sized.py --suite brax --num-envs $B_ENVS --steps $((B_STEPS * 2)) --repeats 5

echo
echo "== done in $(($(date +%s) - START))s; results.tar: $(tar -tf "$OUT/results.tar" 2>/dev/null | grep json | tr '\n' ' ')"
}

main 2>&1 | tee -a "$LOG"
