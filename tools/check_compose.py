"""Check docker-compose.yml: `docker compose config` where a Docker engine answers, else as YAML."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    compose = ROOT / "docker-compose.yml"
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        env_file = ROOT / ".env"
        created = not env_file.exists()
        if created:
            env_file.write_text((ROOT / ".env.example").read_text())
        try:
            done = subprocess.run(
                ["docker", "compose", "-f", str(compose), "config", "--quiet"], capture_output=True, text=True
            )
        finally:
            if created:
                env_file.unlink()
        if done.returncode == 0:
            print("docker compose config: ok")
            return 0
        if "Cannot connect" not in done.stderr and "is not a docker command" not in done.stderr:
            print(done.stderr, file=sys.stderr)
            return 1
    data = yaml.safe_load(compose.read_text())
    services = data.get("services", {})
    problems = []
    if set(services) != {"bot", "redis"}:
        problems.append(f"services should be bot and redis, not {sorted(services)}")
    redis = services.get("redis", {})
    command = " ".join(redis.get("command", []))
    if "--appendonly yes" not in command or "--appendfsync everysec" not in command:
        problems.append("redis must run with --appendonly yes --appendfsync everysec")
    if not any(str(v).startswith("redis-data:") for v in redis.get("volumes", [])):
        problems.append("redis must keep its data on the named volume redis-data")
    if "redis-data" not in (data.get("volumes") or {}):
        problems.append("the named volume redis-data is not declared")
    for name, service in services.items():
        if "restart" not in service:
            problems.append(f"{name} has no restart policy")
    if "healthcheck" not in redis:
        problems.append("redis has no health check")
    bot = services.get("bot", {})
    if bot.get("env_file") != ".env" or bot.get("build") != ".":
        problems.append("bot must be built from . and read .env")
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print("docker-compose.yml: valid YAML with the expected services (no Docker engine to ask)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
