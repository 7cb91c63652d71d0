from dataclasses import dataclass, field


@dataclass
class TrainConfig:
    lr: float = 1e-3
    epochs: int = 2
    device: str = "cuda"
    log_every: int = 10
    clip: float = 1.0
    tags: list = field(default_factory=list)
