"""Shared pieces of the remote tests: a hosted run that waits on a gate, servers, certificates."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from goldfive.planners.static import StaticPlanner
from goldfive.runner import Runner
from goldfive.types import Plan, Task, TaskEdge


class Gate:
    """Holds every agent invocation until ``open()``; ``entered`` is set by the first one."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.entered = asyncio.Event()

    def open(self) -> None:
        self.opened.set()

    async def agent(self, task: Task, session: Any) -> str:
        self.entered.set()
        await self.opened.wait()
        return f"did {task.id}"


def gated_factory(gate: Gate, n_tasks: int = 3) -> Any:
    tasks = [Task(f"t{i}", f"task {i}") for i in range(1, n_tasks + 1)]
    edges = [TaskEdge(f"t{i}", f"t{i + 1}") for i in range(1, n_tasks)]
    plan = Plan(tasks=tasks, edges=edges, id="p1", summary="gated plan")

    def factory(*, sinks: Any, control: Any, run_id: str | None = None) -> Runner:
        return Runner(agent=gate.agent, planner=StaticPlanner(plan), sinks=sinks, control=control, run_id=run_id)

    return factory


def self_signed_cert(directory: Path) -> tuple[Path, Path]:
    """A certificate for localhost / 127.0.0.1 and its key (PEM files): made with the
    ``cryptography`` package when installed, else the ``openssl`` command; skips naming both."""
    try:
        import cryptography  # noqa: F401
    except ImportError:
        openssl = shutil.which("openssl")
        if openssl is None:
            pytest.skip("TLS test needs the 'cryptography' package or an 'openssl' binary; neither is available")
        return _openssl_cert(openssl, directory)
    return _cryptography_cert(directory)


def _openssl_cert(openssl: str, directory: Path) -> tuple[Path, Path]:
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", str(key_path), "-out", str(cert_path), "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert_path, key_path


def _cryptography_cert(directory: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path
