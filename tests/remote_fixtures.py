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


def ca_signed_client_cert(directory: Path, name: str = "client") -> tuple[Path, Path, Path]:
    """A CA certificate and a client certificate + key it signed (PEM files), made with the
    ``openssl`` command; skips when it is missing."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("client-certificate test needs an 'openssl' binary")
    directory.mkdir(parents=True, exist_ok=True)
    ca, ca_key = directory / f"{name}-ca.pem", directory / f"{name}-ca.key"
    cert, key, csr = directory / f"{name}.pem", directory / f"{name}.key", directory / f"{name}.csr"
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for args in (
        ["req", "-x509", *ec, "-keyout", str(ca_key), "-out", str(ca), "-days", "1", "-subj", f"/CN={name} test CA",
         "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"],
        ["req", *ec, "-keyout", str(key), "-out", str(csr), "-subj", f"/CN={name}"],
        ["x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
         "-out", str(cert), "-days", "1"],
    ):
        subprocess.run([openssl, *args], check=True, capture_output=True)
    return ca, cert, key
