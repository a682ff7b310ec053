export LD_LIBRARY_PATH=$PWD/.carry/lib
XDG_CACHE_HOME=/tmp/lscache timeout 300 python3 tools/bench/compare.py --lockstep $PWD/.carry/lockstep --T 256 --runs 20 --out $OUT/cmp 2>&1 | grep -v "^\s*$" | tail -40
GROUP_TIMEOUT=400 timeout 450 bash tools/gpu-check.sh .carry 2>&1 | tail -32
