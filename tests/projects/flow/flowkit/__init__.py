"""Values that cross files: what callers pass into unannotated (or int-declared) parameters, what
helpers return (a tuple on one path, None on another), attributes written in one method and read
in another (here or in a subclass in another file)."""
