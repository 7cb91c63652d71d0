"""One rule per ``tslNNN_*.py`` module; ``registry.all_rules`` discovers them. ``base`` holds the
``Rule`` class, ``claims`` reads which torch calls each rule says sync, modules starting with ``_``
hold shared helpers."""
