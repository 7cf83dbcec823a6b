"""Run the atheris fuzz harnesses for a given time; exit 0 when nothing crashed.

    python fuzz/run.py --seconds 60            # both harnesses, 30 s each
    python fuzz/run.py --seconds 300 --target codecs
    python fuzz/run.py --seconds 60 --strict   # known defects (fuzz/known.py) count too

Each harness starts from the seed corpus in ``fuzz/corpus`` (never modified: the inputs the
fuzzer finds go to a temporary directory). A crash, an input that takes longer than
``--timeout`` seconds, or one that needs more than 2 GB is reported with the file that
reproduces it (``python fuzz/fuzz_<target>.py <file>``) and, when small, its bytes; the exit
status is then 1. Needs ``pip install atheris`` (the ``fuzz`` extra).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

TARGETS = ("load_json", "codecs")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=60, help="total time for all targets")
    parser.add_argument("--target", choices=TARGETS, action="append", help="default: all")
    parser.add_argument("--timeout", type=int, default=10, help="seconds one input may take")
    parser.add_argument("--artifacts", type=Path, help="where crash files go (default: temp)")
    parser.add_argument(
        "--strict", action="store_true", help="also report the known defects of fuzz/known.py"
    )
    args = parser.parse_args(argv)
    try:
        import atheris  # noqa: F401
    except ImportError:
        print("atheris is not installed: pip install -e '.[fuzz]' (or pip install atheris)")
        return 2
    targets = args.target or list(TARGETS)
    seconds = max(1, args.seconds // len(targets))
    artifacts = args.artifacts or Path(tempfile.mkdtemp(prefix="threadline-fuzz-artifacts-"))
    artifacts.mkdir(parents=True, exist_ok=True)
    if args.strict:
        os.environ["THREADLINE_FUZZ_STRICT"] = "1"
    failed = [target for target in targets if not _fuzz(target, seconds, args.timeout, artifacts)]
    if failed:
        print(f"fuzzing found a problem in: {', '.join(failed)}; crash files in {artifacts}")
        return 1
    print(f"fuzzing found nothing in {seconds} s per target ({', '.join(targets)})")
    return 0


def _fuzz(target: str, seconds: int, timeout: int, artifacts: Path) -> bool:
    with tempfile.TemporaryDirectory(prefix=f"threadline-fuzz-{target}-") as scratch:
        found = Path(scratch) / "found"
        seeds = Path(scratch) / "seeds"
        found.mkdir()
        _seed(target, seeds)
        prefix = artifacts / f"{target}-"
        command = [
            sys.executable,
            str(HERE / f"fuzz_{target}.py"),
            str(found),
            str(seeds),
            f"-dict={HERE / 'threadline.dict'}",
            f"-max_total_time={seconds}",
            f"-timeout={timeout}",
            "-rss_limit_mb=2048",
            "-max_len=65536",
            f"-artifact_prefix={prefix}",
            "-print_final_stats=1",
        ]
        print(f"== fuzz {target} for {seconds} s", flush=True)
        result = subprocess.run(command, check=False)
    if result.returncode == 0:
        return True
    for crash in sorted(artifacts.glob(f"{target}-*")):
        data = crash.read_bytes()
        print(f"reproduce: {sys.executable} {HERE / f'fuzz_{target}.py'} {crash}")
        if len(data) <= 2048:
            print(f"input ({len(data)} bytes): {data!r}")
    return False


def _seed(target: str, seeds: Path) -> None:
    """The starting corpus: the checked-in seeds, with the codec selector byte in front."""
    source = HERE / "corpus" / target
    if target != "codecs":
        shutil.copytree(source, seeds)
        return
    from fuzz.targets import selector

    seeds.mkdir()
    for path in sorted(source.glob("*.json")):
        codec, function, _ = path.name.split(".", 2)
        data = path.read_bytes()
        (seeds / path.name).write_bytes(bytes([selector(codec, function)]) + data)
        if function == "decode_response":  # also as JSON text, which decode_response takes
            text = bytes([selector(codec, function) | 0x80]) + data
            (seeds / f"text.{path.name}").write_bytes(text)


if __name__ == "__main__":
    sys.exit(main())
