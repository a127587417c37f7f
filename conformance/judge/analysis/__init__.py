"""Failure analysis: what a failed item's answer says about the backend's bug. The defect models
(``models``, assembled in ``catalogue``), the search that names the models reproducing an answer
(``diagnosis``), the element type factored out first (``retyping``), the constants fitted to an
answer (``fitted``), and where an undiagnosed item's differences lie (``where``)."""
