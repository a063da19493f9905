"""Text renderings of the result objects: table, markdown, csv, json."""
