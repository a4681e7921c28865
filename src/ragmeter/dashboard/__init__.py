"""The local web dashboard over the run store (``ragmeter serve``; extra ``[serve]``)."""

from ragmeter.dashboard._app import create_app, is_loopback

__all__ = ["create_app", "is_loopback"]
