lib = None
torch = None
