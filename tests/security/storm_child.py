"""Run as an unprivileged user by ``test_storm.py``: one job of a fork storm and, while it
rages, several ordinary jobs on the same runner. Prints one JSON line: how each ended.

    python storm_child.py SANDBOX NEIGHBOURS
"""

from __future__ import annotations

import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from vibes_eval.core.errors import RunnerError
from vibes_eval.core.registry import runner_class
from vibes_eval.core.runner import SessionSpec
from vibes_eval.core.types import Limits

# Every process forks, forever, failures or not (the storm's budget is Limits.pids).
STORM = "exec perl -e 'while (1) { fork }'"
# An ordinary job: a few processes of its own.
NEIGHBOUR = "for i in 1 2 3 4 5; do /bin/true; done; echo ok"


def main() -> None:
    runner = runner_class(sys.argv[1])()
    n = int(sys.argv[2])
    out: dict[str, object] = {"notes": runner.capabilities.notes}

    def job(name: str, script: str, limits: Limits) -> None:
        session = runner.prepare(SessionSpec(label=name))
        try:
            res = runner.execute(session, ["/bin/sh", "-c", script], limits)
            out[name] = {"termination": res.termination.value, "exit": res.exit_code,
                         "stdout": res.stdout.strip()[:40], "stderr": res.stderr[-200:]}  # fmt: skip
        except RunnerError as exc:
            out[name] = {"error": str(exc)[:300]}
        finally:
            runner.cleanup(session)

    storm = threading.Thread(target=job, args=("storm", STORM, Limits(timeout_s=6, pids=32)))
    storm.start()
    time.sleep(1.5)  # the storm is at its limit by now
    with ThreadPoolExecutor(4) as pool:
        for k in range(n):
            pool.submit(job, f"neighbour-{k}", NEIGHBOUR, Limits(timeout_s=10, pids=16))
    storm.join()
    runner.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
