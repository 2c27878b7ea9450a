"""API fuzz: schemathesis (``st run --checks all``) against a live ``arklow controller run``
process on loopback, as ``tests/controller/test_openapi_schemathesis.py`` runs it but with many
more examples per operation (``FUZZ_EXAMPLES``, default 1,000; the test runs 25) and a seed per
run (``FUZZ_SEED``, default: the time). Any finding fails the run and is printed.

Writes ``bench/RESULTS-api-fuzz.md``. ``python bench/fuzz_api.py`` (minutes).
"""

from __future__ import annotations

import datetime
import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from tests.controller.test_openapi_schemathesis import TOKEN, live_controller, schemathesis

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "1000"))
SEED = int(os.environ.get("FUZZ_SEED", str(int(time.time()))))
OUT = Path(__file__).with_name("RESULTS-api-fuzz.md")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="arklow-fuzz-") as tmp:
        work = Path(tmp)
        with live_controller(work) as url:
            start = time.perf_counter()
            auth = f"Authorization: Bearer {TOKEN}"
            clean, report = schemathesis(url, work, "--header", auth, examples=EXAMPLES, seed=SEED)
            elapsed = time.perf_counter() - start
    cases = re.search(r"(\d+) generated", report)
    summary = report.strip().splitlines()[-1] if report.strip() else "(no output)"
    print(report[-20000:] if not clean else summary)
    OUT.write_text(
        "# API fuzz (schemathesis against a live controller)\n\n"
        f"{datetime.date.today()}, {platform.python_version()}, {os.cpu_count()} cores. "
        f"`st run --checks all`, {EXAMPLES} examples per operation, seed {SEED}, against "
        "`arklow controller run` with a tokens file after its first tick "
        "(`bench/fuzz_api.py`).\n\n"
        f"- test cases: {cases.group(1) if cases else '?'} in {elapsed:.0f} s\n"
        f"- result: {'no findings' if clean else 'FINDINGS (see the run output)'}\n"
        f"- schemathesis: `{summary.strip('= ')}`\n"
    )
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
