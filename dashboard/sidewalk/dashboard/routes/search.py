"""The search box on every page: addresses, owners, parcel and notice numbers.

Matching is case-insensitive on a substring; an address or parcel match opens
the property page, a notice number the notice's own page. Owner names are
searched only for roles that may see them (``owner_details``), so the answer
never tells a viewer who owns what.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from sidewalk.dashboard.routes.deps import Cases, Reader
from sidewalk.dashboard.words import notice_kind

router = APIRouter()

LIMIT = 20


class SearchMatch(BaseModel):
    kind: Literal["address", "owner", "parcel", "notice"]
    what: str = Field(description="what matched, in words: 'Address', 'Owner', …")
    label: str
    detail: str
    href: str = Field(description="the page it opens (a hash route)")


class SearchResults(BaseModel):
    query: str
    matches: list[SearchMatch]
    more: bool = Field(description="more matched than are listed")


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


@router.get("/search", tags=["pages"])
def search(
    user: Reader,
    cases: Cases,
    q: Annotated[str, Query(min_length=1, max_length=100, description="what to look for")],
) -> SearchResults:
    """Frontages and parcels by address or parcel number, owners, notices by number."""
    needle = _norm(q)
    matches: list[SearchMatch] = []
    frontages = cases.registry.list_frontages()
    # Numbers first: a notice or parcel number is exact enough to go straight to.
    for number, kind, _frontage in cases.dashboard.notices_numbered_like(needle, LIMIT + 1):
        matches.append(
            SearchMatch(
                kind="notice",
                what="Notice",
                label=number,
                detail=f"{notice_kind(kind)}",
                href=f"#notice/{number}",
            )
        )
    address_of = {f.id: f.street_address for f in frontages}
    for f in frontages:
        if needle in _norm(f.parcel_number):
            matches.append(
                SearchMatch(
                    kind="parcel",
                    what="Tax parcel",
                    label=f.parcel_number,
                    detail=f.street_address,
                    href=f"#property/{f.id}",
                )
            )
    for p in cases.registry.list_parcels():
        if needle in _norm(p.id) or (p.tax_parcel_id and needle in _norm(p.tax_parcel_id)):
            if any(m.label in (p.id, p.tax_parcel_id) for m in matches):
                continue
            matches.append(
                SearchMatch(
                    kind="parcel",
                    what="Parcel",
                    label=p.id,
                    detail=p.site_address or "",
                    href=f"#property/{p.id}",
                )
            )
    for f in frontages:
        if needle in _norm(f.street_address):
            matches.append(
                SearchMatch(
                    kind="address",
                    what="Address",
                    label=f.street_address,
                    detail=f"{f.zone.capitalize()} frontage, parcel {f.parcel_number}",
                    href=f"#property/{f.id}",
                )
            )
    if user.may("owner_details"):
        owned: dict[str, list[str]] = {}
        for f in frontages:
            owned.setdefault(f.owner_id, []).append(f.id)
        for o in cases.registry.list_owners():
            if needle in _norm(o.name) and o.id in owned:
                first = owned[o.id][0]
                places = ", ".join(address_of[i] for i in owned[o.id][:3])
                more = len(owned[o.id]) - 3
                matches.append(
                    SearchMatch(
                        kind="owner",
                        what="Owner",
                        label=o.name,
                        detail=places + (f" and {more} more" if more > 0 else ""),
                        href=f"#property/{first}",
                    )
                )
    return SearchResults(query=q, matches=matches[:LIMIT], more=len(matches) > LIMIT)
