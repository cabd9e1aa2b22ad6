"""KM9xx: problems of the run itself, reported like any finding so nothing is silent."""
