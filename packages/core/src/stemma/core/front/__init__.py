"""The front doors: the lazy ``run()``/``resolve()`` and the ``Pipeline`` facade.

Each translates what its user wrote into engine steps; neither imports the other.
"""
