"""Plain helpers over LibCST trees that every stage may use: the fast walk (``walk``), the parse
without re-validation (``parse``)."""
