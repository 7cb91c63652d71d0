import torch

from flowkit.trainer import Trainer


def test_train():
    model = torch.nn.Linear(2, 2)
    trainer = Trainer(model)
    assert trainer.device == "cpu"
