"""Input data: schemas, loaders with line-numbered errors, importers for public datasets."""
