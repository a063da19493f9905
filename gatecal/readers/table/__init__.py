"""gatecal's long runs table: CSV and JSONL read row by row or in blocks, and Parquet."""
