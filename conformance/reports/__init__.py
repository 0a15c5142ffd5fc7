"""Reports of a run: for people (console) and for CI (JSON, JUnit XML)."""
