#!/usr/bin/env bash
# tools/diag/one_grade.sh: on the GPU machine (device tool, carry build-gpu), the
# grade JSON and runner log of single grades and of a small L1 capability run
# with 4 graders, printing the evidence of every verdict that is not ok
# (DIAG_TASKS: the tasks graded alone, tier/name).
export KA_HOME=$PWD LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64
for t in ${DIAG_TASKS:-L1/hardswish_clamp L1/silu_scale}; do
  n=$(basename $t)
  KA_RUNNER_LOG=1 ./build-gpu/ka grade --target cuda --task bank/public/$t --kernel bank/public/$t/solutions/cuda.cu --max-seconds 5 --workdir /tmp/w --json $OUT/$n.json 2>$OUT/$n.err | head -5
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r.get("verdict"), r.get("shape"), r.get("detail")); print(json.dumps(r.get("evidence"))[:3000])' $OUT/$n.json
  grep -i "cupti\|foreign" $OUT/$n.err | head -5
done
timeout 200 ./build-gpu/ka --track capability --api-model archive:bank/public --tier L1 --target cuda --k 3 --graders-per-gpu 4 --out /tmp/capl1 --fresh 2>$OUT/capl1.log | tail -3
python3 - <<'PY'
import json, sqlite3
db = sqlite3.connect("/tmp/capl1/journal.sqlite")
for name, verdict, result in db.execute("SELECT task, verdict, result FROM grades"):
    if verdict != "ok":
        g = json.loads(result)
        print(name, verdict, g.get("shape"), g.get("phase"), g.get("detail"))
        print(json.dumps(g.get("evidence"))[:2000])
PY
