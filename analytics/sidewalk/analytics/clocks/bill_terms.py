"""Which section a bill is under, and the terms that section sets.

Each kind of abatement is billed under its own section, with its own words,
addressee, period to pay and consequence of not paying; nothing of that is
written into a template. The periods are profile values, each with its
citation (or its ``unconfirmed`` mark where the code sets none):

* ``snow_and_ice``, § 370-10 G: the owner; ``billing.bill_payable`` from receipt;
  unpaid ``billing.tax_roll_after`` after the costs → the tax roll.
* ``snow_deposit``, § 370-10 C (snow or ice deposited on a public way, removed by the
  Village after its notice): G's terms, and the Village's reading that G charges that
  removal at all (``snow_and_ice.deposit_removal_charge``, ``charge``), with its
  unconfirmed mark; under the reading ``penalty only`` nobody is billed
  (``BillTerms.chargeable`` is false).
* ``obstruction``, § 370-8 F: the owner; ``obstructions.bill_payable`` from receipt;
  unpaid ``obstructions.tax_roll_after`` after the costs → the tax roll.
* ``sweeping``, § 144-17: the primary contractor, not the frontage's owner;
  ``streets.sweeping_costs_payable`` from receipt; unpaid → a violation of § 144-17
  (penalty § 1-3); no tax roll.
* ``opening_repair``, § 370-6: the permittee, plus the administrative share;
  ``permits.repair_bill_payable`` (unconfirmed); the code says nothing of non-payment.
* ``ordinance``, § 370-11 C, § 370-14, § 144-11, § 144-12 B: the owner;
  ``billing.other_bill_payable`` and ``billing.other_tax_roll_after`` (unconfirmed: these
  sections provide no abatement bill at all).
* ``abandoned_excavation``, § 144-12 C: charged against the real estate, entered on the
  next succeeding tax roll as a special charge with interest; no period to pay.

The administrative share is added only where the ordinance says so: § 370-6
("plus 20% for administration", ``permits.repair_administration_share``).
No other section provides one, so no other bill carries it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from sidewalk.core.profile import DepositChargeRule, Profile, Rule

BillKind = Literal[
    "snow_and_ice",
    "snow_deposit",
    "obstruction",
    "sweeping",
    "opening_repair",
    "ordinance",
    "abandoned_excavation",
]
Billed = Literal["owner", "contractor", "permittee", "real_estate"]
Unpaid = Literal["tax_roll", "violation", "next_tax_roll", "unstated"]

# The kinds whose unpaid bill goes on the tax roll (``unpaid`` "tax_roll" or
# "next_tax_roll"): the clock engine schedules their entry (``enforcement``).
TAX_ROLLED: Final[frozenset[BillKind]] = frozenset(
    {"snow_and_ice", "snow_deposit", "obstruction", "ordinance", "abandoned_excavation"}
)

# An inspector-entered finding (``inspections``) under § 370-10 C is billed on § 370-10 G's
# terms (G: "the expenses incurred by the Village to abate the snow and/or ice hazard");
# one under § 144-12 C on that subsection's own; the rest on the unconfirmed defaults.
SNOW_RULE_PREFIX: Final = "snow_and_ice."
# § 370-10 C's deposit (``inspections``): G's terms, as far as the Village reads G to reach.
DEPOSIT_RULE: Final = "snow_and_ice.deposit_removal_after_notice"
DEPOSIT_CHARGE: Final = "snow_and_ice.deposit_removal_charge"
ABANDONED_RULE: Final = "construction.abandoned_excavation_after"


@dataclass(frozen=True)
class BillTerms:
    """What one bill says about its section, addressee, period to pay and what follows."""

    kind: BillKind
    billed: Billed
    unpaid: Unpaid
    payable: tuple[str, Rule] | None = None
    tax_roll: tuple[str, Rule] | None = None
    administration: tuple[str, Rule] | None = None
    # Where the section is cited when no period of it is (§ 144-12 C).
    basis: tuple[str, Rule] | None = None
    # The reading of the text the charge itself rests on (§ 370-10 C's deposit: whether
    # G charges its removal), a setting in words, not a number.
    charge: tuple[str, DepositChargeRule] | None = None

    @property
    def chargeable(self) -> bool:
        """False where the Village reads the Code as charging no one (``penalty only``)."""
        return self.charge is None or self.charge[1].value == "charged under G"

    @property
    def rules(self) -> list[tuple[str, Rule]]:
        """Every profile value the bill relies on (for its record and its marks)."""
        return [r for r in (self.payable, self.tax_roll, self.administration, self.basis) if r]

    @property
    def citation(self) -> str:
        """The sections the bill is under, as the profile cites them."""
        parts = [
            part.strip()
            for _, rule in self.rules
            if rule.citation
            for part in rule.citation.split(";")
        ]
        return "; ".join(dict.fromkeys(p for p in parts if p))


def bill_terms(profile: Profile, kind: BillKind) -> BillTerms:
    """The terms of a bill of ``kind`` under ``profile``."""
    billing, obs = profile.billing, profile.obstructions
    if kind in ("snow_and_ice", "snow_deposit"):
        deposit = kind == "snow_deposit"  # G's terms, and the reading that G reaches C
        return BillTerms(
            kind, "owner", "tax_roll",
            payable=("billing.bill_payable", billing.bill_payable),
            tax_roll=("billing.tax_roll_after", billing.tax_roll_after),
            charge=(DEPOSIT_CHARGE, profile.snow_and_ice.deposit_removal_charge) if deposit
            else None,
        )  # fmt: skip
    if kind == "obstruction":
        return BillTerms(
            kind, "owner", "tax_roll",
            payable=("obstructions.bill_payable", obs.bill_payable),
            tax_roll=("obstructions.tax_roll_after", obs.tax_roll_after),
        )  # fmt: skip
    if kind == "sweeping":
        return BillTerms(
            kind, "contractor", "violation",
            payable=("streets.sweeping_costs_payable", profile.streets.sweeping_costs_payable),
        )  # fmt: skip
    if kind == "opening_repair":
        permits = profile.permits
        return BillTerms(
            kind, "permittee", "unstated",
            payable=("permits.repair_bill_payable", permits.repair_bill_payable),
            administration=(
                "permits.repair_administration_share", permits.repair_administration_share
            ),
        )  # fmt: skip
    if kind == "ordinance":
        return BillTerms(
            kind, "owner", "tax_roll",
            payable=("billing.other_bill_payable", billing.other_bill_payable),
            tax_roll=("billing.other_tax_roll_after", billing.other_tax_roll_after),
        )  # fmt: skip
    construction = profile.construction
    return BillTerms(
        kind, "real_estate", "next_tax_roll",
        basis=("construction.abandoned_excavation_after", construction.abandoned_excavation_after),
    )  # fmt: skip


def kind_of(abatement_key: str, rule: str | None = None) -> BillKind:
    """The bill kind of an abatement, from its key (``obstruction:OB-1/abatement``, …) and,
    for an inspector-entered rule (``inspection:…``), the violation's rule name."""
    head = abatement_key.partition(":")[0]
    by_head: dict[str, BillKind] = {
        "obstruction": "obstruction", "sweeping": "sweeping", "repair": "opening_repair",
    }  # fmt: skip
    if head in by_head:
        return by_head[head]
    if head == "inspection":
        if rule == DEPOSIT_RULE:
            return "snow_deposit"
        if (rule or "").startswith(SNOW_RULE_PREFIX):
            return "snow_and_ice"
        if rule == ABANDONED_RULE:
            return "abandoned_excavation"
        return "ordinance"
    return "snow_and_ice"
