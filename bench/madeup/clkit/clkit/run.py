import torch
from torch.utils.data import DataLoader, Subset

from clkit.strategies import BalancedReplay, MaskedHead, Replay, evaluate


def split_by_class(dataset, classes_per_task):
    targets = torch.as_tensor(dataset.targets)
    tasks = []
    for start in range(0, int(targets.max()) + 1, classes_per_task):
        mask = (targets >= start) & (targets < start + classes_per_task)
        tasks.append(Subset(dataset, torch.nonzero(mask).flatten().tolist()))
    return tasks


def run(model, dataset, test_set, strategy="replay", device="cuda", classes_per_task=2):
    model = model.to(device)  # SYNC
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    cls = {"replay": Replay, "balanced": BalancedReplay, "masked": MaskedHead}[strategy]
    learner = cls(model, opt, device=device)
    tests = [DataLoader(t, batch_size=256) for t in split_by_class(test_set, classes_per_task)]
    results = []
    for task in split_by_class(dataset, classes_per_task):
        learner.train_experience(DataLoader(task, batch_size=32, shuffle=True))
        results.append(evaluate(model, tests, device))
    return results
