def move(batch, device):
    """Moves a nested batch; the training loop in loop.py passes it DataLoader batches."""
    if isinstance(batch, dict):
        return {k: move(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(move(v, device) for v in batch)
    return batch.to(device)  # error: TSL204
