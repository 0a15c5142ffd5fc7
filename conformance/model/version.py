"""The suite's own version (the spec's is ``spec/vocabulary.json``'s ``spec_version``)."""

__version__ = "0.1.0"
