"""What the ordinance itself says a notice must be, written from the Code's text.

Nothing here imports the engine, the profile or the renderer: the numbers come
from the seed text (``../shared/seeds``) of § 370-10 A (the period and the width),
F and G (removal after a written notice, the bill's days to pay, the 60 days to
the tax roll and the statute) and § 370-8 D (the obstruction's 24 hours), the
subsection letters from the order of the paragraphs and the Code's own
cross-references; what the Code leaves to the Village (the camera's uncertainty,
whom a bill goes to after a sale during a case) is passed in as the Village's
stated setting. A change in the engine that a reader of the Code would call
wrong fails the acceptance suite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


@dataclass(frozen=True)
class ClearingRule:
    """§ 370-10 A as the Code states it."""

    hours_to_clear: int  # "within 24 hours from the time the snow ceases to accumulate"
    min_width_ft: int  # "to a minimum of four feet in width"
    section: str = "§ 370-10"


def clearing_rule(seeds: Path) -> ClearingRule:
    text = _seed_text(seeds)
    start = text.index("§ 370-10 Snow and ice removal.")
    body = text[start : start + 4000]
    hours = re.search(r"within (\d+) hours from the time the snow ceases", body)
    width = re.search(r"minimum of (\w+) feet in width", body)
    if hours is None or width is None:
        raise ValueError("§ 370-10 A's period or width is not in the seed text")
    return ClearingRule(int(hours.group(1)), WORDS[width.group(1)])


@dataclass(frozen=True)
class Expected:
    """A clearing notice the Code calls for: whose walk, after which storm, to whom."""

    address: str
    storm: int
    snow_ceased: datetime
    owner: str  # the owner of record when the notice is due
    mailing: tuple[str, ...]
    frontage: str = ""  # the walk's record (an address may front two streets)

    def due(self, rule: ClearingRule) -> datetime:
        return self.snow_ceased + timedelta(hours=rule.hours_to_clear)


def cleared_at(widths_ft: list[tuple[datetime, float]], due: datetime) -> float:
    """The walk's cleared width at ``due``: (when, width) as the owner cleared it; before
    the first entry after the snow, nothing is cleared."""
    cleared = 0.0
    for at, width in sorted(widths_ft):
        if at <= due:
            cleared = width
    return cleared


def violates(
    rule: ClearingRule,
    widths_ft: list[tuple[datetime, float]],
    due: datetime,
    tolerance_in: float = 0.0,
) -> bool:
    """True when the walk's cleared width at ``due`` is under the Code's minimum by more
    than the measurement's stated uncertainty (the Code sets no tolerance; the Village's
    camera has one, and a walk within it of 4 ft is not shown to be narrower)."""
    short_in = (rule.min_width_ft - cleared_at(widths_ft, due)) * 12
    return short_in > tolerance_in


def _section(text: str, heading: str, length: int = 6000) -> str:
    start = text.index(heading)
    return text[start : start + length]


def _seed_text(seeds: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(seeds.glob("*.txt")))


# § 370-10's paragraphs in the seed's order. The seed strips their letters; the Code's
# own cross-references fix them ("as set forth in Subsection A", "the time established
# under Subsection B(1) and (2)"): B's numbered paragraphs are its notices (B(2) is
# absent from the seed), the rest are lettered in order.
SNOW_SUBSECTIONS = (
    ("A", "Removal from sidewalks."),
    ("B", "Notice and removal of snow from sidewalks."),
    ("B(1)", "Hazardous conditions."),
    ("C", "Snow and ice not to encroach."),
    ("D", "Enforcement."),
    ("E", "Continued violations."),
    ("F", "Abatement after notice."),
    ("G", "Expense."),
    ("H", "Penalty."),
)
# § 370-8's: A, B (1)-(3), C (1)-(3), D (sidewalks), E (streets), F.
OBSTRUCTION_SUBSECTIONS = (
    ("A", "Obstructions and encroachments prohibited."),
    ("B", "Exceptions."),
    ("C", "Standards."),
    ("D", "Removal by Village for sidewalk obstructions and encroachments."),
    ("E", "Removal by Village for obstruction and encroachments located in the Village"),
    ("F", "Failure to remove obstruction."),
)


def _lettered(body: str, headings: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """Each subsection's text by its letter, checking the headings come in the Code's order."""
    at = [body.index(h) for _, h in headings]
    if at != sorted(at):
        raise ValueError("the seed's paragraphs are not in the order the oracle reads them")
    ends = [*at[1:], len(body)]
    return {label: body[a:e] for (label, _), a, e in zip(headings, at, ends, strict=True)}


@dataclass(frozen=True)
class BillRule:
    """§ 370-10 F and G as the Code states them: removal after a written notice, the
    bill payable within so many calendar days of its receipt, the unpaid costs on the
    tax roll within so many days after they were incurred, under the statute named."""

    payable_days: int  # "payable within 10 calendar days from the receipt thereof"
    tax_roll_days: int  # "Within 60 days after such costs and expenses are incurred"
    statute: str  # "§ 66.0907(5), Wis. Stats."
    abatement: str = "§ 370-10 F"
    expense: str = "§ 370-10 G"


def bill_rule(seeds: Path) -> BillRule:
    body = _section(_seed_text(seeds), "§ 370-10 Snow and ice removal.")
    body = body[: body.index("§ 370-11 Terrace areas.")]
    parts = _lettered(body, SNOW_SUBSECTIONS)
    if "after receiving a written notice" not in parts["F"]:
        raise ValueError("§ 370-10 F no longer removes after a written notice")
    payable = re.search(r"payable within (\d+) calendar days from the receipt", parts["G"])
    roll = re.search(r"Within (\d+) days after such costs and expenses are incurred", parts["G"])
    statute = re.search(r"as provided by (§ [\d.()]+, Wis\. Stats\.)", parts["G"])
    if payable is None or roll is None or statute is None:
        raise ValueError("§ 370-10 G's periods or statute are not in the seed text")
    return BillRule(int(payable.group(1)), int(roll.group(1)), statute.group(1))


def _start_of_day(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(0), zone)


def bill_due_date(rule: BillRule, received: datetime, zone: ZoneInfo) -> date:
    """The last day to pay: "within 10 calendar days from the receipt" (local days)."""
    return received.astimezone(zone).date() + timedelta(days=rule.payable_days)


def tax_roll_window(
    rule: BillRule, incurred: datetime, received: datetime, zone: ZoneInfo
) -> tuple[datetime, datetime]:
    """When the Clerk-Treasurer may enter an unpaid bill on the tax roll: never while the
    owner's days to pay run (G gives them from the receipt), and "within 60 days after
    such costs … are incurred" (by the end of the 60th local day). When the days to pay
    run past the 60th, the two cannot both hold: the first lawful moment is the end of
    the days to pay, and the window is that instant."""
    paid_by = _start_of_day(bill_due_date(rule, received, zone) + timedelta(days=1), zone)
    limit = _start_of_day(
        incurred.astimezone(zone).date() + timedelta(days=rule.tax_roll_days + 1), zone
    )
    return (paid_by, limit) if paid_by < limit else (paid_by, paid_by)


def billed_owner(served: str, owner_of_record: str, reading: str) -> str | None:
    """Whom the bill goes to. F removes at the owner's cost only "after receiving a written
    notice"; G charges "the parcel or lot owner". When the parcel changed hands after the
    notice, the Code does not say which; the Village's stated reading decides: "owner
    served" bills the owner who received the notice, "new notice" bills no one who was
    not served (None)."""
    if served.upper() == owner_of_record.upper() or reading == "owner served":
        return served
    return None


@dataclass(frozen=True)
class ObstructionRule:
    """§ 370-8 D as the Code states it: a written notice, the obstruction removed within
    so many hours (of its service: a notice not served directs no one)."""

    hours_to_remove: int
    section: str = "§ 370-8 D"


def obstruction_rule(seeds: Path) -> ObstructionRule:
    body = _section(_seed_text(seeds), "§ 370-8 Obstructions and encroachments.")
    body = body[: body.index("§ 370-9 Street privilege permit.")]
    parts = _lettered(body, OBSTRUCTION_SUBSECTIONS)
    hours = re.search(r"written notice .* removed within (\d+) hours", parts["D"])
    if hours is None:
        raise ValueError("§ 370-8 D's period is not in the seed text")
    return ObstructionRule(int(hours.group(1)))


MM_PER_INCH = 25.4
_INCHES = r"(\d+(?: \d/\d)?|\d/\d)"


def _inches(words: str) -> float:
    whole, _, frac = words.partition(" ")
    if "/" in whole:
        whole, frac = "0", whole
    n, _, d = frac.partition("/")
    return int(whole) + (int(n) / int(d) if frac else 0.0)


@dataclass(frozen=True)
class StatedWidth:
    """What a letter says was measured: its words (feet and inches) and its record page's
    millimetres, each with the stated uncertainty."""

    words_in: float  # "3 ft 9 in" → 45.0
    uncertainty_in: float  # "(± 2 in)" → 2.0
    mm: float
    uncertainty_mm: float


def stated_width(text: str) -> StatedWidth | None:
    """The measurement a clearing notice states, or None when it states none."""
    words = re.search(
        rf"measured the narrowest cleared path along your sidewalk at"
        rf" ((?:\d+ ft)?(?: ?{_INCHES} in)?) \(± {_INCHES} in\)",
        text,
    )
    record = re.search(r"narrowest cleared width .*?\(([\d.]+) mm ± ([\d.]+) mm\)", text)
    if words is None or record is None or not words.group(1):
        return None
    said, _, plus = words.groups()
    feet = re.match(r"(\d+) ft", said)
    inches = re.search(rf"{_INCHES} in", said)
    return StatedWidth(
        (int(feet.group(1)) * 12 if feet else 0) + (_inches(inches.group(1)) if inches else 0.0),
        _inches(plus),
        float(record.group(1)),
        float(record.group(2)),
    )


def width_contradictions(text: str, rule: ClearingRule, true_ft: float) -> list[str]:
    """What makes a clearing notice's measurement dishonest: a width not shown short of
    the Code's minimum by more than its own stated uncertainty, words that disagree with
    the millimetres by more than their 1/4-inch precision, or a measurement farther from
    the width the owner left than its stated uncertainty."""
    w = stated_width(text)
    if w is None:
        return ["no measured width stated"]
    required_mm = rule.min_width_ft * 12 * MM_PER_INCH
    wrong = []
    if not w.mm + w.uncertainty_mm < required_mm:
        wrong.append(f"{w.mm} mm ± {w.uncertainty_mm} mm is not short of {required_mm} mm")
    if not (w.words_in + w.uncertainty_in) * MM_PER_INCH < required_mm:
        wrong.append(f"the words {w.words_in} in ± {w.uncertainty_in} in are not short of 4 ft")
    if abs(w.words_in - w.mm / MM_PER_INCH) > 0.125 + 1e-6:
        wrong.append(f"the words {w.words_in} in disagree with {w.mm} mm")
    if abs(w.mm - true_ft * 12 * MM_PER_INCH) > w.uncertainty_mm:
        wrong.append(f"{w.mm} mm is not within its uncertainty of the {true_ft} ft cleared")
    if re.search(r"narrower than that by less than", text):
        wrong.append("a notice saying the path was short by less than the uncertainty")
    return wrong


# Citations that are not the Code's: the profile's own marks and notes.
NOT_CITATIONS = (r"\(inferred\)", r"unconfirmed", r"missing from the code text", r"profile")


def citation_problems(text: str, must_cite: tuple[str, ...]) -> list[str]:
    flat = re.sub(r"\s+", " ", text)
    wrong = [f"does not cite {c}" for c in must_cite if c not in flat]
    for pattern in NOT_CITATIONS:
        if found := re.search(pattern, flat, re.IGNORECASE):
            wrong.append(f"carries {found.group(0)!r}")
    return wrong


@dataclass(frozen=True)
class DepositRule:
    """§ 370-10 C as the Code states it: no person deposits snow or ice onto a public
    street, alley, sidewalk or public land, except snow from the walk of a parcel whose
    building stands within so many feet of the right-of-way, and then only onto the
    street. The Code sets no period to remove it after a notice: that is the Village's
    (``removal_hours`` is None, and a letter must not give the Code as its source)."""

    setback_ft: int  # "within five feet of the street right-of-way"
    section: str = "§ 370-10 C"
    removal_hours: int | None = None


def deposit_rule(seeds: Path) -> DepositRule:
    body = _section(_seed_text(seeds), "§ 370-10 Snow and ice removal.")
    body = body[: body.index("§ 370-11 Terrace areas.")]
    c = _lettered(body, SNOW_SUBSECTIONS)["C"]
    if "No person shall push, shove or in any way deposit any snow or ice" not in c:
        raise ValueError("§ 370-10 C no longer forbids depositing snow")
    setback = re.search(r"within (\w+) feet of the street right-of-way", c)
    if setback is None or "onto the public streets" not in c:
        raise ValueError("§ 370-10 C's exception is not in the seed text")
    hours = re.search(r"within (\d+) hours", c)
    return DepositRule(
        WORDS[setback.group(1)], removal_hours=int(hours.group(1)) if hours else None
    )


def deposit_violates(
    rule: DepositRule, onto: str, *, from_own_walk: bool, building_within_ft: float | None
) -> bool:
    """Whether a deposit is one C forbids: anything onto an alley, sidewalk or public land;
    onto the street unless it is the parcel's own walk's snow and its building stands
    within the setback (None: the registry does not say it does)."""
    excepted = (
        onto == "street"
        and from_own_walk
        and building_within_ft is not None
        and building_within_ft <= rule.setback_ft
    )
    return not excepted


# § 370-7's paragraphs in the seed's order, lettered A–I. The seed strips the letters;
# the Code's own cross-references fix G and H ("except as provided for under § 370-7G for
# pavement replacement", "an emergency excavation as defined in § 370-7H"), and the rest
# follow in order. Each heading starts its own line ("Excavation." also ends words
# elsewhere).
OPENING_SUBSECTIONS = (
    ("A", "\nFrozen ground."),
    ("B", "\nProtection of public."),
    ("C", "\nPavement removal."),
    ("D", "\nExcavation.\n"),
    ("E", "\nBackfilling."),
    ("F", "\nNotice."),
    ("G", "\nPavement replacement."),
    ("H", "\nEmergency excavation."),
    ("I", "\nExcavation in new streets limited."),
)
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip


def _month_day(words: str) -> tuple[int, int]:
    month, day = words.split()
    return MONTHS.index(month) + 1, int(day)


@dataclass(frozen=True)
class OpeningRule:
    """§ 370-7 A, G, H and I as the Code states them (days and dates)."""

    frozen_from: tuple[int, int]  # A: "between November 15 and April 1"
    frozen_until: tuple[int, int]
    cold_mix_by: tuple[int, int]  # G: "by not later than the following June 1"
    permanent_days: int  # G: "within 60 days of the date of the permit"
    apply_business_days: int  # H: "not later than the next business day"
    completion_days: int  # I: "must be completed within 30 days"
    moratorium_years: int  # I: "for a period of five years after the date of … repaving"

    @staticmethod
    def section(letter: str) -> str:
        return f"§ 370-7 {letter}"


def opening_rule(seeds: Path) -> OpeningRule:
    text = _seed_text(seeds)
    if "§ 370-7G for pavement replacement" not in text or "defined in § 370-7H" not in text:
        raise ValueError("the Code no longer names § 370-7 G and H where the oracle reads them")
    body = _section(text, "§ 370-7 Regulations governing excavations and openings.", 20000)
    body = body[: body.index("§ 370-8 Obstructions and encroachments.")]
    parts = _lettered(body, OPENING_SUBSECTIONS)
    month_day = r"((?:" + "|".join(MONTHS) + r") \d+)"
    frozen = re.search(rf"permitted between {month_day} and {month_day} except", parts["A"])
    cold = re.search(rf"by not later than the following {month_day}", parts["G"])
    permanent = re.search(r"Permanent pavements shall be replaced within (\d+) days of the "
                          r"date of the permit", parts["G"])  # fmt: skip
    apply = re.search(r"apply for an excavation permit not later than the next business day",
                      parts["H"])  # fmt: skip
    complete = re.search(r"excavation work in such street must be completed within (\d+) days",
                         parts["I"])  # fmt: skip
    years = re.search(r"for a period of (\w+) years after the date of improvement or repaving",
                      parts["I"])  # fmt: skip
    if not (frozen and cold and permanent and apply and complete and years):
        raise ValueError("§ 370-7 A, G, H or I's days are not in the seed text")
    return OpeningRule(
        _month_day(frozen.group(1)), _month_day(frozen.group(2)), _month_day(cold.group(1)),
        int(permanent.group(1)), 1, int(complete.group(1)), WORDS[years.group(1)],
    )  # fmt: skip


@dataclass(frozen=True)
class Opening:
    """A street-opening permit and its work, as the clerk enters them (dates local, times
    aware in the village's zone; None: not on record)."""

    permit: str
    street: str
    opened: datetime
    approved: date
    emergency: bool = False
    applied: datetime | None = None
    pavement: bool = True  # the opening took up pavement (G's replacement applies)
    cold_mix_on: date | None = None
    permanent_on: date | None = None
    repaving_notice_on: date | None = None
    completed_on: date | None = None
    street_repaved_on: date | None = None


def next_business_day(day: date, holidays: frozenset[date], n: int = 1) -> date:
    """The Code does not define a business day; Monday to Friday less the Village's
    stated holidays (its setting, passed in)."""
    while n:
        day += timedelta(days=1)
        if day.weekday() < 5 and day not in holidays:
            n -= 1
    return day


def following(month_day: tuple[int, int], after: date) -> date:
    """"the following June 1": the first such date after ``after``."""
    this = date(after.year, *month_day)
    return this if this > after else date(after.year + 1, *month_day)


def years_after(day: date, years: int) -> date:
    try:
        return day.replace(year=day.year + years)
    except ValueError:  # February 29
        return day.replace(year=day.year + years, day=28)


@dataclass(frozen=True)
class OpeningFinding:
    """A § 370-7 violation the Code calls for: which permit, which subsection, and the
    last day the Code allowed (None where it sets none: an opening barred outright)."""

    permit: str
    letter: str
    last_day: date | None


def opening_violations(
    rule: OpeningRule, o: Opening, today: date, holidays: frozenset[date] = frozenset()
) -> list[OpeningFinding]:
    """What § 370-7 A, G, H and I say is wrong with one opening, as known on ``today``
    (a deadline not yet passed with nothing done is no violation yet). A day counts
    whole: work on the last day is in time.

    G's reading (the Code's "except as provided above"): a winter emergency's cold mix
    runs to the following June 1; the 60 days from the permit's date govern an opening
    whose pavement was replaced without it."""
    out: list[OpeningFinding] = []

    def late(last: date, done: date | None) -> bool:
        return (done is None and today > last) or (done is not None and done > last)

    opened = o.opened.date()
    start, until = date(opened.year, *rule.frozen_from), date(opened.year, *rule.frozen_until)
    if (opened >= start or opened <= until) and not o.emergency:
        out.append(OpeningFinding(o.permit, "A", None))
    if o.emergency:
        last = next_business_day(opened, holidays, rule.apply_business_days)
        if late(last, None if o.applied is None else o.applied.date()):
            out.append(OpeningFinding(o.permit, "H", last))
    if o.cold_mix_on is not None:
        last = following(rule.cold_mix_by, o.cold_mix_on)
        if late(last, o.permanent_on):
            out.append(OpeningFinding(o.permit, "G", last))
    elif o.pavement:
        last = o.approved + timedelta(days=rule.permanent_days)
        if late(last, o.permanent_on):
            out.append(OpeningFinding(o.permit, "G", last))
    if o.repaving_notice_on is not None:
        last = o.repaving_notice_on + timedelta(days=rule.completion_days)
        if late(last, o.completed_on):
            out.append(OpeningFinding(o.permit, "I", last))
    repaved = o.street_repaved_on
    if repaved is not None and repaved < opened <= years_after(repaved, rule.moratorium_years):
        out.append(OpeningFinding(o.permit, "I", years_after(repaved, rule.moratorium_years)))
    return out


def cites_subsection(text: str, letter: str) -> bool:
    """Whether ``text`` cites § 370-7 ``letter`` (the Code writes both "§ 370-7G" and
    "§ 370-7 G")."""
    return re.search(rf"§\s*370-7\s?{letter}\b", text) is not None


def day_in_words(day: date) -> str:
    """"Monday, June 1, 2026": a day as a letter or a page names it."""
    return f"{day:%A, %B} {day.day}, {day.year}"
