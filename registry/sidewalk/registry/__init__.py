"""The county parcel import: a Wisconsin county's parcel file into the registry.

``county`` reads the file (Statewide Parcel Map schema) into parcels and
rejects, ``frontages`` derives each parcel's street frontage(s) from its
polygon, ``apply`` compares the result with the registry and applies the
difference with an effective date. pyproj and shapely load with these
modules, never with ``sidewalk --help``.
"""
