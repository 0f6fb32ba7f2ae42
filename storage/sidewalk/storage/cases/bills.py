"""The ledger: abatement work orders, their expenses, bills, payments and the tax roll.

Money is exact ``Decimal`` dollars (stored as whole cents, ``models.Money``).
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from sidewalk.storage import models as m
from sidewalk.storage.cases.audit import AuditRepository
from sidewalk.storage.cases.errors import BillingError
from sidewalk.storage.cases.records import (
    AbatementRecord,
    BillRecord,
    ExpenseRecord,
    PaymentRecord,
    TaxRollRecord,
    from_row,
)
from sidewalk.storage.cases.registry import owner_row_at
from sidewalk.storage.cases.unit_of_work import UnitOfWork, aware, jsonable


def _check_amount(what: str, amount: Decimal) -> None:
    if not isinstance(amount, Decimal):
        raise BillingError(f"{what} amount must be a Decimal, got {type(amount).__name__}")
    if amount <= 0:
        raise BillingError(f"{what} amount must be positive, got {amount}")
    if amount != amount.quantize(Decimal("0.01")):
        raise BillingError(f"{what} amount {amount} has a fraction of a cent")


def _paid(session: Session, bill_id: int) -> Decimal:
    # SUM keeps the Money type, so the total comes back as exact Decimal dollars.
    paid = session.scalar(
        select(func.coalesce(func.sum(m.Payment.amount), 0)).where(
            m.Payment.bill_id == bill_id, m.Payment.voided_at.is_(None)
        )
    )
    return paid if isinstance(paid, Decimal) else Decimal("0.00")


def _bill(session: Session, row: m.Bill) -> BillRecord:
    return from_row(BillRecord, row, paid=_paid(session, row.id))


class BillRepository:
    """``cases.bills``: abatements and expenses, bills and payments, the tax roll."""

    def __init__(self, uow: UnitOfWork, audit: AuditRepository) -> None:
        self._uow = uow
        self._audit = audit

    # -- abatements

    def order_abatement(
        self,
        key: str,
        frontage_id: str,
        reason: str,
        ordered_at: datetime,
        *,
        violation_id: int | None = None,
        notice_id: int | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> AbatementRecord:
        """Open a village work order once per ``key``."""
        ordered_at = aware("ordered_at", ordered_at)

        def build(session: Session) -> m.Abatement:
            self._uow.get(session, m.Frontage, frontage_id)
            row = m.Abatement(
                idempotency_key=key,
                frontage_id=frontage_id,
                violation_id=violation_id,
                notice_id=notice_id,
                reason=reason,
                ordered_at=ordered_at,
                completed_at=None,
                status="ordered",
                detail=jsonable(detail),
            )
            session.add(row)
            session.flush()
            self._audit.chain(
                session, "system", "abatement.ordered", f"abatement:{row.id}",
                {"key": key, "frontage": frontage_id, "reason": reason, "ordered_at": ordered_at},
            )  # fmt: skip
            return row

        return self._uow.create_once(
            m.Abatement, key, build, lambda _s, row: from_row(AbatementRecord, row)
        )

    def complete_abatement(self, abatement_id: int, completed_at: datetime) -> AbatementRecord:
        completed_at = aware("completed_at", completed_at)
        with self._uow.write() as session:
            row = self._uow.get(session, m.Abatement, abatement_id)
            if row.completed_at is None:
                row.completed_at = completed_at
                row.status = "completed"
                self._audit.chain(
                    session, "system", "abatement.completed", f"abatement:{row.id}",
                    {"completed_at": completed_at},
                )  # fmt: skip
            session.flush()
            return from_row(AbatementRecord, row)

    def withdraw_abatement(self, abatement_id: int, at: datetime, reason: str) -> AbatementRecord:
        """Withdraw an order not yet carried out (its notice's service was undone or
        corrected); the row and its ``abatement.ordered`` audit row stay."""
        at = aware("at", at)
        with self._uow.write() as session:
            row = self._uow.get(session, m.Abatement, abatement_id)
            if row.status == "ordered":
                row.status = "withdrawn"
                self._audit.chain(
                    session, "system", "abatement.withdrawn", f"abatement:{row.id}",
                    {"at": at, "reason": reason},
                )  # fmt: skip
            elif row.status != "withdrawn":
                raise BillingError(f"abatement {row.id} is {row.status}: it cannot be withdrawn")
            session.flush()
            return from_row(AbatementRecord, row)

    def reorder_abatement(self, abatement_id: int, ordered_at: datetime) -> AbatementRecord:
        """Order a withdrawn abatement again (its corrected notice period ran out too)."""
        ordered_at = aware("ordered_at", ordered_at)
        with self._uow.write() as session:
            row = self._uow.get(session, m.Abatement, abatement_id)
            if row.status == "withdrawn":
                row.status, row.ordered_at = "ordered", ordered_at
                self._audit.chain(
                    session, "system", "abatement.ordered_again", f"abatement:{row.id}",
                    {"ordered_at": ordered_at},
                )  # fmt: skip
            session.flush()
            return from_row(AbatementRecord, row)

    def correct_completion(
        self, abatement_id: int, completed_at: datetime | None, reason: str
    ) -> AbatementRecord:
        """The crew's completion corrected to ``completed_at``, or undone (None): refused
        once a bill is issued on it (the bill states its costs from that date)."""
        when = None if completed_at is None else aware("completed_at", completed_at)
        with self._uow.write() as session:
            row = self._uow.get(session, m.Abatement, abatement_id)
            if session.scalar(select(m.Bill.id).where(m.Bill.abatement_id == row.id)) is not None:
                raise BillingError(f"abatement {row.id} is billed: its completion is final")
            if row.completed_at != when:
                self._audit.chain(
                    session, "system", "abatement.completion_corrected", f"abatement:{row.id}",
                    {"from": row.completed_at, "to": when, "reason": reason},
                )  # fmt: skip
                row.completed_at = when
                row.status = "ordered" if when is None else "completed"
            session.flush()
            return from_row(AbatementRecord, row)

    def record_crew_work(
        self, abatement_id: int, work: Mapping[str, Any], at: datetime, who: str
    ) -> AbatementRecord:
        """Keep the crew's hours (who worked how long, which equipment ran how long) with
        the work order, for its bill; entered again, the later entry stands (audited).
        Refused once the work order is billed: the bill priced the hours it had."""
        at = aware("at", at)
        with self._uow.write() as session:
            row = self._uow.get(session, m.Abatement, abatement_id)
            if session.scalar(select(m.Bill.id).where(m.Bill.abatement_id == row.id)) is not None:
                raise BillingError("This work order is billed already: its hours are final.")
            entered = jsonable(work)
            if (row.detail or {}).get("crew_work") != entered:
                row.detail = {**(row.detail or {}), "crew_work": entered}
                self._audit.chain(
                    session, who, "abatement.crew_work", f"abatement:{row.id}",
                    {"crew_work": entered, "at": at},
                )  # fmt: skip
            session.flush()
            return from_row(AbatementRecord, row)

    def get_abatement(self, abatement_id: int) -> AbatementRecord:
        with self._uow.read() as session:
            return from_row(AbatementRecord, self._uow.get(session, m.Abatement, abatement_id))

    def abatement_by_key(self, key: str) -> AbatementRecord | None:
        with self._uow.read() as session:
            row = session.scalar(select(m.Abatement).where(m.Abatement.idempotency_key == key))
            return None if row is None else from_row(AbatementRecord, row)

    def list_abatements(self) -> builtins.list[AbatementRecord]:
        """Every abatement, in the order they were ordered."""
        query = select(m.Abatement).order_by(m.Abatement.ordered_at, m.Abatement.id)
        with self._uow.read() as session:
            return [from_row(AbatementRecord, r) for r in session.scalars(query)]

    # -- expenses

    def add_expense(
        self, abatement_id: int, amount: Decimal, incurred_at: datetime, description: str
    ) -> ExpenseRecord:
        """Add a ledger line to an abatement (before it is billed)."""
        _check_amount("expense", amount)
        with self._uow.write() as session:
            self._uow.get(session, m.Abatement, abatement_id)
            if session.scalar(select(m.Bill.id).where(m.Bill.abatement_id == abatement_id)):
                raise BillingError(f"abatement {abatement_id} is already billed")
            row = m.Expense(
                abatement_id=abatement_id,
                incurred_at=aware("incurred_at", incurred_at),
                description=description,
                amount=amount,
            )
            session.add(row)
            session.flush()
            return from_row(ExpenseRecord, row)

    def list_expenses(self, abatement_id: int) -> builtins.list[ExpenseRecord]:
        query = (
            select(m.Expense)
            .where(m.Expense.abatement_id == abatement_id)
            .order_by(m.Expense.incurred_at, m.Expense.id)
        )
        with self._uow.read() as session:
            return [from_row(ExpenseRecord, r) for r in session.scalars(query)]

    # -- bills

    def create(
        self,
        key: str,
        abatement_id: int,
        issued_at: datetime,
        *,
        due_date: date | None = None,
        owner_id: str | None = None,
    ) -> BillRecord:
        """Bill the sum of an abatement's expenses to the owner of record at ``issued_at``,
        or to the owner ``owner_id`` the caller names (the owner a case's notice was
        served on, when the parcel changed hands since: ``accounts``).

        ``costs_incurred_at`` is the latest expense's time (the § 370-10 G
        60-day tax-roll clock counts from it). ``due_date`` is the caller's
        (receipt + 10 calendar days), often set later by ``set_received``.
        """
        issued_at = aware("issued_at", issued_at)

        def build(session: Session) -> m.Bill:
            abatement = self._uow.get(session, m.Abatement, abatement_id)
            frontage = self._uow.get(session, m.Frontage, abatement.frontage_id)
            owner = (
                owner_row_at(session, frontage, issued_at)
                if owner_id is None
                else self._uow.get(session, m.Owner, owner_id)
            )
            expenses = builtins.list(
                session.scalars(select(m.Expense).where(m.Expense.abatement_id == abatement_id))
            )
            if not expenses:
                raise BillingError(f"abatement {abatement_id} has no expenses to bill")
            row = m.Bill(
                idempotency_key=key,
                abatement_id=abatement_id,
                frontage_id=frontage.id,
                owner_name=owner.name,
                owner_address_lines=builtins.list(owner.address_lines),
                amount=sum((e.amount for e in expenses), Decimal("0.00")),
                costs_incurred_at=max(e.incurred_at for e in expenses),
                issued_at=issued_at,
                received_at=None,
                due_date=due_date,
                status="open",
            )
            session.add(row)
            session.flush()
            self._audit.chain(
                session, "system", "bill.issued", f"bill:{row.id}",
                {"key": key, "abatement": abatement_id, "amount": row.amount,
                 "issued_at": issued_at, "due_date": due_date},
            )  # fmt: skip
            return row

        return self._uow.create_once(m.Bill, key, build, _bill)

    def set_received(self, bill_id: int, received_at: datetime, due_date: date) -> BillRecord:
        """Record receipt of the bill and the due date the caller computed from it."""
        received_at = aware("received_at", received_at)
        with self._uow.write() as session:
            row = self._uow.get(session, m.Bill, bill_id)
            if row.received_at is None:
                row.received_at = received_at
                row.due_date = due_date
                self._audit.chain(
                    session, "system", "bill.received", f"bill:{row.id}",
                    {"received_at": received_at, "due_date": due_date},
                )  # fmt: skip
            session.flush()
            return _bill(session, row)

    def get(self, bill_id: int) -> BillRecord:
        with self._uow.read() as session:
            return _bill(session, self._uow.get(session, m.Bill, bill_id))

    def balance(self, bill_id: int) -> Decimal:
        """Amount still owed on a bill (exact Decimal; negative if overpaid)."""
        return self.get(bill_id).balance

    def for_abatement(self, abatement_id: int) -> BillRecord | None:
        """The bill sent for an abatement, if the clerk has billed it."""
        with self._uow.read() as session:
            row = session.scalar(select(m.Bill).where(m.Bill.abatement_id == abatement_id))
        return None if row is None else self.get(row.id)

    def list(self, *, status: str | None = None) -> builtins.list[BillRecord]:
        """Bills in issue order (``open``, ``paid`` or ``certified``)."""
        query = select(m.Bill).order_by(m.Bill.issued_at, m.Bill.id)
        if status is not None:
            query = query.where(m.Bill.status == status)
        with self._uow.read() as session:
            return [_bill(session, r) for r in session.scalars(query)]

    # -- payments

    def record_payment(
        self,
        key: str,
        bill_id: int,
        amount: Decimal,
        paid_at: datetime,
        *,
        method: str,
        reference: str | None = None,
    ) -> PaymentRecord:
        """Record a payment once per ``key``; a bill paid in full becomes ``paid``."""
        _check_amount("payment", amount)
        paid_at = aware("paid_at", paid_at)

        def build(session: Session) -> m.Payment:
            bill = self._uow.get(session, m.Bill, bill_id)
            row = m.Payment(
                idempotency_key=key,
                bill_id=bill_id,
                amount=amount,
                paid_at=paid_at,
                method=method,
                reference=reference,
            )
            session.add(row)
            session.flush()
            if bill.status == "open" and _paid(session, bill_id) >= bill.amount:
                bill.status = "paid"
            self._audit.chain(
                session, "system", "payment.recorded", f"bill:{bill_id}",
                {"key": key, "amount": amount, "paid_at": paid_at, "method": method},
            )  # fmt: skip
            return row

        return self._uow.create_once(
            m.Payment, key, build, lambda _s, row: from_row(PaymentRecord, row)
        )

    def list_payments(self, bill_id: int, *, voided: bool = False) -> builtins.list[PaymentRecord]:
        """A bill's payments in the order they were made (``voided``: those a correction
        voided too)."""
        query = select(m.Payment).where(m.Payment.bill_id == bill_id)
        if not voided:
            query = query.where(m.Payment.voided_at.is_(None))
        query = query.order_by(m.Payment.paid_at, m.Payment.id)
        with self._uow.read() as session:
            return [from_row(PaymentRecord, r) for r in session.scalars(query)]

    def get_payment(self, payment_id: int) -> PaymentRecord:
        with self._uow.read() as session:
            return from_row(PaymentRecord, self._uow.get(session, m.Payment, payment_id))

    def correct_payment(
        self,
        payment_id: int,
        at: datetime,
        who: str,
        reason: str,
        *,
        amount: Decimal | None = None,
        paid_at: datetime | None = None,
    ) -> tuple[PaymentRecord | None, BillRecord]:
        """Void a payment entered wrongly and, unless it is undone (no ``amount`` and no
        ``paid_at``), record the right one as a new row; the bill is paid or open again
        as the payments left say. Nothing is deleted. A bill on the tax roll is refused
        (its entry counted the payment)."""
        at = aware("at", at)
        with self._uow.write() as session:
            old = self._uow.get(session, m.Payment, payment_id)
            bill = self._uow.get(session, m.Bill, old.bill_id)
            if old.voided_at is not None:
                raise BillingError(f"payment {old.id} was already corrected or undone")
            if bill.status == "certified":
                raise BillingError(f"bill {bill.id} is on the tax roll: its payments are final")
            old.voided_at = at
            new = None
            if amount is not None or paid_at is not None:
                amount = old.amount if amount is None else amount
                _check_amount("payment", amount)
                new = m.Payment(
                    idempotency_key=f"{old.idempotency_key}/corrected-{old.id}",
                    bill_id=bill.id,
                    amount=amount,
                    paid_at=old.paid_at if paid_at is None else aware("paid_at", paid_at),
                    method=old.method,
                    reference=old.reference,
                )
                session.add(new)
            session.flush()
            bill.status = "paid" if _paid(session, bill.id) >= bill.amount else "open"
            self._audit.chain(
                session, who, "payment.corrected", f"bill:{bill.id}",
                {"payment": old.id, "from": {"amount": old.amount, "paid_at": old.paid_at},
                 "to": None if new is None else {"amount": new.amount, "paid_at": new.paid_at,
                                                 "payment": new.id},
                 "reason": reason, "at": at},
            )  # fmt: skip
            session.flush()
            return (None if new is None else from_row(PaymentRecord, new)), _bill(session, bill)

    # -- the tax roll

    def certify_tax_roll(
        self, bill_id: int, certified_at: datetime, tax_year: int, citation: str | None = None
    ) -> TaxRollRecord:
        """Enter a bill's unpaid balance on the tax roll (once per bill)."""
        certified_at = aware("certified_at", certified_at)
        with self._uow.write() as session:
            existing = session.scalar(
                select(m.TaxRollEntry).where(m.TaxRollEntry.bill_id == bill_id)
            )
            if existing is not None:
                return from_row(TaxRollRecord, existing)
            bill = self._uow.get(session, m.Bill, bill_id)
            balance = bill.amount - _paid(session, bill_id)
            if balance <= 0:
                raise BillingError(f"bill {bill_id} has no unpaid balance")
            frontage = self._uow.get(session, m.Frontage, bill.frontage_id)
            row = m.TaxRollEntry(
                bill_id=bill_id,
                frontage_id=frontage.id,
                parcel_number=frontage.parcel_number,
                amount=balance,
                tax_year=tax_year,
                certified_at=certified_at,
                citation=citation,
            )
            session.add(row)
            bill.status = "certified"
            session.flush()
            self._audit.chain(
                session, "system", "tax_roll.certified", f"bill:{bill_id}",
                {"parcel": frontage.parcel_number, "amount": balance, "tax_year": tax_year},
            )  # fmt: skip
            return from_row(TaxRollRecord, row)

    def list_tax_roll(self, tax_year: int | None = None) -> builtins.list[TaxRollRecord]:
        query = select(m.TaxRollEntry).order_by(m.TaxRollEntry.id)
        if tax_year is not None:
            query = query.where(m.TaxRollEntry.tax_year == tax_year)
        with self._uow.read() as session:
            return [from_row(TaxRollRecord, r) for r in session.scalars(query)]
