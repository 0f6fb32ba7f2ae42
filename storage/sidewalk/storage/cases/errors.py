"""The errors the case records raise."""

from __future__ import annotations


class CaseStoreError(Exception):
    """Base class for case-record errors."""


class NotFoundError(CaseStoreError, LookupError):
    """The record asked for does not exist."""


class ClockStateError(CaseStoreError):
    """A transition that the clock's current state does not allow (it is closed)."""


class BillingError(CaseStoreError, ValueError):
    """A money operation that the ledger refuses (e.g. certifying a paid bill)."""
