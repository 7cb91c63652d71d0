"""Metric and logger factories: the metrics are built here, updated in module.py's training step."""

import torchmetrics
from torch.utils.tensorboard import SummaryWriter
from torchmetrics.classification import MulticlassAccuracy


def build_train_metrics(num_classes: int):
    return torchmetrics.MetricCollection([
        MulticlassAccuracy(num_classes=num_classes),
        torchmetrics.F1Score(task="multiclass", num_classes=num_classes, average="macro"),
    ])


def build_loss_tracker():
    return torchmetrics.MeanMetric()


def build_quiet_loss_tracker():
    return torchmetrics.MeanMetric(nan_strategy="disable")


def make_writer(log_dir: str):
    return SummaryWriter(log_dir)
