"""What the rules ask about code: which names are tensors, where they live, and which code is hot.

Everything here is static: it reads LibCST trees and never imports torch.
"""
