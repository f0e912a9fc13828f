"""The deployment files are right by the tools that read them and name real metrics.

No container engine runs here: ``docker-compose config -q`` (Debian's docker-compose) checks the
compose file without one, ``promtool`` (Debian's prometheus) checks the Prometheus files when
it is installed, and the alert rules and the dashboard are checked against what ``GET
/metrics`` of a live floor really exports.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.app.floor import web_floor
from tests.conftest import IN_CI

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
METRIC = re.compile(r"\bprogressive_[a-z_]+\b")
SECRETS = {"PROGRESSIVE_DB_PASSWORD": "not-a-secret", "GRAFANA_ADMIN_PASSWORD": "not-a-secret"}


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        message = f"{name} is not installed (.ci/run installs it)"
        if IN_CI:
            pytest.fail(message + "; under CI=true the deployment checks must run", pytrace=False)
        pytest.skip(message)
    return path


def compose_config(extra_env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in SECRETS} | extra_env
    return subprocess.run(
        [tool("docker-compose"), "--file", str(ROOT / "docker-compose.yml"), "config", "-q"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_compose_file_is_valid() -> None:
    result = compose_config(SECRETS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_refuses_to_run_without_its_secrets() -> None:
    result = compose_config({})
    assert result.returncode != 0
    assert "PROGRESSIVE_DB_PASSWORD" in result.stdout + result.stderr


def test_compose_runs_every_part_of_the_product() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"postgres", "controller", "simulator", "prometheus", "grafana"} <= set(services)
    assert services["simulator"]["command"][:2] == ["progressive", "simulate"]
    assert services["controller"]["command"][:2] == ["progressive", "run"]
    assert services["web"]["command"][:2] == ["progressive", "web"]
    for name in ("controller", "simulator"):
        assert services[name]["build"]["dockerfile"] == "deploy/Dockerfile"
    for mount in ("./deploy/prometheus.yml", "./deploy/alerts.yml"):
        assert any(v.startswith(mount + ":") for v in services["prometheus"]["volumes"])


def test_the_controller_signs_checkpoints_kept_apart_from_its_database() -> None:
    # `progressive run` refuses to start without a checkpoint signing key (README).
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    controller = compose["services"]["controller"]
    env = controller["environment"]
    assert env["PROGRESSIVE_CHECKPOINT_KEY_FILE"].startswith("/var/lib/progressive/")
    anchor = env["PROGRESSIVE_CHECKPOINT_FILE"].rsplit("/", 1)[0]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in controller["volumes"]}
    assert mounts[anchor] == "checkpoints" and "checkpoints" in compose["volumes"]
    assert "ledger keygen" in " ".join(compose["services"]["migrate"]["command"])
    unit = (DEPLOY / "progressive.service").read_text()
    assert "Environment=PROGRESSIVE_CHECKPOINT_KEY_FILE=" in unit
    assert "ledger keygen" in unit and "/var/lib/progressive-anchor" in unit


def test_prometheus_files_parse() -> None:
    config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    assert config["rule_files"] == ["alerts.yml"]
    (job,) = config["scrape_configs"]
    assert job["metrics_path"] == "/metrics"
    rules = yaml.safe_load((DEPLOY / "alerts.yml").read_text())
    names = {r["alert"] for g in rules["groups"] for r in g["rules"]}
    assert {
        "ProgressiveTableOffline",
        "ProgressiveLinkNotPolled",
        "ProgressiveLedgerVerificationFailed",
        "ProgressiveHitPendingTooLong",
        "ProgressiveSoftwareMismatch",
        "ProgressiveSoftwareCheckOverdue",
        "ProgressiveTablePollFault",
        "ProgressiveProtectionAlert",
    } <= names


def test_promtool_accepts_the_prometheus_files() -> None:
    promtool = tool("promtool")
    result = subprocess.run(
        [promtool, "check", "config", str(DEPLOY / "prometheus.yml")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 rule files found" in result.stdout  # alerts.yml, found next to the config
    assert "SUCCESS" in result.stdout


def test_a_table_whose_polls_fail_for_an_unknown_reason_raises_an_alert(tmp_path: Path) -> None:
    # The poll task survives whatever ends a poll and counts it by cause: a cause the adapter
    # does not know is a fault, and raises an alert for that table alone.
    failures = "progressive_table_poll_failures_total"
    summary = "table stud-2 of link stud: its polls fail for a reason the adapter does not know"
    description = (
        "The controller's log names the table and the cause once, with where it came from; "
        "/api/v1/tables and /tech show it as poll_problem."
    )
    tests = {
        "rule_files": [str(DEPLOY / "alerts.yml")],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    {"series": f'{failures}{{link_id="stud",table_id="stud-1",cause="unknown"}}',
                     "values": "0 0 0 0 0"},
                    {"series": f'{failures}{{link_id="stud",table_id="stud-1",cause="timeout"}}',
                     "values": "0 5 10 15 20"},
                    {"series": f'{failures}{{link_id="stud",table_id="stud-2",cause="unknown"}}',
                     "values": "0 0 3 6 9"},
                ],
                "alert_rule_test": [
                    {"eval_time": "1m", "alertname": "ProgressiveTablePollFault", "exp_alerts": []},
                    {
                        "eval_time": "4m",
                        "alertname": "ProgressiveTablePollFault",
                        "exp_alerts": [
                            {
                                "exp_labels": {
                                    "severity": "critical",
                                    "link_id": "stud",
                                    "table_id": "stud-2",
                                },
                                "exp_annotations": {
                                    "summary": summary,
                                    "description": description,
                                },
                            }
                        ],
                    },
                ],
            }
        ],
    }  # fmt: skip
    path = tmp_path / "poll-fault.test.yml"
    path.write_text(yaml.safe_dump(tests))
    result = subprocess.run(
        [tool("promtool"), "test", "rules", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_is_multi_stage_non_root_with_a_health_check() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert len(re.findall(r"^FROM ", text, re.MULTILINE)) == 2
    assert re.search(r"^USER progressive$", text, re.MULTILINE)
    assert re.search(r"^HEALTHCHECK .*\n.*/healthz", text, re.MULTILINE)
    (cmd,) = re.findall(r"^CMD (.*)$", text, re.MULTILINE)
    assert json.loads(cmd)[:4] == ["progressive", "run", "--config", "/etc/progressive/floor.toml"]


def test_the_image_makes_its_manifest_at_build_and_the_service_cannot_remake_it() -> None:
    # The manifest of the installed software is made as root when the image is built, after
    # everything is installed, and checked there; the controller runs as another user. No
    # manifest of a developer's tree reaches the build.
    text = (DEPLOY / "Dockerfile").read_text()
    final = text[text.rindex("\nFROM ") :]
    make = final.index("progressive self-check --make")
    assert final.index("COPY alembic /opt/progressive/alembic") < make < final.index("USER ")
    assert "--no-compile" in final and "PYTHONDONTWRITEBYTECODE=1" in final
    assert "progressive-manifest.json" in (ROOT / ".dockerignore").read_text().splitlines()
    # The systemd install names it beside the install, which the sandbox keeps read-only.
    unit = (DEPLOY / "progressive.service").read_text()
    assert (
        "Environment=PROGRESSIVE_MANIFEST_FILE=/opt/progressive/progressive-manifest.json" in unit
    )
    assert "self-check --make" in unit and "ProtectSystem=strict" in unit


def test_no_key_or_database_reaches_the_image_build() -> None:
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert {"*.key", "*.db", ".env", ".git"} <= set(ignored)


def test_systemd_unit_is_sandboxed() -> None:
    lines = (DEPLOY / "progressive.service").read_text().splitlines()
    settings = [tuple(line.split("=", 1)) for line in lines if "=" in line and line[0] != "#"]
    for wanted in (
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("NoNewPrivileges", "yes"),
        ("Restart", "on-failure"),
        ("SupplementaryGroups", "dialout"),
        ("ReadWritePaths", "/var/lib/progressive /var/lib/progressive-anchor"),
        ("DynamicUser", "yes"),
    ):
        assert wanted in settings, wanted
    assert any(k == "DeviceAllow" and v.startswith("char-ttyUSB") for k, v in settings)


def _dashboard_exprs(dashboard: dict[str, Any]) -> list[str]:
    return [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]


async def test_alerts_and_dashboard_name_exported_metrics(tmp_path: Path) -> None:
    rules = yaml.safe_load((DEPLOY / "alerts.yml").read_text())
    exprs = [r["expr"] for g in rules["groups"] for r in g["rules"]]
    exprs += _dashboard_exprs(json.loads((DEPLOY / "grafana" / "dashboard.json").read_text()))
    named = {name for e in exprs for name in METRIC.findall(e)}
    assert len(named) > 10
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        answer = await http.get("/metrics")
    assert answer.status_code == 200
    exported = {
        s.name for family in text_string_to_metric_families(answer.text) for s in family.samples
    }
    assert named <= exported, sorted(named - exported)
