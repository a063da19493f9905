"""A store's runs over time: each case's record, and the cases whose rate changed."""
