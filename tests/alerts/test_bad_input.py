"""Bad input gives a clear error and a notice kept pending and visible, never lost."""

from __future__ import annotations

from pathlib import Path

from sidewalk.alerts.documents import notice_register, register_csv, register_pdf
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.pdf import notice_pdf
from sidewalk.storage.cases import CaseStore
from tests.alerts.conftest import T0, flat, pdf_text


def obstruction(issuer: NoticeIssuer) -> int:
    notice = issuer.obstruction_notice(
        "obs-1", "main-101", T0, area="street", observed_at=T0, description="dumpster"
    )
    return notice.id


def test_missing_owner_address_keeps_the_notice_pending_until_it_is_fixed(
    issuer: NoticeIssuer, cases: CaseStore
) -> None:
    cases.registry.upsert_owner("owner-smith", "Jane Smith", ["", " "], None)
    notice = cases.notices.get(obstruction(issuer))
    assert notice.status == "pending"
    assert notice.body_text is None
    [row] = notice_register(cases, issuer.profile)
    assert row.status == "Being prepared"
    assert "no name or last-known mailing address" in row.problem
    assert "no name or last-known mailing address" in register_csv([row])
    assert notice.number in flat(pdf_text(register_pdf([row], issuer.profile, T0)))
    # The clerk finds the address; the same notice (same number) is rendered to it.
    cases.registry.upsert_owner("owner-smith", "Jane Smith", ["PO Box 7", "Clyman, WI 53016"], None)
    [again] = issuer.render_pending()
    assert (again.number, again.status) == (notice.number, "rendered")
    # The address prints once, in the envelope's window (not repeated in the text).
    assert again.owner_address_lines == ("PO Box 7", "Clyman, WI 53016")
    assert "PO Box 7" in pdf_text(notice_pdf(again, issuer.profile))
    assert "PO Box 7" not in (again.body_text or "")
    assert [a.action for a in cases.audit.list(f"notice:{notice.number}")] == [
        "notice.issued", "notice.render_failed", "notice.readdressed", "notice.rendered",
    ]  # fmt: skip


def test_an_unknown_template_variable_names_itself_and_keeps_the_notice(
    cases: CaseStore, issuer: NoticeIssuer, tmp_path: Path
) -> None:
    edited = tmp_path / "templates"
    edited.mkdir()
    (edited / "obstruction_notice.txt.j2").write_text("Dear {{ owner.name }}, {{ fine_amount }}\n")
    broken = NoticeIssuer(cases, issuer.profile, template_dir=edited)
    notice = cases.notices.get(obstruction(broken))
    assert notice.status == "pending"
    [failure] = [
        a for a in cases.audit.list(f"notice:{notice.number}") if a.action == "notice.render_failed"
    ]
    assert "'fine_amount' is undefined" in str(failure.detail["reason"])
    assert "obstruction_notice" in str(failure.detail["reason"])
    # With the village's template fixed (removed), the notice renders from its record.
    (edited / "obstruction_notice.txt.j2").unlink()
    [rendered] = broken.render_pending()
    assert rendered.status == "rendered"
    assert "NOTICE TO REMOVE AN OBSTRUCTION" in (rendered.body_text or "")
