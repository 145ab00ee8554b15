"""Providers: one module per backend. A new backend is a new module here plus one line in
:data:`assay.model._registry.PROVIDERS`."""
