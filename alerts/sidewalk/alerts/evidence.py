"""The evidence package of one notice: a zip that proves what was sent and why.

Contents: the notice as PDF (photos included), text and HTML; the records
(notice, frontage, violation, the rules used with their ``unconfirmed`` marks);
the clock history; the readings; the deliveries; the audit rows naming the
notice or its violation; the photographs by content hash; and a manifest of
every file's sha256 (with the manifest's own hash beside it). The same records
give the same bytes: entries are sorted and carry a fixed timestamp.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Any, Final

from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.pdf import PhotoBytes, notice_pdf
from sidewalk.storage.cases import canonical_json

MANIFEST: Final = "manifest.json"
MANIFEST_HASH: Final = "manifest.sha256"
# Zip entries carry a timestamp; a fixed one keeps the package reproducible.
_ZIP_TIME: Final = (1980, 1, 1, 0, 0, 0)


class EvidenceError(ValueError):
    """A package that cannot be built (e.g. a photo whose bytes do not match its hash)."""


@dataclass(frozen=True)
class PackageVerification:
    ok: bool
    notice: str | None
    files: int
    problems: list[str] = field(default_factory=list)


def _json(value: Any) -> bytes:
    def plain(v: Any) -> Any:
        if is_dataclass(v) and not isinstance(v, type):
            return {k: plain(x) for k, x in asdict(v).items()}
        if isinstance(v, Mapping):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [plain(x) for x in v]
        return v

    return (
        json.dumps(json.loads(canonical_json(plain(value))), indent=2, sort_keys=True) + "\n"
    ).encode()


def evidence_package(
    issuer: NoticeIssuer,
    notice_id: int,
    out: Path,
    *,
    photos: Mapping[str, bytes] | None = None,
    readings: Sequence[Mapping[str, Any]] = (),
) -> Path:
    """Write the notice's evidence package to ``out`` (a .zip path) and return it.

    ``photos`` maps sha256 → JPEG bytes for the frames the notice cites (from
    the evidence store); a cited photo that is not supplied is listed as
    missing in the manifest, never silently dropped.
    """
    cases, profile = issuer.cases, issuer.profile
    notice = cases.notices.get(notice_id)
    if notice.body_text is None:
        raise EvidenceError(f"notice {notice.number} is {notice.status}: nothing was rendered")
    supplied = dict(photos or {})
    for sha, data in supplied.items():
        if hashlib.sha256(data).hexdigest() != sha:
            raise EvidenceError(f"photo {sha}: its bytes do not hash to its name")
    cited = [str(p["sha256"]) for p in notice.detail.get("photos", ())]
    present = [sha for sha in cited if sha in supplied]
    frontage = cases.registry.get_frontage(notice.frontage_id)
    violation = (
        None if notice.violation_id is None else cases.clocks.get_violation(notice.violation_id)
    )
    clocks = []
    if violation is not None:
        ids = [] if violation.clock_id is None else [violation.clock_id]
        ids += [
            c.id for c in cases.clocks.list(frontage_id=notice.frontage_id)
            if c.kind == "enforcement" and c.key.endswith(f"/{violation.key}")
        ]  # fmt: skip
        clocks = [
            {"clock": cases.clocks.get(i), "transitions": cases.clocks.history(i)} for i in ids
        ]
    subjects = [f"notice:{notice.number}"]
    if violation is not None:
        subjects += [f"violation:{violation.id}", violation.key]
    # Earlier packagings of this notice are not evidence of it; leaving them out
    # keeps a rebuilt package byte-identical.
    audit = sorted(
        (r for s in subjects for r in cases.audit.list(s) if r.action != "evidence.packaged"),
        key=lambda r: r.id,
    )
    pdf = notice_pdf(
        notice,
        profile,
        [PhotoBytes(sha, supplied[sha], f"cited by Notice No. {notice.number}") for sha in present],
    )
    files: dict[str, bytes] = {
        "notice.pdf": pdf,
        "notice.txt": notice.body_text.encode(),
        "notice.html": (notice.body_html or "").encode(),
        "record.json": _json({"notice": notice, "frontage": frontage, "violation": violation}),
        "clock_history.json": _json(clocks),
        "readings.json": _json(
            {"supplied": list(readings), "cited": notice.detail.get("readings", [])}
        ),
        "deliveries.json": _json(
            {
                "jobs": cases.notices.list_delivery_jobs(notice_id=notice.id),
                "attempts": cases.notices.list_deliveries(notice_id=notice.id),
            }
        ),
        "audit.json": _json(audit),
    }
    for sha in present:
        files[f"photos/{sha}.jpg"] = supplied[sha]
    manifest = _json(
        {
            "notice": notice.number,
            "files": {
                name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())
            },
            "missing_photos": [sha for sha in cited if sha not in supplied],
            "audit_rows": [row.hash for row in audit],
        }
    )
    files[MANIFEST] = manifest
    files[MANIFEST_HASH] = (hashlib.sha256(manifest).hexdigest() + "\n").encode()
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, files[name])
    cases.audit.append(
        "alerts", "evidence.packaged", f"notice:{notice.number}",
        {"manifest_sha256": files[MANIFEST_HASH].decode().strip(), "files": len(files)},
    )  # fmt: skip
    return out


def verify_evidence_package(path: Path) -> PackageVerification:
    """Check every file against the manifest and the manifest against its hash."""
    problems: list[str] = []
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        if MANIFEST not in names or MANIFEST_HASH not in names:
            return PackageVerification(False, None, len(names), ["no manifest"])
        manifest_bytes = zf.read(MANIFEST)
        if hashlib.sha256(manifest_bytes).hexdigest() != zf.read(MANIFEST_HASH).decode().strip():
            problems.append("manifest.json does not match manifest.sha256")
        manifest = json.loads(manifest_bytes)
        listed: dict[str, str] = manifest["files"]
        for name, digest in listed.items():
            if name not in names:
                problems.append(f"{name}: listed but missing")
            elif hashlib.sha256(zf.read(name)).hexdigest() != digest:
                problems.append(f"{name}: content does not match its hash")
        for name in sorted(names - set(listed) - {MANIFEST, MANIFEST_HASH}):
            problems.append(f"{name}: not in the manifest")
        for name, digest in listed.items():
            if name.startswith("photos/") and Path(name).stem != digest:
                problems.append(f"{name}: photo name is not its hash")
    return PackageVerification(not problems, manifest.get("notice"), len(names), problems)
