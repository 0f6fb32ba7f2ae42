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
    # Numbers first: a notice or parcel number is exact enough to go straight to.
    for number, kind, _frontage in cases.dashboard.notices_numbered_like(needle, LIMIT + 1):
        matches.append(
            SearchMatch(
                kind="notice", what="Notice", label=number, detail=notice_kind(kind),
                href=f"#notice/{number}",
            )
        )  # fmt: skip
    found = cases.dashboard.search_registry(needle, LIMIT + 1, owners=user.may("owner_details"))
    for fid, address, _zone, tax_parcel in found["tax_parcel"]:
        matches.append(
            SearchMatch(
                kind="parcel", what="Tax parcel", label=tax_parcel, detail=address,
                href=f"#property/{fid}",
            )
        )  # fmt: skip
    listed = {m.label for m in matches}
    for parcel, tax_parcel, site in found["parcel"]:
        if parcel in listed or tax_parcel in listed:
            continue
        matches.append(
            SearchMatch(
                kind="parcel", what="Parcel", label=parcel, detail=site,
                href=f"#property/{parcel}",
            )
        )  # fmt: skip
    for fid, address, zone, tax_parcel in found["address"]:
        matches.append(
            SearchMatch(
                kind="address", what="Address", label=address,
                detail=f"{zone.capitalize()} frontage, tax parcel {tax_parcel}",
                href=f"#property/{fid}",
            )
        )  # fmt: skip
    # An owner once, at their first frontage, with where else they own.
    places: dict[str, list[tuple[str, str]]] = {}
    for name, fid, address in found.get("owner", []):
        places.setdefault(name, []).append((fid, address))
    for name, owned in places.items():
        more = len(owned) - 3
        matches.append(
            SearchMatch(
                kind="owner", what="Owner", label=name,
                detail=", ".join(a for _f, a in owned[:3]) + (" and more" if more > 0 else ""),
                href=f"#property/{owned[0][0]}",
            )
        )  # fmt: skip
    return SearchResults(query=q, matches=matches[:LIMIT], more=len(matches) > LIMIT)
