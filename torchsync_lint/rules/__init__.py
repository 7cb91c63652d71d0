"""One rule per module; ``registry.all_rules`` discovers them. Modules starting with ``_`` hold
shared helpers, not rules."""
