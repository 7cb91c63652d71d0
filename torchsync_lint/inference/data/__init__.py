"""Generated torch API facts (torch_api.json) and the generator that writes it (imports torch)."""
