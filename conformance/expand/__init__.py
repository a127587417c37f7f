"""Stage 2, expand: turn each Case into concrete test items (one per dtype, parameter instance and
expectation), with a per-file cache."""
