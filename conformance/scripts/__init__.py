"""Standalone repro scripts, one per item, for a runtime's issue tracker (the report writes one per
failure cause it shows, ``conformance repro`` one for any item, the fuzz one per finding): which item
(``items``), how its script runs the model (``runners``), and the script itself (``standalone``),
fed with the expected values the oracle has already computed."""
