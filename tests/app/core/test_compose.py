"""The production recipe (docker-compose.yml): web, worker and beat share no
disk, only PostgreSQL, Redis and the object store (issue 29, point 2)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

COMPOSE = Path(__file__).resolve().parents[3] / "docker-compose.yml"
APP = ("web", "worker", "beat")


@pytest.fixture(scope="module")
def services() -> dict:
    return yaml.safe_load(COMPOSE.read_text())["services"]


def test_web_worker_and_beat_share_no_volume_and_keep_files_in_the_bucket(services):
    for name in APP:
        service = services[name]
        assert not service.get("volumes"), f"{name} mounts a volume"
        environment = service["environment"]
        assert environment["REVIEWAPP_STORAGE"] == "s3"
        assert environment["REVIEWAPP_S3_ENDPOINT_URL"] == "http://minio:9000"
        assert environment["REVIEWAPP_S3_BUCKET"] in services["bucket"]["entrypoint"]
        # Started only once the bucket exists.
        assert service["depends_on"]["bucket"] == {"condition": "service_completed_successfully"}
    assert services["bucket"]["depends_on"]["minio"] == {"condition": "service_healthy"}


def test_the_compose_file_validates():
    if not shutil.which("docker-compose"):
        if os.environ.get("CI"):
            pytest.fail("CI must check the compose file: bin/test installs docker-compose as root")
        pytest.skip("needs the docker-compose client (apt-get install -y docker-compose)")
    checked = subprocess.run(
        ["docker-compose", "-f", str(COMPOSE), "config", "-q"], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stderr
