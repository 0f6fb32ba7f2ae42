"""Generators of test scenes with exactly known truth, for the suite and the benches.

Installed with the development tools only (the workspace's ``dev`` group), never
on a pole or the server: the layers put ``sidewalk.testkit`` above every
component, so no production module may import it (the demo walk of
``sidewalk inspect demo-scene`` is the one deferred exception, declared as the
``demo`` extra of ``sidewalk-analytics``).
"""
