"""The public-works dashboard: FastAPI app, JSON API, vendored UI, accounts."""
