"""Sample and fixture models for surgeon (see README.md). Importable as `samples` from the
repository root; export_samples.py regenerates models/."""
