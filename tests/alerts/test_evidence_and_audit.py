"""The evidence package verifies, is reproducible, and detects tampering; the audit chain holds."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from sidewalk.alerts.delivery import queue_notice, record_notice_delivery
from sidewalk.alerts.evidence import EvidenceError, evidence_package, verify_evidence_package
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.notices import Evidence, Photo
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import CaseStore
from tests.alerts.conftest import T0, flat, pdf_text

JPEG = bytes.fromhex(
    "ffd8ffe000104a46494600010100000100010000ffdb004300080606070605080707070909080a0c140d0c0b0b0c"
    "1912130f141d1a1f1e1d1a1c1c20242e2720222c231c1c2837292c30313434341f27393d38323c2e333432ffc0000b"
    "080001000101011100ffc4001f0000010501010101010100000000000000000102030405060708090a0bffc400b5"
    "100002010303020403050504040000017d01020300041105122131410613516107227114328191a1082342b1c115"
    "52d1f02433627282090a161718191a25262728292a3435363738393a434445464748494a535455565758595a6364"
    "65666768696a737475767778797a838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7"
    "b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9faffda000801"
    "0100003f00fbd3ffd9"
)


def test_package_of_a_violation_notice_verifies_and_rebuilds_identically(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile, tmp_path: Path
) -> None:
    _runner, cases = stormed
    issuer = NoticeIssuer(cases, profile)
    [notice] = cases.notices.list(frontage_id="main-st-103")
    record_notice_delivery(
        cases, notice.id, notice.issued_at, "Officer Quinn", "hand", profile=profile
    )
    first = evidence_package(issuer, notice.id, tmp_path / "a.zip")
    second = evidence_package(issuer, notice.id, tmp_path / "b.zip")
    assert first.read_bytes() == second.read_bytes()
    check = verify_evidence_package(first)
    assert check.ok, check.problems
    assert check.notice == notice.number
    with zipfile.ZipFile(first) as zf:
        history = json.loads(zf.read("clock_history.json"))
        assert [t["to_state"] for t in history[0]["transitions"]][-1] == "violation"
        record = json.loads(zf.read("record.json"))
        assert record["violation"]["evidence"]["measured_width_mm"] == 609.6
        assert [r["name"] for r in record["notice"]["rules"]][-1] == (
            "snow_and_ice.nonhazard_notice_period"
        )
        assert record["notice"]["rules"][-1]["unconfirmed"] is True
        actions = [a["action"] for a in json.loads(zf.read("audit.json"))]
        assert {"notice.issued", "notice.rendered", "notice.delivered"} <= set(actions)
        assert "action.record_delivery" in actions
        assert notice.number in flat(pdf_text(zf.read("notice.pdf")))
    assert cases.audit.verify_chain().ok


def test_photos_go_in_by_hash_and_tampering_is_found(
    issuer: NoticeIssuer, cases: CaseStore, tmp_path: Path
) -> None:
    sha = hashlib.sha256(JPEG).hexdigest()
    notice = issuer.obstruction_notice(
        "obs-1", "main-101", T0, area="sidewalk", observed_at=T0, description="bench",
        clear_width_mm=700.0, evidence=Evidence(photos=(Photo(sha, T0, "pole-1", "bench"),)),
    )  # fmt: skip
    queue_notice(cases, notice.id, ["print"], T0)
    with pytest.raises(EvidenceError, match="do not hash"):
        evidence_package(issuer, notice.id, tmp_path / "x.zip", photos={sha: JPEG + b"x"})
    path = evidence_package(issuer, notice.id, tmp_path / "p.zip", photos={sha: JPEG})
    assert verify_evidence_package(path).ok
    with zipfile.ZipFile(path) as zf:
        assert zf.read(f"photos/{sha}.jpg") == JPEG
        assert json.loads(zf.read("manifest.json"))["missing_photos"] == []
        assert len(zf.read("notice.pdf")) > len(JPEG)  # the photo is on a page of its own
        entries = {n: zf.read(n) for n in zf.namelist()}
    entries["notice.txt"] = entries["notice.txt"].replace(b"bench", b"chair")
    forged = tmp_path / "forged.zip"
    with zipfile.ZipFile(forged, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    check = verify_evidence_package(forged)
    assert not check.ok
    assert check.problems == ["notice.txt: content does not match its hash"]
    without = evidence_package(issuer, notice.id, tmp_path / "n.zip")
    with zipfile.ZipFile(without) as zf:
        assert json.loads(zf.read("manifest.json"))["missing_photos"] == [sha]
