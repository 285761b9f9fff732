"""The store's SQL plumbing: engine, URL, column types, DDL helpers, the SQLite writer queue."""
