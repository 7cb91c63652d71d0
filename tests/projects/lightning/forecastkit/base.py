# A library base class for its models: a LightningModule, so every subclass's step hooks get
# batches the Trainer already moved to the module's device.
import lightning.pytorch as pl


class BaseModel(pl.LightningModule):
    def log_loss(self, loss):
        self.log("train_loss", loss)
