"""Helpers shared by the apps that belong to none of them (no models, not a Django app)."""
