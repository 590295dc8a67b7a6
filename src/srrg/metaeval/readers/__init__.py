"""Ratings datasets in their published layouts, one reader a module (rexval, radpref, rate_eval,
radevalx, radeval_expert), what they share (common: the ratings table, its row and validation
helpers, human scores) and the reader by adapter name (load: load_dataset); docs/metaeval.md."""
