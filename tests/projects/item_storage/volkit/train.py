import torch
from torch.utils.data import DataLoader, Dataset

from volkit.image import DeviceCache, Image, Subject
from volkit.transforms import Clamp, Compose, OneHot, ZNormalization


class SubjectsDataset(Dataset):
    def __init__(self, subjects, transform=None):
        self.subjects = subjects
        self.transform = transform

    def __len__(self):
        return len(self.subjects)

    def __getitem__(self, i):
        subject = self.subjects[i]
        if self.transform is not None:
            subject = self.transform(subject)
        return {name: image.data for name, image in subject.items()}


def train(model, paths, opt, device="cuda"):
    subjects = []
    for p in paths:
        image = Image(path=p)
        image.load()
        subjects.append(Subject(t1=image))
    loader = DataLoader(SubjectsDataset(subjects, Compose([ZNormalization(), Clamp(), OneHot()])), batch_size=1)
    cache = DeviceCache(8)
    for batch in loader:
        x = batch["t1"].to(device)  # error: TSL204
        loss = model(x).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(cache.hit_rate())
