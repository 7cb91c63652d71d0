class Dictionary:
    def __init__(self):
        self.items = {}

    def add_item(self, item: str) -> int:
        return len(self.items)

    @classmethod
    def load(cls, name: str) -> "Dictionary":
        return cls()
