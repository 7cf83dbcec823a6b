"""The quick tier's line coverage of ``src/threadline`` against the full tier's, module by module.

    python .ci/coverage_tiers.py [--quick-only] [--data DIR]

Needs the dev extra (``pytest-cov``) and, for the full tier, the servers
(``eval "$(bash .ci/services.sh)"``). Runs ``python -m pytest`` under coverage as the README
runs it (the quick tier, the ``dev`` profile) and as the full tier (``THREADLINE_FULL=1``),
then prints each tier's total, the modules where the quick tier runs more than ``--gap``
points fewer lines, and the modules the quick tier does not reach at all (which must be none:
every module is in the quick tier). Lines run in the processes tests start (the examples, the
docs blocks, store worker processes) count too (``[tool.coverage.run]`` in
``pyproject.toml``). Exit status 1 when a module is not reached by the quick tier. Not part of
``.ci/run``: the full tier under coverage takes about twice its usual time.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_tier(name: str, data: Path, env: dict[str, str]) -> Path:
    out = data / f".coverage.{name}"
    if out.exists():
        out.unlink()
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--cov=threadline",
        "--cov-report=",
    ]
    print(f"[coverage] {name}: {' '.join(command[1:])}", file=sys.stderr)
    status = subprocess.run(
        command, cwd=ROOT, env={**os.environ, **env, "COVERAGE_FILE": str(out)}, check=False
    ).returncode
    if status:  # the coverage is still worth reading; the failure is reported, not hidden
        print(f"[coverage] {name}: pytest exited {status} (tests failed)", file=sys.stderr)
    return out


def percentages(path: Path) -> dict[str, tuple[int, int]]:
    """Module (path under src) -> (lines run, lines measured)."""
    import coverage

    measured = coverage.Coverage(data_file=str(path))
    measured.load()
    result: dict[str, tuple[int, int]] = {}
    for filename in measured.get_data().measured_files():
        _, statements, _, missing, _ = measured.analysis2(filename)
        relative = Path(filename).resolve().relative_to(ROOT / "src").as_posix()
        result[relative] = (len(statements) - len(missing), len(statements))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick-only", action="store_true", help="skip the full tier")
    parser.add_argument("--data", default=str(ROOT / ".coverage-tiers"), help="data directory")
    parser.add_argument("--gap", type=float, default=5.0, help="points to list a module")
    args = parser.parse_args()
    data = Path(args.data)
    data.mkdir(exist_ok=True)
    quick = percentages(
        run_tier("quick", data, {"THREADLINE_FULL": "", "THREADLINE_HYPOTHESIS_PROFILE": "dev"})
    )
    full = {} if args.quick_only else percentages(run_tier("full", data, {"THREADLINE_FULL": "1"}))
    modules = sorted(
        str(p.relative_to(ROOT / "src").as_posix())
        for p in (ROOT / "src" / "threadline").rglob("*.py")
    )

    def pct(counts: tuple[int, int] | None) -> float:
        if counts is None:
            return 0.0
        run, total = counts
        return 100.0 * run / total if total else 100.0

    def total(results: dict[str, tuple[int, int]]) -> str:
        run = sum(r for r, _ in results.values())
        lines = sum(t for _, t in results.values())
        return f"{100.0 * run / lines:.1f}% ({run:,} of {lines:,} lines)" if lines else "-"

    # Reached: imported, and at least one line run (a module with no statements counts).
    unreached = [m for m in modules if m not in quick or quick[m][0] == 0 < quick[m][1]]
    print(f"quick tier: {total(quick)}")
    if full:
        print(f"full tier: {total(full)}")
    print()
    if full:
        print(f"modules where the quick tier runs more than {args.gap} points fewer lines:\n")
        print("| module | quick | full | gap |")
        print("|---|---:|---:|---:|")
        for module in modules:
            q, f = pct(quick.get(module)), pct(full.get(module))
            if f - q > args.gap:
                print(f"| {module} | {q:.1f}% | {f:.1f}% | {f - q:.1f} |")
    else:
        print("| module | quick |")
        print("|---|---:|")
        for module in modules:
            print(f"| {module} | {pct(quick.get(module)):.1f}% |")
    print()
    if unreached:
        print(f"modules the quick tier does not reach: {', '.join(unreached)}")
        return 1
    print(f"every one of the {len(modules)} modules is reached by the quick tier")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
