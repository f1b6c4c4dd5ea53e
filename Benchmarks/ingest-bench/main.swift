print("ingest-bench: pending")
