"""sadedup: exact, near-duplicate and substring deduplication with SQL-queryable provenance."""
__version__ = "0.1.0"
