"""Camera on the pole: capture, frontage geometry, snow cover and cleared width.

Vision functions are pure (numpy arrays in, numbers out); I/O lives in
``capture`` only. This package imports numpy and OpenCV; the drivers do not.
"""
