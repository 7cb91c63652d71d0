from asrkit.model import ConformerLite
from asrkit.train import Trainer
