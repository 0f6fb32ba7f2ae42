"""Sensor drivers for the pole device.

Each module parses one sensor's real wire format in pure functions and keeps
its I/O in a thin adapter over an injected port (serial, SMBus, sysfs file).
Nothing here imports numpy or OpenCV: the drivers must run on the smallest device.
"""

from sidewalk.edge.drivers.quality import (
    Limits,
    Quality,
    QualityChecker,
    Quantity,
    SensorFault,
    SensorReading,
)

__all__ = ["Limits", "Quality", "QualityChecker", "Quantity", "SensorFault", "SensorReading"]
