"""The ordinance's clocks: the engine, the snowfall detector and the cases.

Three of these modules run compiled when ``scripts/bootstrap`` built them for
the sources as they are (``native``): their compiled build is found first.
"""

from sidewalk.analytics.clocks import native as _native

if _native.usable():
    __path__.insert(0, str(_native.NATIVE_DIR))
