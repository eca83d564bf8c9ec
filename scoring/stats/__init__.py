"""The statistics of the library: rates and their intervals (rates), the paired
comparison of two versions and sample sizes (paired), agreement between
readers (agreement) and the release gate's decision (gate).

Import the submodules themselves; this package imports none of them, so
importing one costs only what it needs (rates needs neither scipy nor
statsmodels)."""
