"""The Village's letterhead and issuing officer, as each letter carries them.

Taken from the settings' ``[village]`` table (``VillageConfig``) when a notice
is issued and stored in the notice's record (``detail["letterhead"]``, the
signature image included), so a letter printed or packaged later, from the
command line or the dashboard, shows the officer who issued it: the same
record gives the same PDF whatever the settings say today.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from sidewalk.core.config import VillageConfig
from sidewalk.core.profile import Profile

# A citation as the profile writes it ("§ 370-10 A (inferred)") → as a letter writes it.
_INFERRED: Final = re.compile(r"\s*\(inferred\)")


def cited(citation: str | None) -> str | None:
    """``§ 370-10 G; § 66.0907(5), Wis. Stats.``: the sections a profile citation names,
    each once, as every clerk's and owner's document cites them (letters, the tax roll,
    the exports, the dashboard). The profile's "(inferred)" marks (subsection letters
    read from the order of the seed text) belong in the profile and the evidence
    record; a part that is not a section (a profile note stored where a citation
    belongs) is no citation and is left out. None: nothing cited."""
    if not citation:
        return None
    parts = (p.strip() for p in _INFERRED.sub("", citation).split(";"))
    return "; ".join(dict.fromkeys(p for p in parts if p.startswith("§"))) or None


def cited_in(text: str) -> str:
    """A stored sentence (an inspector's finding, a decision's reason) with every
    citation in it as ``cited`` writes one: the profile's "(inferred)" marks left out."""
    return _INFERRED.sub("", text)


def plain_citation(citation: str | None) -> str:
    """``Village Code § 370-10 A``: a profile citation as a letter cites it (``cited``),
    the Code's sections named as the Village Code's; a statute keeps its own name."""
    # Each section once: a decision resting on two values of one section (A's 24 hours
    # and four feet) cites it once.
    parts = (cited(citation) or "").split("; ")
    return "; ".join(p if "Wis. Stats" in p else f"Village Code {p}" for p in parts if p)


@dataclass(frozen=True)
class Letterhead:
    """Who writes to the owner, and how the owner reaches them."""

    village: str
    office: str
    address_lines: tuple[str, ...]
    telephone: str | None
    email: str | None
    office_hours: str | None
    officer_name: str | None
    officer_title: str
    signature: bytes | None = None  # PNG or JPEG bytes
    website: str | None = None

    @classmethod
    def from_settings(cls, village: VillageConfig, profile: Profile) -> Letterhead:
        """The configured letterhead; reads the signature image now (stored with each notice)."""
        signature = village.signature_image.read_bytes() if village.signature_image else None
        return cls(
            village=profile.village.name,
            office=village.office,
            address_lines=tuple(village.address_lines),
            telephone=village.telephone,
            email=village.email,
            office_hours=village.office_hours,
            officer_name=village.officer_name,
            officer_title=village.officer_title,
            signature=signature,
            website=village.website,
        )

    @classmethod
    def unconfigured(cls, profile: Profile) -> Letterhead:
        """No ``[village]`` settings: signed by the office the code names, no telephone.

        ``sidewalk check`` reports it (``letterhead_problems``); a letter still
        says whom to ask, in the only words the system has.
        """
        return cls(
            village=profile.village.name,
            office=f"{profile.village.name} Office",
            address_lines=(f"{profile.village.name}, {profile.village.state}",),
            telephone=None,
            email=None,
            office_hours=None,
            officer_name=None,
            officer_title="Clerk-Treasurer",
        )

    @property
    def configured(self) -> bool:
        return bool(self.officer_name and self.telephone)

    @property
    def signed_by(self) -> str:
        """``Dana Krüger, Clerk-Treasurer``."""
        return (
            f"{self.officer_name}, {self.officer_title}"
            if self.officer_name
            else (f"{self.officer_title}, {self.village}")
        )

    @property
    def contact(self) -> str:
        """One sentence: whom to call, where to write, when the office is open."""
        ways = []
        if self.telephone:
            ways.append(f"call {self.telephone}")
        if self.email:
            ways.append(f"e-mail {self.email}")
        ways.append(f"write to {self.office}, {', '.join(self.address_lines)}")
        how = ways[0] if len(ways) == 1 else f"{', '.join(ways[:-1])} or {ways[-1]}"
        who = self.officer_name or f"the {self.officer_title}"
        hours = f" Office hours: {self.office_hours}." if self.office_hours else ""
        return f"Questions? Please {how}, and ask for {who}.{hours}"

    def to_json(self) -> dict[str, Any]:
        return {
            "village": self.village,
            "office": self.office,
            "address_lines": list(self.address_lines),
            "telephone": self.telephone,
            "email": self.email,
            "office_hours": self.office_hours,
            "officer_name": self.officer_name,
            "officer_title": self.officer_title,
            "signature_b64": base64.b64encode(self.signature).decode("ascii")
            if self.signature
            else None,
            "website": self.website,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Letterhead:
        signature = data.get("signature_b64")
        return cls(
            village=str(data["village"]),
            office=str(data["office"]),
            address_lines=tuple(str(x) for x in data["address_lines"]),
            telephone=data.get("telephone"),
            email=data.get("email"),
            office_hours=data.get("office_hours"),
            officer_name=data.get("officer_name"),
            officer_title=str(data["officer_title"]),
            signature=base64.b64decode(signature) if signature else None,
            website=data.get("website"),
        )


def letterhead_of(detail: Mapping[str, Any], profile: Profile) -> Letterhead:
    """The letterhead stored with a notice, or the unconfigured one for older records."""
    stored = detail.get("letterhead")
    return Letterhead.from_json(stored) if stored else Letterhead.unconfigured(profile)


def letterhead_problems(village: VillageConfig | None) -> list[str]:
    """What ``sidewalk check`` says about the letterhead settings."""
    if village is None:
        return [
            "[village] is not set: letters carry no officer's name, telephone or e-mail; set "
            "office, address_lines, telephone, email, office_hours, officer_name, officer_title "
            "(and signature_image)"
        ]
    if village.signature_image is None:
        return ["[village] signature_image is not set: letters are printed without a signature"]
    return []
