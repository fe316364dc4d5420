"""Workflow files shipped with sadedup (installed as the sadedup.workflows package)."""
